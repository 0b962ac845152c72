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
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// LBRecord is a load balancer as stored: the API's view of it without the
// backend status, which belongs to the data plane and is never persisted.
type LBRecord struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	IP   string `json:"ip"`
	// IPv6 is its IPv6 address while its IPFamilies have IPv6.
	IPv6 string `json:"ipv6,omitempty"`
	api.LoadBalancerSpec
	CreatedAt time.Time `json:"createdAt"`
	// Octavia is the load balancer as OpenStack's Octavia shows it, for
	// one made through it; the spec is derived from it.
	Octavia *OctaviaLB `json:"octavia,omitempty"`
	// ELB is the load balancer as Elastic Load Balancing shows a classic
	// one, for one made through it; the spec is derived from it.
	ELB *ClassicLB `json:"elb,omitempty"`
	// NLB is the load balancer as Elastic Load Balancing v2 shows a
	// network one, for one made through it; the spec is derived from it.
	NLB *NetworkLB `json:"nlb,omitempty"`
}

// lBByNameLocked is the load balancer of that name, or nil.
func (s *Cloud) lBByNameLocked(name string) *LBRecord {
	for _, lb := range s.st.LoadBalancers {
		if lb.Name == name {
			return lb
		}
	}
	return nil
}

// lBByRefLocked resolves an admin reference: a name, else an ID.
func (s *Cloud) lBByRefLocked(ref string) *LBRecord {
	if lb := s.lBByNameLocked(ref); lb != nil {
		return lb
	}
	for _, lb := range s.st.LoadBalancers {
		if lb.ID == ref {
			return lb
		}
	}
	return nil
}

// AboutLB is the fault matcher of a call about the load balancer named
// name: a fault's Instance may give its name or, once it exists, its ID.
func (s *Cloud) AboutLB(name string) func(ref string) bool {
	return func(ref string) bool {
		if ref == name {
			return true
		}
		lb := s.lBByNameLocked(name)
		return lb != nil && lb.ID == ref
	}
}

// lBViewLocked is what the API answers about lb: a deep copy, so the
// answer cannot alias state, with the data plane's backend status.
func (s *Cloud) lBViewLocked(lb *LBRecord) api.LoadBalancer {
	spec := CopySpec(lb.LoadBalancerSpec)
	status := s.dp.status(lb.ID)
	if status == nil {
		status = make([]api.BackendStatus, 0, len(spec.Backends))
		for _, id := range spec.Backends {
			status = append(status, api.BackendStatus{Instance: id, LastError: "fakecloud is shutting down: the load balancer serves nothing"})
		}
	}
	out := api.LoadBalancer{Name: lb.Name, ID: lb.ID, IP: lb.IP, IPv6: lb.IPv6, LoadBalancerSpec: spec, BackendStatus: status, CreatedAt: lb.CreatedAt}
	switch {
	case lb.ELB != nil:
		out.Hostname = lb.ELB.DNSName
	case lb.NLB != nil:
		out.Hostname = lb.NLB.DNSName
	}
	return out
}

// CopySpec deep-copies spec, turning absent lists into empty ones so that
// the JSON has [] rather than null.
func CopySpec(spec api.LoadBalancerSpec) api.LoadBalancerSpec {
	out := spec
	out.Listeners = append([]api.Listener{}, spec.Listeners...)
	out.Backends = append([]string{}, spec.Backends...)
	out.SourceRanges = slices.Clone(spec.SourceRanges)
	out.IPFamilies = slices.Clone(spec.IPFamilies)
	out.Tags = maps.Clone(spec.Tags)
	return out
}

// ValidateName keeps names usable as one path segment and readable in
// logs.
func ValidateName(what, name string) error {
	if name == "" || len(name) > 253 {
		return fmt.Errorf("%s name must have 1 to 253 characters, not %d", what, len(name))
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return r == '/' || r < ' ' || r == 0x7f }); i >= 0 {
		return fmt.Errorf("%s name %q has a slash or control character at byte %d", what, name, i)
	}
	return nil
}

// ValidateLBSpec checks what can be checked without the state; backend
// instances are checked under the lock. Messages name the JSON field.
func ValidateLBSpec(spec api.LoadBalancerSpec) error {
	seen := map[listenerKey]int{}
	for i, l := range spec.Listeners {
		if l.Port < 1 || l.Port > 65535 {
			return fmt.Errorf("listeners[%d].port %d is not in 1-65535", i, l.Port)
		}
		if l.Protocol != api.ProtocolTCP && l.Protocol != api.ProtocolUDP {
			return fmt.Errorf("listeners[%d].protocol %q is not %s or %s", i, l.Protocol, api.ProtocolTCP, api.ProtocolUDP)
		}
		if l.NodePort < 0 || l.NodePort > 65535 {
			return fmt.Errorf("listeners[%d].nodePort %d is not in 0-65535 (0 sends to the listener's port)", i, l.NodePort)
		}
		k := listenerKey{port: l.Port, protocol: l.Protocol}
		if j, dup := seen[k]; dup {
			return fmt.Errorf("listeners[%d] repeats %s of listeners[%d]", i, k, j)
		}
		seen[k] = i
	}
	for i, id := range spec.Backends {
		if id == "" {
			return fmt.Errorf("backends[%d] is empty (give an instance ID)", i)
		}
		if j := slices.Index(spec.Backends[:i], id); j >= 0 {
			return fmt.Errorf("backends[%d] repeats %q of backends[%d]", i, id, j)
		}
	}
	if p := spec.HealthCheckNodePort; p < 0 || p > 65535 {
		return fmt.Errorf("healthCheckNodePort %d is not in 0-65535 (0 means no health check)", p)
	}
	for i, r := range spec.SourceRanges {
		if _, err := netip.ParsePrefix(r); err != nil {
			return fmt.Errorf("sourceRanges[%d] %q is not a CIDR such as 127.0.0.1/32", i, r)
		}
	}
	if a := spec.ClientAffinitySeconds; a < 0 || a > MaxClientAffinitySeconds {
		return fmt.Errorf("clientAffinitySeconds %d is not in 0-%d (0 means no affinity)", a, MaxClientAffinitySeconds)
	}
	if v := spec.ProxyProtocol; v < 0 || v > 2 {
		return fmt.Errorf("proxyProtocol %d is not 0, 1 or 2 (0: none; 1 and 2: the PROXY protocol version)", v)
	}
	for i, f := range spec.IPFamilies {
		if f != api.FamilyIPv4 && f != api.FamilyIPv6 {
			return fmt.Errorf("ipFamilies[%d] %q is not %s or %s", i, f, api.FamilyIPv4, api.FamilyIPv6)
		}
		if j := slices.Index(spec.IPFamilies[:i], f); j >= 0 {
			return fmt.Errorf("ipFamilies[%d] repeats %q of ipFamilies[%d]", i, f, j)
		}
	}
	if len(spec.IPFamilies) > 0 && !slices.Contains(spec.IPFamilies, api.FamilyIPv4) {
		return fmt.Errorf("ipFamilies %v: fakecloud's load balancers serve IPv4, or IPv4 and IPv6 (give [IPv4] or [IPv4 IPv6])", spec.IPFamilies)
	}
	return nil
}

// wantsIPv6 says whether a load balancer of spec has an IPv6 address.
func wantsIPv6(spec api.LoadBalancerSpec) bool {
	return slices.Contains(spec.IPFamilies, api.FamilyIPv6)
}

// MaxClientAffinitySeconds is the longest client affinity, a day: what
// Kubernetes allows a Service's sessionAffinityConfig.
const MaxClientAffinitySeconds = 86400

// checkLoadBalancers vets the load balancers of a state file.
func checkLoadBalancers(lbs []*LBRecord) error {
	names, ids := map[string]bool{}, map[string]bool{}
	for i, lb := range lbs {
		switch {
		case lb == nil || lb.Name == "" || lb.ID == "":
			return fmt.Errorf("load balancer %d has no name or id", i+1)
		case names[lb.Name] || ids[lb.ID]:
			return fmt.Errorf("load balancer %d repeats the name %q or the id %s", i+1, lb.Name, lb.ID)
		}
		names[lb.Name], ids[lb.ID] = true, true
		if _, err := netip.ParseAddr(lb.IP); err != nil {
			return fmt.Errorf("load balancer %q: ip: %v", lb.Name, err)
		}
		if a, err := netip.ParseAddr(lb.IPv6); lb.IPv6 != "" && (err != nil || !a.Is6()) {
			return fmt.Errorf("load balancer %q: ipv6 %q is not an IPv6 address", lb.Name, lb.IPv6)
		}
		if err := ValidateLBSpec(lb.LoadBalancerSpec); err != nil {
			return fmt.Errorf("load balancer %q: %v", lb.Name, err)
		}
	}
	return nil
}

// backendsLocked tells the data plane where each backend instance is and
// whether it can serve at all.
func (s *Cloud) backendsLocked(ids []string) []backend {
	out := make([]backend, 0, len(ids))
	for _, id := range ids {
		b := backend{instance: id}
		inst := s.instanceByIDLocked(id)
		if inst != nil {
			b.addr = FirstInternalIP(inst)
		}
		switch {
		case inst == nil:
			b.problem = "instance not found"
		case inst.State != api.StateRunning:
			b.problem = "instance is " + string(inst.State)
		case !b.addr.IsValid():
			b.problem = "instance has no InternalIP address"
		case !mayDial(b.addr, s.dp.nets):
			// The network rule of the whole harness: traffic stays on
			// this machine, whatever addresses a test gives instances.
			b.problem = fmt.Sprintf("InternalIP %s is not a loopback address; fakecloud forwards only within 127.0.0.0/8, ::1 and --backend-cidr networks", b.addr)
		}
		out = append(out, b)
	}
	return out
}

// FirstInternalIP is the address a load balancer sends an instance's
// traffic to; invalid when it has none.
func FirstInternalIP(inst *api.Instance) netip.Addr {
	for _, a := range inst.Addresses {
		if a.Type == api.AddressInternalIP {
			if ip, err := netip.ParseAddr(a.Address); err == nil {
				return ip.Unmap()
			}
		}
	}
	return netip.Addr{}
}

// refreshBackendsLocked tells the data plane that instance id changed state.
func (s *Cloud) refreshBackendsLocked(id string) {
	for _, lb := range s.st.LoadBalancers {
		if slices.Contains(lb.Backends, id) {
			s.dp.setBackends(lb.ID, s.backendsLocked(lb.Backends))
		}
	}
}

// newLBIDLocked is a new load balancer ID no load balancer has.
func (s *Cloud) newLBIDLocked() string {
	for {
		b := make([]byte, 6)
		rand.Read(b) // never fails, per crypto/rand
		id := "lb-" + hex.EncodeToString(b)
		if s.lBByRefLocked(id) == nil {
			return id
		}
	}
}

// allocateLBIPLocked returns the first free address after the last one
// handed out, wrapping around, so that a deleted load balancer's IP is
// reused only once the rest of the pool has been: a client still talking to
// the old one should not reach a stranger.
func (s *Cloud) allocateLBIPLocked() (netip.Addr, error) {
	return s.allocateFromLocked(s.lbPool, s.st.LastLBIP, func(lb *LBRecord) string { return lb.IP })
}

// allocateLBIPv6Locked is allocateLBIPLocked of the IPv6 range, which a
// cloud without one (no --lb-cidr-v6) refuses, as a subnet without an
// IPv6 CIDR would.
func (s *Cloud) allocateLBIPv6Locked() (netip.Addr, error) {
	if !s.lbPool6.IsValid() {
		return netip.Addr{}, Errorf(KindInvalid, "ipFamilies: IPv6 asked, but this cloud has no IPv6 load balancer range (fakecloud --lb-cidr-v6)")
	}
	a, err := s.allocateFromLocked(s.lbPool6, s.st.LastLBIPv6, func(lb *LBRecord) string { return lb.IPv6 })
	if err != nil {
		return a, &Error{Kind: KindConflict, Err: err}
	}
	return a, nil
}

// allocateFromLocked hands out the next free address of pool after last;
// addr is a load balancer's address of the pool's family.
func (s *Cloud) allocateFromLocked(pool netip.Prefix, last string, addr func(*LBRecord) string) (netip.Addr, error) {
	inUse := map[netip.Addr]bool{}
	for _, lb := range s.st.LoadBalancers {
		if ip, err := netip.ParseAddr(addr(lb)); err == nil {
			inUse[ip] = true
		}
	}
	start := pool.Addr()
	if l, err := netip.ParseAddr(last); err == nil && pool.Contains(l) {
		start = l
	}
	for a := start; ; {
		a = a.Next()
		if !a.IsValid() || !pool.Contains(a) {
			a = pool.Addr()
		}
		if usableLBAddr(pool, a) && !inUse[a] {
			return a, nil
		}
		if a == start {
			return netip.Addr{}, fmt.Errorf("load balancer address pool %s is exhausted", pool)
		}
	}
}

// usableLBAddr rules out the network and broadcast addresses and, in IPv4,
// any address ending in .0, which some clients take for a network.
func usableLBAddr(pool netip.Prefix, a netip.Addr) bool {
	if a.Is4() {
		if a.As4()[3] == 0 {
			return false
		}
		if pool.Bits() < 31 && !pool.Contains(a.Next()) {
			return false
		}
		return a != pool.Addr() || pool.Bits() >= 31
	}
	return a != pool.Addr() || pool.Bits() >= 127
}

// openLocked opens lb's listeners. A new load balancer whose address has a
// port taken on this machine (another fakecloud's, as when clusters run
// side by side and their pools meet) moves to the next free address
// rather than failing: its address is fakecloud's to choose.
func (s *Cloud) openLocked(lb *LBRecord, isNew bool) error {
	const tries = 16
	for i := 0; ; i++ {
		err := s.dp.apply(lb, s.backendsLocked(lb.Backends))
		if err == nil || !isNew || !errors.Is(err, syscall.EADDRINUSE) || i == tries {
			return err
		}
		s.st.LastLBIP = lb.IP
		ip, aerr := s.allocateLBIPLocked()
		if aerr != nil {
			return err
		}
		lb.IP = ip.String()
	}
}

// closeLBLocked closes a load balancer's listeners and connections and
// stops its health checks, for a change that deletes it from the state.
func (s *Cloud) closeLBLocked(id string) { s.dp.remove(id) }

// AllowsAll reports whether a source range (Octavia's allowed_cidrs,
// EC2's ingress CIDRs) admits every address:
// what the CCM sends for a Service without source ranges, and what the
// native spec says with none.
func AllowsAll(cidr string) bool {
	p, err := netip.ParsePrefix(cidr)
	return err == nil && p.Bits() == 0
}

// LoadBalancers are the API's views of every load balancer, in creation
// order.
func (s *Cloud) LoadBalancers() []api.LoadBalancer {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]api.LoadBalancer, 0, len(s.st.LoadBalancers))
	for _, lb := range s.st.LoadBalancers {
		out = append(out, s.lBViewLocked(lb))
	}
	return out
}

// LoadBalancer is the API's view of the load balancer named name.
func (s *Cloud) LoadBalancer(name string) (api.LoadBalancer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.viewOf(s.lBByNameLocked(name))
}

// HasLoadBalancer says whether a load balancer is named name.
func (s *Cloud) HasLoadBalancer(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lBByNameLocked(name) != nil
}

// LoadBalancerByRef is the API's view of the load balancer an admin
// reference names: a name, else an ID.
func (s *Cloud) LoadBalancerByRef(ref string) (api.LoadBalancer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.viewOf(s.lBByRefLocked(ref))
}

func (s *Cloud) viewOf(lb *LBRecord) (api.LoadBalancer, bool) {
	if lb == nil {
		return api.LoadBalancer{}, false
	}
	return s.lBViewLocked(lb), true
}

// AboutAnyLB is the fault matcher of a listing of load balancers: a
// fault's Instance may give any one's name or ID.
func (s *Cloud) AboutAnyLB() func(ref string) bool {
	return func(ref string) bool { return s.lBByRefLocked(ref) != nil }
}

// EnsureLoadBalancer creates the load balancer named name with spec (valid,
// see ValidateLBSpec), or replaces the spec of the one of that name, keeping
// its ID and IP; with mustExist it only replaces. f is the fault that fired
// on the call, if any: an ignore fault keeps what it names as it was. The
// sockets change first: if a listener cannot be opened, nothing changes
// and the caller hears why.
func (s *Cloud) EnsureLoadBalancer(name string, spec api.LoadBalancerSpec, mustExist bool, f *api.Fault) (out api.LoadBalancer, created bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, id := range spec.Backends {
		if s.instanceByIDLocked(id) == nil {
			return out, false, Errorf(KindInvalid, "backends[%d]: instance %q not found", i, id)
		}
	}
	existing := s.lBByNameLocked(name)
	if existing == nil && mustExist {
		// Deleted since the caller looked: it replaces only one that
		// exists, so that an update of the backends racing the load
		// balancer's deletion cannot bring it back.
		return out, false, Errorf(KindPrecondition, "load balancer %q not found (If-Match: * replaces only one that exists)", name)
	}
	if existing != nil && (existing.Octavia != nil || existing.ELB != nil || existing.NLB != nil) {
		// Its spec is derived from its Octavia or ELB objects, which a
		// native change would leave saying something else.
		return out, false, Errorf(KindConflict, "load balancer %q was made through another dialect's API (OpenStack's Octavia or AWS's Elastic Load Balancing): change it there", name)
	}
	var next LBRecord
	if existing != nil {
		next = *existing
	} else {
		ip, err := s.allocateLBIPLocked()
		if err != nil {
			return out, false, &Error{Kind: KindConflict, Err: err}
		}
		next = LBRecord{Name: name, ID: s.newLBIDLocked(), IP: ip.String(), CreatedAt: time.Now().UTC()}
	}
	before := CopySpec(next.LoadBalancerSpec)
	next.LoadBalancerSpec = CopySpec(spec)
	Ignore(f, &before, &next.LoadBalancerSpec)
	switch {
	case !wantsIPv6(next.LoadBalancerSpec):
		next.IPv6 = ""
	case next.IPv6 == "":
		ip, err := s.allocateLBIPv6Locked()
		if err != nil {
			return out, false, err
		}
		next.IPv6 = ip.String()
	}
	if err := s.openLocked(&next, existing == nil); err != nil {
		return out, false, dataplaneFailed(err)
	}
	rec := existing
	if rec == nil {
		rec = &next
		s.st.LoadBalancers = append(s.st.LoadBalancers, rec)
		s.st.LastLBIP = rec.IP
	} else {
		*rec = next
	}
	if rec.IPv6 != "" {
		s.st.LastLBIPv6 = rec.IPv6
	}
	if err := s.saveLocked(); err != nil {
		return out, false, saveFailed(err)
	}
	return s.lBViewLocked(rec), existing == nil, nil
}

// DeleteLoadBalancer closes the load balancer named name and forgets it.
func (s *Cloud) DeleteLoadBalancer(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.st.LoadBalancers, func(lb *LBRecord) bool { return lb.Name == name })
	if i < 0 {
		return Errorf(KindNotFound, "load balancer %q not found", name)
	}
	s.closeLBLocked(s.st.LoadBalancers[i].ID)
	s.st.LoadBalancers = slices.Delete(s.st.LoadBalancers, i, i+1)
	return saveFailed(s.saveLocked())
}

// LBAddressByDNSName is the address of the load balancer whose DNS name
// (an ELB's or an NLB's) is name, case-insensitively, as DNS compares.
func (s *Cloud) LBAddressByDNSName(name string) (netip.Addr, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, lb := range s.st.LoadBalancers {
		var dns string
		switch {
		case lb.ELB != nil:
			dns = lb.ELB.DNSName
		case lb.NLB != nil:
			dns = lb.NLB.DNSName
		}
		if dns != "" && strings.EqualFold(dns, name) {
			a, err := netip.ParseAddr(lb.IP)
			return a, err == nil
		}
	}
	return netip.Addr{}, false
}
