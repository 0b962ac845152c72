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
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// Octavia's API over octaviaLB (openstack_lb.go): the handlers, each
// change made to a copy and kept only if Octavia would accept it and the
// listeners open.

func (s *Server) octaviaRoutes() {
	const base = osLB + "/v2.0/lbaas"
	s.osHandle("GET "+base+"/loadbalancers", lbError, api.OpListLoadBalancers, s.octaviaListLBs)
	s.osHandle("POST "+base+"/loadbalancers", lbError, api.OpEnsureLoadBalancer, s.octaviaCreateLB)
	s.osHandle("GET "+base+"/loadbalancers/{id}", lbError, api.OpGetLoadBalancer, s.octaviaGetLB)
	s.osHandle("PUT "+base+"/loadbalancers/{id}", lbError, api.OpEnsureLoadBalancer, s.octaviaUpdateLB)
	s.osHandle("DELETE "+base+"/loadbalancers/{id}", lbError, api.OpDeleteLoadBalancer, s.octaviaDeleteLB)
	s.osHandle("GET "+base+"/listeners", lbError, api.OpGetLoadBalancer, s.octaviaListListeners)
	s.osHandle("POST "+base+"/listeners", lbError, api.OpEnsureLoadBalancer, s.octaviaCreateListener)
	s.osHandle("PUT "+base+"/listeners/{id}", lbError, api.OpEnsureLoadBalancer, s.octaviaUpdateListener)
	s.osHandle("DELETE "+base+"/listeners/{id}", lbError, api.OpEnsureLoadBalancer, s.octaviaDeleteListener)
	s.osHandle("GET "+base+"/pools", lbError, api.OpGetLoadBalancer, s.octaviaListPools)
	s.osHandle("POST "+base+"/pools", lbError, api.OpEnsureLoadBalancer, s.octaviaCreatePool)
	s.osHandle("PUT "+base+"/pools/{id}", lbError, api.OpEnsureLoadBalancer, s.octaviaUpdatePool)
	s.osHandle("DELETE "+base+"/pools/{id}", lbError, api.OpEnsureLoadBalancer, s.octaviaDeletePool)
	s.osHandle("GET "+base+"/pools/{id}/members", lbError, api.OpGetLoadBalancer, s.octaviaListMembers)
	s.osHandle("PUT "+base+"/pools/{id}/members", lbError, api.OpEnsureLoadBalancer, s.octaviaBatchMembers)
	s.osHandle("GET "+base+"/healthmonitors/{id}", lbError, api.OpGetLoadBalancer, s.octaviaGetMonitor)
	s.osHandle("POST "+base+"/healthmonitors", lbError, api.OpEnsureLoadBalancer, s.octaviaCreateMonitor)
	s.osHandle("PUT "+base+"/healthmonitors/{id}", lbError, api.OpEnsureLoadBalancer, s.octaviaUpdateMonitor)
	s.osHandle("DELETE "+base+"/healthmonitors/{id}", lbError, api.OpEnsureLoadBalancer, s.octaviaDeleteMonitor)
}

// octaviaVersions answers the version document: every 2.x version up to
// octaviaVersion, the last one CURRENT, as Octavia lists them.
func octaviaVersions(w http.ResponseWriter, r *http.Request, c *call) {
	var vs []map[string]any
	for i := 0; i <= octaviaVersion; i++ {
		status := "SUPPORTED"
		if i == octaviaVersion {
			status = "CURRENT"
		}
		vs = append(vs, map[string]any{"id": fmt.Sprintf("v2.%d", i), "status": status, "updated": "2023-01-01T00:00:00Z",
			"links": []osLink{{Rel: "self", Href: osBaseURL(r) + osLB + "/v2/"}}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"versions": vs})
}

func octaviaDecode(w http.ResponseWriter, r *http.Request, key string, v any) bool {
	var body map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		lbError.write(w, http.StatusBadRequest, "Invalid request body: "+err.Error())
		return false
	}
	raw, ok := body[key]
	if !ok {
		lbError.write(w, http.StatusBadRequest, fmt.Sprintf("Missing mandatory field/attribute: %s", key))
		return false
	}
	if err := json.Unmarshal(raw, v); err != nil {
		lbError.write(w, http.StatusBadRequest, fmt.Sprintf("Invalid input for field/attribute %s: %v", key, err))
		return false
	}
	return true
}

// octaviaErr is a refusal a change answers with.
type octaviaErr struct {
	status int
	msg    string
}

func (e octaviaErr) Error() string { return e.msg }

func octaviaNotFound(w http.ResponseWriter, what, id string) {
	lbError.write(w, http.StatusNotFound, fmt.Sprintf("%s %s not found.", what, id))
}

// octaviaLBLocked is the load balancer id made through Octavia, or nil.
func (s *Server) octaviaLBLocked(id string) *lbRecord {
	for _, lb := range s.st.LoadBalancers {
		if lb.ID == id && lb.Octavia != nil {
			return lb
		}
	}
	return nil
}

// octaviaFindLocked is the load balancer holding the object match finds.
func (s *Server) octaviaFindLocked(match func(*octaviaLB) bool) *lbRecord {
	for _, lb := range s.st.LoadBalancers {
		if lb.Octavia != nil && match(lb.Octavia) {
			return lb
		}
	}
	return nil
}

// octaviaChangeLocked makes a change to the load balancer rec (isNew: one
// the change creates): it is refused while rec is PENDING_*, the ignore
// fault f drops its part, the native spec is derived and the listeners
// opened; answer writes the reply from the change as asked (nil: no body).
func (s *Server) octaviaChangeLocked(w http.ResponseWriter, f *api.Fault, rec *lbRecord, isNew bool, next *octaviaLB, status int, answer func(shown *lbRecord) any) {
	now := time.Now()
	var before *octaviaLB
	if !isNew {
		before = rec.Octavia
		if st := before.status(now); st != octaviaActive {
			lbError.write(w, http.StatusConflict, fmt.Sprintf("Invalid state %s of loadbalancer resource %s", st, rec.ID))
			return
		}
	}
	if err := validateOctavia(next); err != nil {
		lbError.write(w, http.StatusBadRequest, err.Error())
		return
	}
	asked := next.clone()
	octaviaIgnore(f, before, next)
	upd := *rec
	upd.Octavia = next
	spec, err := s.octaviaSpecLocked(upd.Name, next)
	if err != nil {
		lbError.write(w, http.StatusBadRequest, err.Error())
		return
	}
	upd.LoadBalancerSpec = spec
	if err := s.openLocked(&upd, isNew); err != nil {
		lbError.write(w, http.StatusConflict, "fakecloud could not open the listeners: "+err.Error())
		return
	}
	pending := octaviaPendingUpdate
	if isNew {
		pending = octaviaPendingCreate
	}
	for _, o := range []*octaviaLB{next, asked} {
		o.Pending, o.BusyUntil, o.UpdatedAt = pending, now.Add(octaviaBusy), now.UTC()
	}
	*rec = upd
	if isNew {
		s.st.LoadBalancers = append(s.st.LoadBalancers, rec)
		s.st.LastLBIP = rec.IP
	}
	if err := s.saveLocked(); err != nil {
		saveFailed(w, err)
		return
	}
	shown := *rec
	shown.Octavia = asked
	if body := answer(&shown); body != nil {
		writeJSON(w, status, body)
		return
	}
	w.WriteHeader(status)
}

func noBody(*lbRecord) any { return nil }

// octaviaQuery is osQuery in Octavia's shape; Octavia also accepts the
// fields clients ask for, which change nothing here.
func octaviaQuery(w http.ResponseWriter, r *http.Request, known ...string) (map[string]string, bool) {
	return osQuery(w, r, lbError, append(known, "fields")...)
}

func (s *Server) octaviaListLBs(w http.ResponseWriter, r *http.Request, c *call) {
	q, ok := octaviaQuery(w, r, "name", "id")
	if !ok {
		return
	}
	f, ok := s.applyFault(w, r, c, api.OpListLoadBalancers, func(ref string) bool { return s.lbByRefLocked(ref) != nil })
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	out := []map[string]any{}
	for _, lb := range s.st.LoadBalancers {
		if lb.Octavia == nil || (q["name"] != "" && lb.Name != q["name"]) || (q["id"] != "" && lb.ID != q["id"]) {
			continue
		}
		view := s.lbViewLocked(lb)
		corruptLB(f, &view)
		out = append(out, s.octaviaLBWire(lb, view.IP, now))
	}
	writeJSON(w, http.StatusOK, map[string]any{"loadbalancers": out, "loadbalancers_links": []any{}})
}

func (s *Server) octaviaGetLB(w http.ResponseWriter, r *http.Request, c *call) {
	id := r.PathValue("id")
	c.instance = id
	f, ok := s.applyFault(w, r, c, api.OpGetLoadBalancer, func(ref string) bool {
		lb := s.lbByRefLocked(id)
		return ref == id || (lb != nil && lb.Name == ref)
	})
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lb := s.octaviaLBLocked(id)
	if lb == nil {
		octaviaNotFound(w, "Load Balancer", id)
		return
	}
	view := s.lbViewLocked(lb)
	corruptLB(f, &view)
	writeJSON(w, http.StatusOK, map[string]any{"loadbalancer": s.octaviaLBWire(lb, view.IP, time.Now())})
}

// octaviaCreateLB creates a load balancer, fully populated if the request
// holds its listeners with their default pools, members and monitors.
func (s *Server) octaviaCreateLB(w http.ResponseWriter, r *http.Request, c *call) {
	var req octaviaLBReq
	if !octaviaDecode(w, r, "loadbalancer", &req) {
		return
	}
	c.instance = req.Name
	f, ok := s.applyFault(w, r, c, api.OpEnsureLoadBalancer, s.aboutLB(req.Name))
	if !ok {
		return
	}
	if err := validateName("load balancer", req.Name); err != nil {
		lbError.write(w, http.StatusBadRequest, err.Error())
		return
	}
	if req.VipSubnetID != "" && req.VipSubnetID != osPrivateSubnetID && req.VipSubnetID != osPublicSubnetID {
		lbError.write(w, http.StatusBadRequest, fmt.Sprintf("Validation failure: Subnet %s not found.", req.VipSubnetID))
		return
	}
	if req.VipSubnetID == "" && req.VipNetworkID == "" && req.VipPortID == "" {
		lbError.write(w, http.StatusBadRequest, "Validation failure: VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := &octaviaLB{Description: req.Description, Provider: req.Provider, Tags: req.Tags}
	if next.Provider == "" {
		next.Provider = "amphora"
	}
	for _, lo := range req.Listeners {
		l := listenerFromOpts(s.newOctaviaIDLocked("listener"), lo.CreateOpts)
		next.Listeners = append(next.Listeners, l)
		if lo.DefaultPool != nil {
			p := s.poolFromOptsLocked(*lo.DefaultPool, l.ID)
			l.DefaultPoolID = p.ID
			next.Pools = append(next.Pools, p)
		}
	}
	ip, err := s.allocateLBIPLocked()
	if err != nil {
		lbError.write(w, http.StatusConflict, "Quota has been met for resources: "+err.Error())
		return
	}
	rec := &lbRecord{Name: req.Name, ID: s.newLBIDLocked(), IP: ip.String(), CreatedAt: time.Now().UTC()}
	s.octaviaChangeLocked(w, f, rec, true, next, http.StatusCreated, func(shown *lbRecord) any {
		return map[string]any{"loadbalancer": s.octaviaLBWire(shown, shown.IP, time.Now())}
	})
}

func (s *Server) octaviaUpdateLB(w http.ResponseWriter, r *http.Request, c *call) {
	id := r.PathValue("id")
	var req loadbalancers.UpdateOpts
	if !octaviaDecode(w, r, "loadbalancer", &req) {
		return
	}
	s.octaviaMutate(w, r, c, func(o *octaviaLB) bool { return false }, id, func(rec *lbRecord, next *octaviaLB) (int, func(*lbRecord) any, error) {
		if req.Description != nil {
			next.Description = *req.Description
		}
		if req.Tags != nil {
			next.Tags = *req.Tags
		}
		return http.StatusOK, func(shown *lbRecord) any {
			return map[string]any{"loadbalancer": s.octaviaLBWire(shown, shown.IP, time.Now())}
		}, nil
	})
}

// octaviaMutate runs a change to the load balancer that holds an object:
// the one find matches, or the load balancer lbID. change edits next, a
// copy, and returns the status, the answer, or a 404 message.
func (s *Server) octaviaMutate(w http.ResponseWriter, r *http.Request, c *call, find func(*octaviaLB) bool, lbID string,
	change func(rec *lbRecord, next *octaviaLB) (int, func(*lbRecord) any, error)) {
	s.mu.Lock()
	rec := s.octaviaLBLocked(lbID)
	if rec == nil {
		rec = s.octaviaFindLocked(find)
	}
	name := ""
	if rec != nil {
		name = rec.Name
	}
	s.mu.Unlock()
	if rec == nil {
		octaviaNotFound(w, "Load Balancer", lbID)
		return
	}
	c.instance = name
	f, ok := s.applyFault(w, r, c, api.OpEnsureLoadBalancer, s.aboutLB(name))
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec = s.lbByNameLocked(name)
	if rec == nil || rec.Octavia == nil {
		octaviaNotFound(w, "Load Balancer", lbID)
		return
	}
	next := rec.Octavia.clone()
	status, answer, err := change(rec, next)
	if e, ok := err.(octaviaErr); ok {
		lbError.write(w, e.status, e.msg)
		return
	}
	s.octaviaChangeLocked(w, f, rec, false, next, status, answer)
}

// octaviaDeleteLB deletes a load balancer; with cascade=true its
// listeners, pools and monitors go with it, without it Octavia refuses
// while it has any.
func (s *Server) octaviaDeleteLB(w http.ResponseWriter, r *http.Request, c *call) {
	id := r.PathValue("id")
	c.instance = id
	q, ok := octaviaQuery(w, r, "cascade")
	if !ok {
		return
	}
	if _, ok := s.applyFault(w, r, c, api.OpDeleteLoadBalancer, func(ref string) bool {
		lb := s.lbByRefLocked(id)
		return ref == id || (lb != nil && lb.Name == ref)
	}); !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lb := s.octaviaLBLocked(id)
	if lb == nil {
		octaviaNotFound(w, "Load Balancer", id)
		return
	}
	if st := lb.Octavia.status(time.Now()); st != octaviaActive {
		lbError.write(w, http.StatusConflict, fmt.Sprintf("Invalid state %s of loadbalancer resource %s", st, id))
		return
	}
	if q["cascade"] != "true" && len(lb.Octavia.Listeners)+len(lb.Octavia.Pools) > 0 {
		lbError.write(w, http.StatusBadRequest, fmt.Sprintf("Validation failure: Cannot delete Load Balancer %s - it has children", id))
		return
	}
	s.dp.remove(lb.ID)
	s.st.LoadBalancers = slices.DeleteFunc(s.st.LoadBalancers, func(l *lbRecord) bool { return l == lb })
	if err := s.saveLocked(); err != nil {
		saveFailed(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) octaviaListListeners(w http.ResponseWriter, r *http.Request, c *call) {
	s.octaviaListChildren(w, r, c, "listeners", func(lb *lbRecord, f *api.Fault, now time.Time) []octaviaChild {
		var out []octaviaChild
		// A corrupt listeners fault shows the load balancer without any.
		if f != nil && f.Kind == api.FaultCorrupt && f.Field == api.CorruptListeners {
			return nil
		}
		for _, l := range lb.Octavia.Listeners {
			out = append(out, octaviaChild{l.ID, l.Name, octaviaListenerWire(lb, l, now)})
		}
		return out
	})
}

// octaviaChild is a listener or pool as a list shows it.
type octaviaChild struct {
	id, name string
	wire     map[string]any
}

// octaviaListChildren answers a list of the objects each Octavia load
// balancer holds, filtered by load balancer, name and id: operation
// GetLoadBalancer, about the load balancer asked for.
func (s *Server) octaviaListChildren(w http.ResponseWriter, r *http.Request, c *call, key string, children func(*lbRecord, *api.Fault, time.Time) []octaviaChild) {
	q, ok := octaviaQuery(w, r, "loadbalancer_id", "name", "id")
	if !ok {
		return
	}
	f, ok := s.applyFault(w, r, c, api.OpGetLoadBalancer, func(ref string) bool {
		lb := s.lbByRefLocked(q["loadbalancer_id"])
		return lb != nil && (lb.ID == ref || lb.Name == ref)
	})
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	out := []map[string]any{}
	for _, lb := range s.st.LoadBalancers {
		if lb.Octavia == nil || (q["loadbalancer_id"] != "" && lb.ID != q["loadbalancer_id"]) {
			continue
		}
		for _, ch := range children(lb, f, now) {
			if (q["name"] == "" || ch.name == q["name"]) && (q["id"] == "" || ch.id == q["id"]) {
				out = append(out, ch.wire)
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{key: out, key + "_links": []any{}})
}

func (s *Server) octaviaCreateListener(w http.ResponseWriter, r *http.Request, c *call) {
	var req listeners.CreateOpts
	if !octaviaDecode(w, r, "listener", &req) {
		return
	}
	s.octaviaMutate(w, r, c, func(*octaviaLB) bool { return false }, req.LoadbalancerID, func(rec *lbRecord, next *octaviaLB) (int, func(*lbRecord) any, error) {
		l := listenerFromOpts(s.newOctaviaIDLocked("listener"), req)
		next.Listeners = append(next.Listeners, l)
		return http.StatusCreated, func(shown *lbRecord) any {
			return map[string]any{"listener": octaviaListenerWire(shown, shown.Octavia.listener(l.ID), time.Now())}
		}, nil
	})
}

func (s *Server) octaviaUpdateListener(w http.ResponseWriter, r *http.Request, c *call) {
	id := r.PathValue("id")
	var req listeners.UpdateOpts
	if !octaviaDecode(w, r, "listener", &req) {
		return
	}
	s.octaviaMutate(w, r, c, func(o *octaviaLB) bool { return o.listener(id) != nil }, "", func(rec *lbRecord, next *octaviaLB) (int, func(*lbRecord) any, error) {
		l := next.listener(id)
		if l == nil {
			return 0, nil, octaviaErr{http.StatusNotFound, "Listener " + id + " not found."}
		}
		if req.Name != nil {
			l.Name = *req.Name
		}
		if req.ConnLimit != nil {
			l.ConnectionLimit = *req.ConnLimit
		}
		if req.AllowedCIDRs != nil {
			l.AllowedCIDRs = *req.AllowedCIDRs
		}
		if req.Tags != nil {
			l.Tags = *req.Tags
		}
		if req.InsertHeaders != nil {
			l.InsertHeaders = *req.InsertHeaders
		}
		if req.DefaultTlsContainerRef != nil {
			l.DefaultTLSContainerRef = *req.DefaultTlsContainerRef
		}
		for from, to := range map[*int]*int{req.TimeoutClientData: &l.TimeoutClientData, req.TimeoutMemberConnect: &l.TimeoutMemberConnect, req.TimeoutMemberData: &l.TimeoutMemberData, req.TimeoutTCPInspect: &l.TimeoutTCPInspect} {
			if from != nil {
				*to = *from
			}
		}
		return http.StatusOK, func(shown *lbRecord) any {
			return map[string]any{"listener": octaviaListenerWire(shown, shown.Octavia.listener(id), time.Now())}
		}, nil
	})
}

func (s *Server) octaviaDeleteListener(w http.ResponseWriter, r *http.Request, c *call) {
	id := r.PathValue("id")
	s.octaviaMutate(w, r, c, func(o *octaviaLB) bool { return o.listener(id) != nil }, "", func(rec *lbRecord, next *octaviaLB) (int, func(*lbRecord) any, error) {
		next.Listeners = slices.DeleteFunc(next.Listeners, func(l *octaviaListener) bool { return l.ID == id })
		// Its pool stays, unbound, as in Octavia.
		for _, p := range next.Pools {
			if p.ListenerID == id {
				p.ListenerID = ""
			}
		}
		return http.StatusNoContent, noBody, nil
	})
}
