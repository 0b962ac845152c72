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
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// lbRecord is a load balancer as stored: the API's view of it without the
// backend status, which belongs to the data plane and is never persisted.
type lbRecord struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	IP   string `json:"ip"`
	api.LoadBalancerSpec
	CreatedAt time.Time `json:"createdAt"`
	// Octavia is the load balancer as OpenStack's Octavia shows it, for
	// one made through it; the spec is derived from it.
	Octavia *octaviaLB `json:"octavia,omitempty"`
	// ELB is the load balancer as Elastic Load Balancing shows a classic
	// one, for one made through it; the spec is derived from it.
	ELB *elbLB `json:"elb,omitempty"`
	// NLB is the load balancer as Elastic Load Balancing v2 shows a
	// network one, for one made through it; the spec is derived from it.
	NLB *nlbLB `json:"nlb,omitempty"`
}

func (s *Server) lbByNameLocked(name string) *lbRecord {
	for _, lb := range s.st.LoadBalancers {
		if lb.Name == name {
			return lb
		}
	}
	return nil
}

// lbByRefLocked resolves an admin reference: a name, else an ID.
func (s *Server) lbByRefLocked(ref string) *lbRecord {
	if lb := s.lbByNameLocked(ref); lb != nil {
		return lb
	}
	for _, lb := range s.st.LoadBalancers {
		if lb.ID == ref {
			return lb
		}
	}
	return nil
}

// aboutLB is the fault matcher of a call about the load balancer named
// name: a fault's Instance may give its name or, once it exists, its ID.
func (s *Server) aboutLB(name string) func(ref string) bool {
	return func(ref string) bool {
		if ref == name {
			return true
		}
		lb := s.lbByNameLocked(name)
		return lb != nil && lb.ID == ref
	}
}

// lbViewLocked is what the API answers about lb: a deep copy, so the
// answer cannot alias state, with the data plane's backend status.
func (s *Server) lbViewLocked(lb *lbRecord) api.LoadBalancer {
	spec := copySpec(lb.LoadBalancerSpec)
	status := s.dp.status(lb.ID)
	if status == nil {
		status = make([]api.BackendStatus, 0, len(spec.Backends))
		for _, id := range spec.Backends {
			status = append(status, api.BackendStatus{Instance: id, LastError: "fakecloud is shutting down: the load balancer serves nothing"})
		}
	}
	out := api.LoadBalancer{Name: lb.Name, ID: lb.ID, IP: lb.IP, LoadBalancerSpec: spec, BackendStatus: status, CreatedAt: lb.CreatedAt}
	switch {
	case lb.ELB != nil:
		out.Hostname = lb.ELB.DNSName
	case lb.NLB != nil:
		out.Hostname = lb.NLB.DNSName
	}
	return out
}

// copySpec deep-copies spec, turning absent lists into empty ones so that
// the JSON has [] rather than null.
func copySpec(spec api.LoadBalancerSpec) api.LoadBalancerSpec {
	out := spec
	out.Listeners = append([]api.Listener{}, spec.Listeners...)
	out.Backends = append([]string{}, spec.Backends...)
	out.SourceRanges = slices.Clone(spec.SourceRanges)
	out.Tags = maps.Clone(spec.Tags)
	return out
}

func lbNotFound(w http.ResponseWriter, ref string) {
	writeError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("load balancer %q not found", ref))
}

// validateName keeps names usable as one path segment and readable in
// logs.
func validateName(what, name string) error {
	if name == "" || len(name) > 253 {
		return fmt.Errorf("%s name must have 1 to 253 characters, not %d", what, len(name))
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return r == '/' || r < ' ' || r == 0x7f }); i >= 0 {
		return fmt.Errorf("%s name %q has a slash or control character at byte %d", what, name, i)
	}
	return nil
}

// validateLBSpec checks what can be checked without the state; backend
// instances are checked under the lock. Messages name the JSON field.
func validateLBSpec(spec api.LoadBalancerSpec) error {
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
	return nil
}

// checkLoadBalancers vets the load balancers of a state file.
func checkLoadBalancers(lbs []*lbRecord) error {
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
		if err := validateLBSpec(lb.LoadBalancerSpec); err != nil {
			return fmt.Errorf("load balancer %q: %v", lb.Name, err)
		}
	}
	return nil
}

// backendsLocked tells the data plane where each backend instance is and
// whether it can serve at all.
func (s *Server) backendsLocked(ids []string) []backend {
	out := make([]backend, 0, len(ids))
	for _, id := range ids {
		b := backend{instance: id}
		inst := s.instanceByIDLocked(id)
		if inst != nil {
			b.addr = firstInternalIP(inst)
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

func firstInternalIP(inst *api.Instance) netip.Addr {
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
func (s *Server) refreshBackendsLocked(id string) {
	for _, lb := range s.st.LoadBalancers {
		if slices.Contains(lb.Backends, id) {
			s.dp.setBackends(lb.ID, s.backendsLocked(lb.Backends))
		}
	}
}

func (s *Server) newLBIDLocked() string {
	for {
		b := make([]byte, 6)
		rand.Read(b) // never fails, per crypto/rand
		id := "lb-" + hex.EncodeToString(b)
		if s.lbByRefLocked(id) == nil {
			return id
		}
	}
}

// allocateLBIPLocked returns the first free address after the last one
// handed out, wrapping around, so that a deleted load balancer's IP is
// reused only once the rest of the pool has been: a client still talking to
// the old one should not reach a stranger.
func (s *Server) allocateLBIPLocked() (netip.Addr, error) {
	pool := s.lbPool
	inUse := map[netip.Addr]bool{}
	for _, lb := range s.st.LoadBalancers {
		if ip, err := netip.ParseAddr(lb.IP); err == nil {
			inUse[ip] = true
		}
	}
	start := pool.Addr()
	if l, err := netip.ParseAddr(s.st.LastLBIP); err == nil && pool.Contains(l) {
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

// Cloud API.

func (s *Server) listLoadBalancers(w http.ResponseWriter, r *http.Request, c *call) {
	f, ok := s.applyFault(w, r, c, api.OpListLoadBalancers, func(ref string) bool {
		return s.lbByRefLocked(ref) != nil
	})
	if !ok {
		return
	}
	s.mu.Lock()
	out := make([]api.LoadBalancer, 0, len(s.st.LoadBalancers))
	for _, lb := range s.st.LoadBalancers {
		out = append(out, s.lbViewLocked(lb))
	}
	s.mu.Unlock()
	for i := range out {
		corruptLB(f, &out[i])
	}
	writeJSON(w, http.StatusOK, api.LoadBalancerList{LoadBalancers: out})
}

func (s *Server) getLoadBalancer(w http.ResponseWriter, r *http.Request, c *call) {
	name := r.PathValue("name")
	c.instance = name
	f, ok := s.applyFault(w, r, c, api.OpGetLoadBalancer, s.aboutLB(name))
	if !ok {
		return
	}
	s.mu.Lock()
	lb := s.lbByNameLocked(name)
	var out api.LoadBalancer
	if lb != nil {
		out = s.lbViewLocked(lb)
	}
	s.mu.Unlock()
	if lb == nil {
		lbNotFound(w, name)
		return
	}
	corruptLB(f, &out)
	writeJSON(w, http.StatusOK, out)
}

// ensureLoadBalancer creates the load balancer or replaces its spec,
// keeping its ID and IP. The sockets change first: if a listener cannot be
// opened, nothing changes and the caller hears why.
func (s *Server) ensureLoadBalancer(w http.ResponseWriter, r *http.Request, c *call) {
	name := r.PathValue("name")
	c.instance = name
	var spec api.LoadBalancerSpec
	if !decodeBody(w, r, &spec) {
		return
	}
	// A replace of one that does not exist fails its precondition before
	// it is an operation: faults count, and act on, operations that
	// proceed (a fault "after the first" must not be spent on it).
	if r.Header.Get("If-Match") == "*" && !s.lbExists(name) {
		lbPreconditionFailed(w, name)
		return
	}
	f, ok := s.applyFault(w, r, c, api.OpEnsureLoadBalancer, s.aboutLB(name))
	if !ok {
		return
	}
	if err := validateName("load balancer", name); err != nil {
		writeError(w, http.StatusBadRequest, api.CodeInvalid, err.Error())
		return
	}
	if err := validateLBSpec(spec); err != nil {
		writeError(w, http.StatusBadRequest, api.CodeInvalid, err.Error())
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	for i, id := range spec.Backends {
		if s.instanceByIDLocked(id) == nil {
			writeError(w, http.StatusBadRequest, api.CodeInvalid, fmt.Sprintf("backends[%d]: instance %q not found", i, id))
			return
		}
	}
	existing := s.lbByNameLocked(name)
	if existing == nil && r.Header.Get("If-Match") == "*" {
		// Deleted since the check above: the caller replaces only one
		// that exists, so that an update of the backends racing the load
		// balancer's deletion cannot bring it back.
		lbPreconditionFailed(w, name)
		return
	}
	if existing != nil && (existing.Octavia != nil || existing.ELB != nil || existing.NLB != nil) {
		// Its spec is derived from its Octavia or ELB objects, which a
		// native change would leave saying something else.
		writeError(w, http.StatusConflict, api.CodeConflict, fmt.Sprintf("load balancer %q was made through another dialect's API (OpenStack's Octavia or AWS's Elastic Load Balancing): change it there", name))
		return
	}
	status := http.StatusOK
	var next lbRecord
	if existing != nil {
		next = *existing
	} else {
		ip, err := s.allocateLBIPLocked()
		if err != nil {
			writeError(w, http.StatusConflict, api.CodeConflict, err.Error())
			return
		}
		next = lbRecord{Name: name, ID: s.newLBIDLocked(), IP: ip.String(), CreatedAt: time.Now().UTC()}
		status = http.StatusCreated
	}
	before := copySpec(next.LoadBalancerSpec)
	next.LoadBalancerSpec = copySpec(spec)
	ignore(f, &before, &next.LoadBalancerSpec)
	if err := s.openLocked(&next, existing == nil); err != nil {
		dataplaneFailed(w, err)
		return
	}
	rec := existing
	if rec == nil {
		rec = &next
		s.st.LoadBalancers = append(s.st.LoadBalancers, rec)
		s.st.LastLBIP = rec.IP
	} else {
		*rec = next
	}
	if err := s.saveLocked(); err != nil {
		saveFailed(w, err)
		return
	}
	out := s.lbViewLocked(rec)
	corruptLB(f, &out)
	writeJSON(w, status, out)
}

func (s *Server) lbExists(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lbByNameLocked(name) != nil
}

// lbPreconditionFailed answers a replace (If-Match: *) of a load balancer
// that does not exist: RFC 9110's 412, with the code that says why.
func lbPreconditionFailed(w http.ResponseWriter, name string) {
	writeError(w, http.StatusPreconditionFailed, api.CodeNotFound, fmt.Sprintf("load balancer %q not found (If-Match: * replaces only one that exists)", name))
}

// openLocked opens lb's listeners. A new load balancer whose address has a
// port taken on this machine (another fakecloud's, as when clusters run
// side by side and their pools meet) moves to the next free address
// rather than failing: its address is fakecloud's to choose.
func (s *Server) openLocked(lb *lbRecord, isNew bool) error {
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

// dataplaneFailed answers a change the sockets refused. A port taken by
// someone else is a conflict the caller can resolve; anything else is ours.
func dataplaneFailed(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		writeError(w, http.StatusConflict, api.CodeConflict, err.Error())
	case errors.Is(err, errDataplaneClosed):
		writeError(w, http.StatusServiceUnavailable, api.CodeInternal, err.Error())
	default:
		writeError(w, http.StatusInternalServerError, api.CodeInternal, err.Error())
	}
}

func (s *Server) deleteLoadBalancer(w http.ResponseWriter, r *http.Request, c *call) {
	name := r.PathValue("name")
	c.instance = name
	if _, ok := s.applyFault(w, r, c, api.OpDeleteLoadBalancer, s.aboutLB(name)); !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.st.LoadBalancers, func(lb *lbRecord) bool { return lb.Name == name })
	if i < 0 {
		lbNotFound(w, name)
		return
	}
	s.dp.remove(s.st.LoadBalancers[i].ID)
	s.st.LoadBalancers = slices.Delete(s.st.LoadBalancers, i, i+1)
	if err := s.saveLocked(); err != nil {
		saveFailed(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Admin API.

func (s *Server) adminListLoadBalancers(w http.ResponseWriter, r *http.Request, c *call) {
	s.mu.Lock()
	out := make([]api.LoadBalancer, 0, len(s.st.LoadBalancers))
	for _, lb := range s.st.LoadBalancers {
		out = append(out, s.lbViewLocked(lb))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, api.LoadBalancerList{LoadBalancers: out})
}

func (s *Server) adminGetLoadBalancer(w http.ResponseWriter, r *http.Request, c *call) {
	ref := r.PathValue("ref")
	c.instance = ref
	s.mu.Lock()
	lb := s.lbByRefLocked(ref)
	var out api.LoadBalancer
	if lb != nil {
		out = s.lbViewLocked(lb)
	}
	s.mu.Unlock()
	if lb == nil {
		lbNotFound(w, ref)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
