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
	"context"
	"net"
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

// A load balancer that keeps its clients' addresses can bind only this
// machine's: a client of another (a kind pod, masqueraded to its node's
// address) still reaches the backend, from fakecloud's own address, rather
// than being reset.
func TestDialKeepsOnlyThisMachinesClients(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	seen := make(chan netip.Addr, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			seen <- c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
			c.Close()
		}
	}()
	var local netip.Addr
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is4() && !p.Addr().IsLoopback() {
				local = p.Addr()
				break
			}
		}
	}
	foreign := netip.MustParseAddr("192.0.2.7")
	for _, tc := range []struct {
		name string
		keep bool
		src  netip.Addr
		want func(netip.Addr) bool
	}{
		{"kept, this machine's", true, local, func(a netip.Addr) bool { return a == local }},
		{"kept, another machine's", true, foreign, func(a netip.Addr) bool { return a.IsLoopback() }},
		{"proxied", false, local, func(a netip.Addr) bool { return a.IsLoopback() }},
	} {
		if !tc.src.IsValid() {
			t.Logf("%s: this machine has no IPv4 address off loopback", tc.name)
			continue
		}
		c, err := (&lbConfig{keepClient: tc.keep}).dial(context.Background(), tc.src, nil, "tcp", ln.Addr().String())
		if err != nil {
			t.Errorf("%s: client %s: %v", tc.name, tc.src, err)
			continue
		}
		c.Close()
		if got := <-seen; !tc.want(got) {
			t.Errorf("%s: client %s: the backend saw %s", tc.name, tc.src, got)
		}
	}
}
