/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package model

import (
	"net/netip"
	"testing"
	"time"
)

// The data plane's dialer itself refuses what is neither loopback nor a
// backend network, whatever a health check or a relay asks of it (package
// server's TestLBNonLoopbackBackendIsNeverDialed and
// TestLBBackendCIDRAdmitsItsNetworkOnly check the same through the API).
func TestBackendDialer(t *testing.T) {
	if err := backendDialer(time.Second, nil).Control("tcp", "192.0.2.10:80", nil); err == nil {
		t.Error("the data plane's dialer would connect off loopback")
	}
	d := backendDialer(time.Second, []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")})
	if err := d.Control("tcp", "192.0.2.10:80", nil); err != nil {
		t.Errorf("the dialer refuses the backend network: %v", err)
	}
	if err := d.Control("tcp", "198.51.100.10:80", nil); err == nil {
		t.Error("the dialer would connect outside the backend network")
	}
}
