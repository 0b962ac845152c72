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

package octavia

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/openstackjson"
)

// Octavia's API over model.OctaviaLB (octavia.go): the handlers, each
// change made to a copy and kept only if Octavia would accept it and the
// listeners open.

// Register adds Octavia's routes.
func (s *Front) Register(r openstackjson.Router) {
	r.Open("GET "+openstackjson.LB+"/{$}", "", octaviaVersions)
	r.Handle(openstackjson.LB+"/", lbError, "", openstackjson.NotFound(lbError))
	const base = openstackjson.LB + "/v2.0/lbaas"
	r.Handle("GET "+base+"/loadbalancers", lbError, api.OpListLoadBalancers, s.octaviaListLBs)
	r.Handle("POST "+base+"/loadbalancers", lbError, api.OpEnsureLoadBalancer, s.octaviaCreateLB)
	r.Handle("GET "+base+"/loadbalancers/{id}", lbError, api.OpGetLoadBalancer, s.octaviaGetLB)
	r.Handle("PUT "+base+"/loadbalancers/{id}", lbError, api.OpEnsureLoadBalancer, s.octaviaUpdateLB)
	r.Handle("DELETE "+base+"/loadbalancers/{id}", lbError, api.OpDeleteLoadBalancer, s.octaviaDeleteLB)
	r.Handle("GET "+base+"/listeners", lbError, api.OpGetLoadBalancer, s.octaviaListListeners)
	r.Handle("POST "+base+"/listeners", lbError, api.OpEnsureLoadBalancer, s.octaviaCreateListener)
	r.Handle("PUT "+base+"/listeners/{id}", lbError, api.OpEnsureLoadBalancer, s.octaviaUpdateListener)
	r.Handle("DELETE "+base+"/listeners/{id}", lbError, api.OpEnsureLoadBalancer, s.octaviaDeleteListener)
	r.Handle("GET "+base+"/pools", lbError, api.OpGetLoadBalancer, s.octaviaListPools)
	r.Handle("POST "+base+"/pools", lbError, api.OpEnsureLoadBalancer, s.octaviaCreatePool)
	r.Handle("PUT "+base+"/pools/{id}", lbError, api.OpEnsureLoadBalancer, s.octaviaUpdatePool)
	r.Handle("DELETE "+base+"/pools/{id}", lbError, api.OpEnsureLoadBalancer, s.octaviaDeletePool)
	r.Handle("GET "+base+"/pools/{id}/members", lbError, api.OpGetLoadBalancer, s.octaviaListMembers)
	r.Handle("PUT "+base+"/pools/{id}/members", lbError, api.OpEnsureLoadBalancer, s.octaviaBatchMembers)
	r.Handle("GET "+base+"/healthmonitors/{id}", lbError, api.OpGetLoadBalancer, s.octaviaGetMonitor)
	r.Handle("POST "+base+"/healthmonitors", lbError, api.OpEnsureLoadBalancer, s.octaviaCreateMonitor)
	r.Handle("PUT "+base+"/healthmonitors/{id}", lbError, api.OpEnsureLoadBalancer, s.octaviaUpdateMonitor)
	r.Handle("DELETE "+base+"/healthmonitors/{id}", lbError, api.OpEnsureLoadBalancer, s.octaviaDeleteMonitor)
}

// octaviaVersions answers the version document: every 2.x version up to
// octaviaVersion, the last one CURRENT, as Octavia lists them.
func octaviaVersions(w http.ResponseWriter, r *http.Request, c *model.Call) {
	var vs []map[string]any
	for i := 0; i <= octaviaVersion; i++ {
		status := "SUPPORTED"
		if i == octaviaVersion {
			status = "CURRENT"
		}
		vs = append(vs, map[string]any{"id": fmt.Sprintf("v2.%d", i), "status": status, "updated": "2023-01-01T00:00:00Z",
			"links": []openstackjson.Link{{Rel: "self", Href: openstackjson.BaseURL(r) + openstackjson.LB + "/v2/"}}})
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"versions": vs})
}

func octaviaDecode(w http.ResponseWriter, r *http.Request, key string, v any) bool {
	var body map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		lbError.WriteError(w, http.StatusBadRequest, "Invalid request body: "+err.Error())
		return false
	}
	raw, ok := body[key]
	if !ok {
		lbError.WriteError(w, http.StatusBadRequest, fmt.Sprintf("Missing mandatory field/attribute: %s", key))
		return false
	}
	if err := json.Unmarshal(raw, v); err != nil {
		lbError.WriteError(w, http.StatusBadRequest, fmt.Sprintf("Invalid input for field/attribute %s: %v", key, err))
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
	lbError.WriteError(w, http.StatusNotFound, fmt.Sprintf("%s %s not found.", what, id))
}

// octaviaLBLocked is the load balancer id made through Octavia, or nil.
func (s *Front) octaviaLBLocked(id string) *model.LBRecord {
	for _, lb := range s.St.LoadBalancers {
		if lb.ID == id && lb.Octavia != nil {
			return lb
		}
	}
	return nil
}

// octaviaFindLocked is the load balancer holding the object match finds.
func (s *Front) octaviaFindLocked(match func(*model.OctaviaLB) bool) *model.LBRecord {
	for _, lb := range s.St.LoadBalancers {
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
func (s *Front) octaviaChangeLocked(w http.ResponseWriter, f *api.Fault, rec *model.LBRecord, isNew bool, next *model.OctaviaLB, status int, answer func(shown *model.LBRecord) any) {
	now := time.Now()
	var before *model.OctaviaLB
	if !isNew {
		before = rec.Octavia
		if st := before.Status(now); st != model.OctaviaActive {
			lbError.WriteError(w, http.StatusConflict, fmt.Sprintf("Invalid state %s of loadbalancer resource %s", st, rec.ID))
			return
		}
	}
	if err := validateOctavia(next); err != nil {
		lbError.WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	asked := next.Clone()
	octaviaIgnore(f, before, next)
	upd := *rec
	upd.Octavia = next
	spec, err := s.octaviaSpecLocked(upd.Name, next)
	if err != nil {
		lbError.WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	upd.LoadBalancerSpec = spec
	if err := s.OpenLocked(&upd, isNew); err != nil {
		lbError.WriteError(w, http.StatusConflict, "fakecloud could not open the listeners: "+err.Error())
		return
	}
	pending := model.OctaviaPendingUpdate
	if isNew {
		pending = model.OctaviaPendingCreate
	}
	for _, o := range []*model.OctaviaLB{next, asked} {
		o.Pending, o.BusyUntil, o.UpdatedAt = pending, now.Add(octaviaBusy), now.UTC()
	}
	*rec = upd
	if isNew {
		s.St.LoadBalancers = append(s.St.LoadBalancers, rec)
		s.St.LastLBIP = rec.IP
	}
	if err := s.SaveLocked(); err != nil {
		model.SaveFailed(w, err)
		return
	}
	shown := *rec
	shown.Octavia = asked
	if body := answer(&shown); body != nil {
		model.WriteJSON(w, status, body)
		return
	}
	w.WriteHeader(status)
}

func noBody(*model.LBRecord) any { return nil }

// octaviaQuery is openstackjson.Query in Octavia's shape; Octavia also accepts the
// fields clients ask for, which change nothing here.
func octaviaQuery(w http.ResponseWriter, r *http.Request, known ...string) (map[string]string, bool) {
	return openstackjson.Query(w, r, lbError, append(known, "fields")...)
}

func (s *Front) octaviaListLBs(w http.ResponseWriter, r *http.Request, c *model.Call) {
	q, ok := octaviaQuery(w, r, "name", "id")
	if !ok {
		return
	}
	f, ok := s.ApplyFault(w, r, c, api.OpListLoadBalancers, func(ref string) bool { return s.LBByRefLocked(ref) != nil })
	if !ok {
		return
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	now := time.Now()
	out := []map[string]any{}
	for _, lb := range s.St.LoadBalancers {
		if lb.Octavia == nil || (q["name"] != "" && lb.Name != q["name"]) || (q["id"] != "" && lb.ID != q["id"]) {
			continue
		}
		view := s.LBViewLocked(lb)
		model.CorruptLB(f, &view)
		out = append(out, s.octaviaLBWire(lb, view.IP, now))
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"loadbalancers": out, "loadbalancers_links": []any{}})
}

func (s *Front) octaviaGetLB(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	c.Instance = id
	f, ok := s.ApplyFault(w, r, c, api.OpGetLoadBalancer, func(ref string) bool {
		lb := s.LBByRefLocked(id)
		return ref == id || (lb != nil && lb.Name == ref)
	})
	if !ok {
		return
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	lb := s.octaviaLBLocked(id)
	if lb == nil {
		octaviaNotFound(w, "Load Balancer", id)
		return
	}
	view := s.LBViewLocked(lb)
	model.CorruptLB(f, &view)
	model.WriteJSON(w, http.StatusOK, map[string]any{"loadbalancer": s.octaviaLBWire(lb, view.IP, time.Now())})
}

// octaviaCreateLB creates a load balancer, fully populated if the request
// holds its listeners with their default pools, members and monitors.
func (s *Front) octaviaCreateLB(w http.ResponseWriter, r *http.Request, c *model.Call) {
	var req octaviaLBReq
	if !octaviaDecode(w, r, "loadbalancer", &req) {
		return
	}
	c.Instance = req.Name
	f, ok := s.ApplyFault(w, r, c, api.OpEnsureLoadBalancer, s.AboutLB(req.Name))
	if !ok {
		return
	}
	if err := model.ValidateName("load balancer", req.Name); err != nil {
		lbError.WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	if req.VipSubnetID != "" && req.VipSubnetID != openstackjson.PrivateSubnetID && req.VipSubnetID != openstackjson.PublicSubnetID {
		lbError.WriteError(w, http.StatusBadRequest, fmt.Sprintf("Validation failure: Subnet %s not found.", req.VipSubnetID))
		return
	}
	if req.VipSubnetID == "" && req.VipNetworkID == "" && req.VipPortID == "" {
		lbError.WriteError(w, http.StatusBadRequest, "Validation failure: VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.")
		return
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	next := &model.OctaviaLB{Description: req.Description, Provider: req.Provider, Tags: req.Tags}
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
	ip, err := s.AllocateLBIPLocked()
	if err != nil {
		lbError.WriteError(w, http.StatusConflict, "Quota has been met for resources: "+err.Error())
		return
	}
	rec := &model.LBRecord{Name: req.Name, ID: s.NewLBIDLocked(), IP: ip.String(), CreatedAt: time.Now().UTC()}
	s.octaviaChangeLocked(w, f, rec, true, next, http.StatusCreated, func(shown *model.LBRecord) any {
		return map[string]any{"loadbalancer": s.octaviaLBWire(shown, shown.IP, time.Now())}
	})
}

func (s *Front) octaviaUpdateLB(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	var req loadbalancers.UpdateOpts
	if !octaviaDecode(w, r, "loadbalancer", &req) {
		return
	}
	s.octaviaMutate(w, r, c, func(o *model.OctaviaLB) bool { return false }, id, func(rec *model.LBRecord, next *model.OctaviaLB) (int, func(*model.LBRecord) any, error) {
		if req.Description != nil {
			next.Description = *req.Description
		}
		if req.Tags != nil {
			next.Tags = *req.Tags
		}
		return http.StatusOK, func(shown *model.LBRecord) any {
			return map[string]any{"loadbalancer": s.octaviaLBWire(shown, shown.IP, time.Now())}
		}, nil
	})
}

// octaviaMutate runs a change to the load balancer that holds an object:
// the one find matches, or the load balancer lbID. change edits next, a
// copy, and returns the status, the answer, or a 404 message.
func (s *Front) octaviaMutate(w http.ResponseWriter, r *http.Request, c *model.Call, find func(*model.OctaviaLB) bool, lbID string,
	change func(rec *model.LBRecord, next *model.OctaviaLB) (int, func(*model.LBRecord) any, error)) {
	s.Mu.Lock()
	rec := s.octaviaLBLocked(lbID)
	if rec == nil {
		rec = s.octaviaFindLocked(find)
	}
	name := ""
	if rec != nil {
		name = rec.Name
	}
	s.Mu.Unlock()
	if rec == nil {
		octaviaNotFound(w, "Load Balancer", lbID)
		return
	}
	c.Instance = name
	f, ok := s.ApplyFault(w, r, c, api.OpEnsureLoadBalancer, s.AboutLB(name))
	if !ok {
		return
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	rec = s.LBByNameLocked(name)
	if rec == nil || rec.Octavia == nil {
		octaviaNotFound(w, "Load Balancer", lbID)
		return
	}
	next := rec.Octavia.Clone()
	status, answer, err := change(rec, next)
	if e, ok := err.(octaviaErr); ok {
		lbError.WriteError(w, e.status, e.msg)
		return
	}
	s.octaviaChangeLocked(w, f, rec, false, next, status, answer)
}

// octaviaDeleteLB deletes a load balancer; with cascade=true its
// listeners, pools and monitors go with it, without it Octavia refuses
// while it has any.
func (s *Front) octaviaDeleteLB(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	c.Instance = id
	q, ok := octaviaQuery(w, r, "cascade")
	if !ok {
		return
	}
	if _, ok := s.ApplyFault(w, r, c, api.OpDeleteLoadBalancer, func(ref string) bool {
		lb := s.LBByRefLocked(id)
		return ref == id || (lb != nil && lb.Name == ref)
	}); !ok {
		return
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	lb := s.octaviaLBLocked(id)
	if lb == nil {
		octaviaNotFound(w, "Load Balancer", id)
		return
	}
	if st := lb.Octavia.Status(time.Now()); st != model.OctaviaActive {
		lbError.WriteError(w, http.StatusConflict, fmt.Sprintf("Invalid state %s of loadbalancer resource %s", st, id))
		return
	}
	if q["cascade"] != "true" && len(lb.Octavia.Listeners)+len(lb.Octavia.Pools) > 0 {
		lbError.WriteError(w, http.StatusBadRequest, fmt.Sprintf("Validation failure: Cannot delete Load Balancer %s - it has children", id))
		return
	}
	s.CloseLBLocked(lb.ID)
	s.St.LoadBalancers = slices.DeleteFunc(s.St.LoadBalancers, func(l *model.LBRecord) bool { return l == lb })
	if err := s.SaveLocked(); err != nil {
		model.SaveFailed(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Front) octaviaListListeners(w http.ResponseWriter, r *http.Request, c *model.Call) {
	s.octaviaListChildren(w, r, c, "listeners", func(lb *model.LBRecord, f *api.Fault, now time.Time) []octaviaChild {
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
func (s *Front) octaviaListChildren(w http.ResponseWriter, r *http.Request, c *model.Call, key string, children func(*model.LBRecord, *api.Fault, time.Time) []octaviaChild) {
	q, ok := octaviaQuery(w, r, "loadbalancer_id", "name", "id")
	if !ok {
		return
	}
	f, ok := s.ApplyFault(w, r, c, api.OpGetLoadBalancer, func(ref string) bool {
		lb := s.LBByRefLocked(q["loadbalancer_id"])
		return lb != nil && (lb.ID == ref || lb.Name == ref)
	})
	if !ok {
		return
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	now := time.Now()
	out := []map[string]any{}
	for _, lb := range s.St.LoadBalancers {
		if lb.Octavia == nil || (q["loadbalancer_id"] != "" && lb.ID != q["loadbalancer_id"]) {
			continue
		}
		for _, ch := range children(lb, f, now) {
			if (q["name"] == "" || ch.name == q["name"]) && (q["id"] == "" || ch.id == q["id"]) {
				out = append(out, ch.wire)
			}
		}
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{key: out, key + "_links": []any{}})
}

func (s *Front) octaviaCreateListener(w http.ResponseWriter, r *http.Request, c *model.Call) {
	var req listeners.CreateOpts
	if !octaviaDecode(w, r, "listener", &req) {
		return
	}
	s.octaviaMutate(w, r, c, func(*model.OctaviaLB) bool { return false }, req.LoadbalancerID, func(rec *model.LBRecord, next *model.OctaviaLB) (int, func(*model.LBRecord) any, error) {
		l := listenerFromOpts(s.newOctaviaIDLocked("listener"), req)
		next.Listeners = append(next.Listeners, l)
		return http.StatusCreated, func(shown *model.LBRecord) any {
			return map[string]any{"listener": octaviaListenerWire(shown, shown.Octavia.Listener(l.ID), time.Now())}
		}, nil
	})
}

func (s *Front) octaviaUpdateListener(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	var req listeners.UpdateOpts
	if !octaviaDecode(w, r, "listener", &req) {
		return
	}
	s.octaviaMutate(w, r, c, func(o *model.OctaviaLB) bool { return o.Listener(id) != nil }, "", func(rec *model.LBRecord, next *model.OctaviaLB) (int, func(*model.LBRecord) any, error) {
		l := next.Listener(id)
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
		return http.StatusOK, func(shown *model.LBRecord) any {
			return map[string]any{"listener": octaviaListenerWire(shown, shown.Octavia.Listener(id), time.Now())}
		}, nil
	})
}

func (s *Front) octaviaDeleteListener(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	s.octaviaMutate(w, r, c, func(o *model.OctaviaLB) bool { return o.Listener(id) != nil }, "", func(rec *model.LBRecord, next *model.OctaviaLB) (int, func(*model.LBRecord) any, error) {
		next.Listeners = slices.DeleteFunc(next.Listeners, func(l *model.OctaviaListener) bool { return l.ID == id })
		// Its pool stays, unbound, as in Octavia.
		for _, p := range next.Pools {
			if p.ListenerID == id {
				p.ListenerID = ""
			}
		}
		return http.StatusNoContent, noBody, nil
	})
}
