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
	"bytes"
	"net/netip"
	"testing"
)

// The headers of an IPv6 load balancer, which the data-plane tests of
// package server (TestLBProxyProtocol, IPv4 only) cannot reach; and a
// mixed pair, which goes out as IPv6.
func TestProxyHeader(t *testing.T) {
	client, listener := netip.MustParseAddrPort("[::1]:40000"), netip.MustParseAddrPort("[::1]:443")
	if h, err := proxyHeader(0, client, listener); err != nil || h != nil {
		t.Errorf("version 0: %q, %v; want no header", h, err)
	}
	if h, _ := proxyHeader(1, client, listener); string(h) != "PROXY TCP6 ::1 ::1 40000 443\r\n" {
		t.Errorf("version 1 over IPv6: %q", h)
	}
	want := []byte("\r\n\r\n\x00\r\nQUIT\n\x21\x21\x00\x24")
	want = append(want, netip.IPv6Loopback().AsSlice()...)
	want = append(want, netip.IPv6Loopback().AsSlice()...)
	want = append(want, 0x9c, 0x40, 0x01, 0xbb)
	if h, _ := proxyHeader(2, client, listener); !bytes.Equal(h, want) {
		t.Errorf("version 2 over IPv6:\n% x\nwant\n% x", h, want)
	}
	if h, _ := proxyHeader(1, netip.MustParseAddrPort("127.0.0.1:1"), listener); string(h) != "PROXY TCP6 ::ffff:127.0.0.1 ::1 1 443\r\n" {
		t.Errorf("version 1, an IPv4 client of an IPv6 listener: %q", h)
	}
	if _, err := proxyHeader(3, client, listener); err == nil {
		t.Error("version 3 made a header")
	}
}
