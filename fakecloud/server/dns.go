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

package server

import (
	"errors"
	"net"
	"net/netip"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// ServeDNS answers DNS queries on pc until it is closed: the A (or AAAA)
// record of each load balancer's DNS name, as the cloud's DNS answers for
// AWS's Elastic Load Balancing, so that a client that has only the name
// (a Service's ingress hostname) finds the address as it would in the
// real cloud. Any other name is NXDOMAIN; fakecloud is authoritative for
// its own names only and recurses for no one.
func (s *Server) ServeDNS(pc net.PacketConn) error {
	buf := make([]byte, 512)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		if out, ok := s.dnsAnswer(buf[:n]); ok {
			// A lost answer is retried by the client, as over any UDP.
			_, _ = pc.WriteTo(out, from)
		}
	}
}

// dnsAnswer is the reply to one query; ok is false for what is no query
// at all, which is dropped as a DNS server drops garbage.
func (s *Server) dnsAnswer(query []byte) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil || h.Response {
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		return nil, false
	}
	reply := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired}
	b := dnsmessage.NewBuilder(nil, reply)
	b.EnableCompression()
	addr, known := s.lbAddress(strings.TrimSuffix(strings.ToLower(q.Name.String()), "."))
	if !known {
		reply.RCode = dnsmessage.RCodeNameError
		b = dnsmessage.NewBuilder(nil, reply)
	}
	if err := b.StartQuestions(); err != nil {
		return nil, false
	}
	if err := b.Question(q); err != nil {
		return nil, false
	}
	if err := b.StartAnswers(); err != nil {
		return nil, false
	}
	// A name that is known but of the other family answers with no
	// record (NODATA), as a real zone does.
	rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
	switch {
	case known && q.Type == dnsmessage.TypeA && addr.Is4():
		if err := b.AResource(rh, dnsmessage.AResource{A: addr.As4()}); err != nil {
			return nil, false
		}
	case known && q.Type == dnsmessage.TypeAAAA && addr.Is6():
		if err := b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: addr.As16()}); err != nil {
			return nil, false
		}
	}
	out, err := b.Finish()
	return out, err == nil
}

// lbAddress is the address of the load balancer whose DNS name is name.
func (s *Server) lbAddress(name string) (netip.Addr, bool) { return s.LBAddressByDNSName(name) }
