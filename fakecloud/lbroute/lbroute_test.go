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

package lbroute

import (
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
)

// TestAdd routes a private range here, binds an address in it, and
// removes the route: the address is then no longer this machine's.
func TestAdd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("routing needs root")
	}
	prefix := netip.MustParsePrefix("10.255.77.0/24")
	bind := func() error {
		l, err := net.Listen("tcp", "10.255.77.7:0")
		if err == nil {
			l.Close()
		}
		return err
	}
	if bind() == nil {
		t.Fatalf("10.255.77.7 is this machine's before the route: the test cannot tell")
	}
	if _, err := Add(netip.MustParsePrefix("192.0.2.0/24")); err == nil || !strings.Contains(err.Error(), "neither loopback nor a private range") {
		t.Fatalf("routing a public range: %v, want a refusal", err)
	}
	remove, err := Add(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := bind(); err != nil {
		remove()
		t.Fatalf("with the route, binding 10.255.77.7: %v", err)
	}
	// A second Add (a killed process's route left behind) is no error.
	again, err := Add(prefix)
	if err != nil {
		remove()
		t.Fatalf("adding the route again: %v", err)
	}
	if err := again(); err != nil {
		t.Fatal(err)
	}
	if err := remove(); err != nil {
		t.Fatalf("removing a route removed already: %v", err)
	}
	if bind() == nil {
		t.Fatalf("10.255.77.7 is still this machine's after the route's removal")
	}
}
