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

// Package lbroute makes a range of load balancer IPs this machine's own
// without giving an interface each address: a route of type local for the
// range on the loopback interface (ip route add local CIDR dev lo), which
// lets a socket bind any address in it. Unlike 127.0.0.0/8, such a range
// is reached from containers too (a kind node's pods, through the node's
// default route to this machine), as a cloud's load balancer is reached
// from inside the cluster.
package lbroute

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Local says why traffic to addr would not stay on this machine, or nil:
// the kernel's route to it must be a local one (an interface's address,
// loopback, or a range Add routed here).
func Local(addr netip.Addr) error {
	routes, err := netlink.RouteGet(addr.AsSlice())
	if err != nil {
		return err
	}
	for _, r := range routes {
		if r.Type == unix.RTN_LOCAL {
			return nil
		}
	}
	return errors.New("its route leads off this machine")
}

// Allowed says why prefix may not be a range of load balancer IPs: it
// must be loopback or private, since a local route for a public range
// would take this machine's traffic to the real addresses.
func Allowed(prefix netip.Prefix) error {
	for _, r := range []string{"127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "::1/128", "fc00::/7"} {
		r := netip.MustParsePrefix(r)
		if r.Contains(prefix.Addr()) && prefix.Bits() >= r.Bits() {
			return nil
		}
	}
	return errors.New("neither loopback nor a private range")
}

// Add routes prefix to this machine and returns what removes the route.
// A route left by a process that was killed is replaced, not refused: the
// range is the caller's (the harness reserves it for one cloud at a time).
func Add(prefix netip.Prefix) (remove func() error, err error) {
	prefix = prefix.Masked()
	if err := Allowed(prefix); err != nil {
		return nil, fmt.Errorf("load balancer CIDR %s is not this machine's to route (%v)", prefix, err)
	}
	if prefix.Addr().IsLoopback() {
		return func() error { return nil }, nil // loopback is local already
	}
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return nil, fmt.Errorf("routing load balancer range %s to this machine: the loopback interface: %w", prefix, err)
	}
	family := netlink.FAMILY_V4
	if prefix.Addr().Is6() {
		family = netlink.FAMILY_V6
	}
	route := &netlink.Route{
		LinkIndex: lo.Attrs().Index,
		Dst:       &net.IPNet{IP: prefix.Addr().AsSlice(), Mask: net.CIDRMask(prefix.Bits(), prefix.Addr().BitLen())},
		Type:      unix.RTN_LOCAL,
		Table:     unix.RT_TABLE_LOCAL,
		Scope:     netlink.SCOPE_HOST,
		Family:    family,
	}
	if err := netlink.RouteReplace(route); err != nil {
		if errors.Is(err, syscall.EPERM) {
			return nil, fmt.Errorf("routing load balancer range %s to this machine: %w (run as root, or with CAP_NET_ADMIN, or give a range of 127.0.0.0/8 without --lb-route)", prefix, err)
		}
		return nil, fmt.Errorf("routing load balancer range %s to this machine: %w", prefix, err)
	}
	return func() error {
		if err := netlink.RouteDel(route); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("removing the route of load balancer range %s: %w", prefix, err)
		}
		return nil
	}, nil
}
