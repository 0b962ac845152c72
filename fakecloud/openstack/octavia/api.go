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

func octaviaNotFound(w http.ResponseWriter, what, id string) {
	lbError.WriteError(w, http.StatusNotFound, fmt.Sprintf("%s %s not found.", what, id))
}

// octaviaFailed answers what the model refused: its refusals of Octavia's
// changes are in Octavia's words, their kind says the status.
func octaviaFailed(w http.ResponseWriter, err error) {
	switch model.KindOf(err) {
	case model.KindSave:
		model.SaveFailed(w, err)
	case model.KindNotFound:
		lbError.WriteError(w, http.StatusNotFound, err.Error())
	case model.KindConflict:
		lbError.WriteError(w, http.StatusConflict, err.Error())
	case model.KindInvalid:
		lbError.WriteError(w, http.StatusBadRequest, err.Error())
	default:
		lbError.WriteError(w, http.StatusInternalServerError, err.Error())
	}
}

// answerChange answers a change the model made: with answer's body of the
// load balancer as the change asked for it, or with status alone when
// answer is nil or gives no body.
func answerChange(w http.ResponseWriter, status int, shown model.LBRecord, answer func(shown *model.LBRecord) any) {
	if answer != nil {
		if body := answer(&shown); body != nil {
			model.WriteJSON(w, status, body)
			return
		}
	}
	w.WriteHeader(status)
}

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
	f, ok := s.ApplyFault(w, r, c, api.OpListLoadBalancers, s.AboutSomeLB())
	if !ok {
		return
	}
	now := time.Now()
	out := []map[string]any{}
	for _, lb := range s.OctaviaLBs() {
		if (q["name"] != "" && lb.Name != q["name"]) || (q["id"] != "" && lb.ID != q["id"]) {
			continue
		}
		model.CorruptLB(f, &lb.Native)
		out = append(out, s.octaviaLBWire(&lb.LBRecord, lb.Native.IP, now))
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"loadbalancers": out, "loadbalancers_links": []any{}})
}

func (s *Front) octaviaGetLB(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	c.Instance = id
	f, ok := s.ApplyFault(w, r, c, api.OpGetLoadBalancer, s.AboutLBCalled(id))
	if !ok {
		return
	}
	lb, ok := s.OctaviaLB(id)
	if !ok {
		octaviaNotFound(w, "Load Balancer", id)
		return
	}
	model.CorruptLB(f, &lb.Native)
	model.WriteJSON(w, http.StatusOK, map[string]any{"loadbalancer": s.octaviaLBWire(&lb.LBRecord, lb.Native.IP, time.Now())})
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
	shown, err := s.CreateOctaviaLoadBalancer(req.Name, f, s.lbFromReq(req))
	if err != nil {
		octaviaFailed(w, err)
		return
	}
	model.WriteJSON(w, http.StatusCreated, map[string]any{"loadbalancer": s.octaviaLBWire(&shown, shown.IP, time.Now())})
}

// lbFromReq is the Octavia tree a create asks for.
func (s *Front) lbFromReq(req octaviaLBReq) *model.OctaviaLB {
	next := &model.OctaviaLB{Description: req.Description, Provider: req.Provider, Tags: req.Tags}
	if next.Provider == "" {
		next.Provider = "amphora"
	}
	for _, lo := range req.Listeners {
		l := listenerFromOpts(s.NewOctaviaID("listener"), lo.CreateOpts)
		next.Listeners = append(next.Listeners, l)
		if lo.DefaultPool != nil {
			p := s.poolFromOpts(*lo.DefaultPool, l.ID)
			l.DefaultPoolID = p.ID
			next.Pools = append(next.Pools, p)
		}
	}
	return next
}

func (s *Front) octaviaUpdateLB(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	var req loadbalancers.UpdateOpts
	if !octaviaDecode(w, r, "loadbalancer", &req) {
		return
	}
	s.octaviaMutate(w, r, c, model.OctaviaRef{LB: id}, http.StatusOK, func(ch model.OctaviaChange) (model.LBRecord, error) {
		return s.UpdateOctaviaLoadBalancer(ch, func(next *model.OctaviaLB) {
			if req.Description != nil {
				next.Description = *req.Description
			}
			if req.Tags != nil {
				next.Tags = *req.Tags
			}
		})
	}, func(shown *model.LBRecord) any {
		return map[string]any{"loadbalancer": s.octaviaLBWire(shown, shown.IP, time.Now())}
	})
}

// octaviaMutate runs a change to the load balancer ref names, by its ID or
// an object it holds: operation EnsureLoadBalancer, about that load
// balancer. change makes it in the model; answer gives the body of the
// reply from the load balancer as asked for (nil, or a nil body: none).
func (s *Front) octaviaMutate(w http.ResponseWriter, r *http.Request, c *model.Call, ref model.OctaviaRef, status int,
	change func(model.OctaviaChange) (model.LBRecord, error), answer func(shown *model.LBRecord) any) {
	name, err := s.OctaviaLBName(ref)
	if err != nil {
		octaviaFailed(w, err)
		return
	}
	c.Instance = name
	f, ok := s.ApplyFault(w, r, c, api.OpEnsureLoadBalancer, s.AboutLB(name))
	if !ok {
		return
	}
	shown, err := change(model.OctaviaChange{Name: name, LBID: ref.LB, Fault: f})
	if err != nil {
		octaviaFailed(w, err)
		return
	}
	answerChange(w, status, shown, answer)
}

// noRecord adapts a change that answers no load balancer to octaviaMutate.
func noRecord(err error) (model.LBRecord, error) { return model.LBRecord{}, err }

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
	if _, ok := s.ApplyFault(w, r, c, api.OpDeleteLoadBalancer, s.AboutLBCalled(id)); !ok {
		return
	}
	if err := s.DeleteOctaviaLoadBalancer(id, q["cascade"] == "true"); err != nil {
		octaviaFailed(w, err)
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
	f, ok := s.ApplyFault(w, r, c, api.OpGetLoadBalancer, s.AboutLBFound(q["loadbalancer_id"]))
	if !ok {
		return
	}
	now := time.Now()
	out := []map[string]any{}
	for _, lb := range s.OctaviaLBs() {
		if q["loadbalancer_id"] != "" && lb.ID != q["loadbalancer_id"] {
			continue
		}
		for _, ch := range children(&lb.LBRecord, f, now) {
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
	var id string
	s.octaviaMutate(w, r, c, model.OctaviaRef{LB: req.LoadbalancerID}, http.StatusCreated, func(ch model.OctaviaChange) (model.LBRecord, error) {
		l := listenerFromOpts(s.NewOctaviaID("listener"), req)
		id = l.ID
		return s.AddOctaviaListener(ch, l)
	}, func(shown *model.LBRecord) any {
		return map[string]any{"listener": octaviaListenerWire(shown, shown.Octavia.Listener(id), time.Now())}
	})
}

func (s *Front) octaviaUpdateListener(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	var req listeners.UpdateOpts
	if !octaviaDecode(w, r, "listener", &req) {
		return
	}
	s.octaviaMutate(w, r, c, model.OctaviaRef{Listener: id}, http.StatusOK, func(ch model.OctaviaChange) (model.LBRecord, error) {
		return s.UpdateOctaviaListener(ch, id, func(l *model.OctaviaListener) { updateListener(l, req) })
	}, func(shown *model.LBRecord) any {
		return map[string]any{"listener": octaviaListenerWire(shown, shown.Octavia.Listener(id), time.Now())}
	})
}

// updateListener sets what an update of l asks for.
func updateListener(l *model.OctaviaListener, req listeners.UpdateOpts) {
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
}

func (s *Front) octaviaDeleteListener(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	s.octaviaMutate(w, r, c, model.OctaviaRef{Listener: id}, http.StatusNoContent, func(ch model.OctaviaChange) (model.LBRecord, error) {
		return noRecord(s.DeleteOctaviaListener(ch, id))
	}, nil)
}
