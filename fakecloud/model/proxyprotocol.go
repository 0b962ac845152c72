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
	"encoding/binary"
	"fmt"
	"net/netip"
)

// The PROXY protocol (https://www.haproxy.org/download/2.9/doc/proxy-protocol.txt)
// is how a proxying load balancer tells a backend who the client was: the
// first bytes of each connection to the backend name the client's address
// and port and the load balancer's, then the client's own bytes follow.
// fakecloud sends it as HAProxy's send-proxy (version 1) and send-proxy-v2
// (version 2) do, the same header an Octavia amphora sends for a PROXY or
// PROXYV2 pool, so a backend that expects it can be tested for real.

// proxyV2Signature opens every version 2 header; it cannot begin an
// HTTP request or a version 1 header, so a backend can tell them apart.
var proxyV2Signature = [12]byte{0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A}

// proxyHeader is the PROXY protocol header of version (1 or 2) for a TCP
// connection from client to listener, as the listener saw them; nil for
// version 0. Both addresses go out in one family: IPv4 when both are (an
// IPv4 load balancer's socket is AF_INET, so its clients are), else IPv6,
// an IPv4 address then written as IPv4-mapped, as the protocol asks.
func proxyHeader(version int32, client, listener netip.AddrPort) ([]byte, error) {
	src, dst := client.Addr().Unmap(), listener.Addr().Unmap()
	v4 := src.Is4() && dst.Is4()
	if !v4 {
		src, dst = netip.AddrFrom16(src.As16()), netip.AddrFrom16(dst.As16())
	}
	switch version {
	case 0:
		return nil, nil
	case 1:
		family := "TCP6"
		if v4 {
			family = "TCP4"
		}
		return fmt.Appendf(nil, "PROXY %s %s %s %d %d\r\n", family, src, dst, client.Port(), listener.Port()), nil
	case 2:
		// Version 2, command PROXY; then TCP over IPv4 (0x11) or IPv6
		// (0x21), and the length of the addresses and ports that follow.
		h := append(append([]byte(nil), proxyV2Signature[:]...), 0x21)
		if v4 {
			h = append(h, 0x11)
			h = binary.BigEndian.AppendUint16(h, 4+4+2+2)
		} else {
			h = append(h, 0x21)
			h = binary.BigEndian.AppendUint16(h, 16+16+2+2)
		}
		h = append(h, src.AsSlice()...)
		h = append(h, dst.AsSlice()...)
		h = binary.BigEndian.AppendUint16(h, client.Port())
		return binary.BigEndian.AppendUint16(h, listener.Port()), nil
	}
	return nil, fmt.Errorf("PROXY protocol version %d is not 0, 1 or 2", version)
}
