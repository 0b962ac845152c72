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
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

func (s *Front) octaviaListPools(w http.ResponseWriter, r *http.Request, c *model.Call) {
	s.octaviaListChildren(w, r, c, "pools", func(lb *model.LBRecord, _ *api.Fault, now time.Time) []octaviaChild {
		var out []octaviaChild
		for _, p := range lb.Octavia.Pools {
			out = append(out, octaviaChild{p.ID, p.Name, octaviaPoolWire(lb, p, now)})
		}
		return out
	})
}

func (s *Front) octaviaCreatePool(w http.ResponseWriter, r *http.Request, c *model.Call) {
	var req octaviaPoolReq
	if !octaviaDecode(w, r, "pool", &req) {
		return
	}
	lbID := req.LoadbalancerID
	s.octaviaMutate(w, r, c, func(o *model.OctaviaLB) bool { return o.Listener(req.ListenerID) != nil }, lbID, func(rec *model.LBRecord, next *model.OctaviaLB) (int, func(*model.LBRecord) any, error) {
		if req.ListenerID != "" {
			l := next.Listener(req.ListenerID)
			if l == nil {
				return 0, nil, octaviaErr{http.StatusNotFound, "Listener " + req.ListenerID + " not found."}
			}
			if p := next.PoolOf(l.ID); p != nil {
				return 0, nil, octaviaErr{http.StatusConflict, fmt.Sprintf("Listener %s already has default pool %s.", l.ID, p.ID)}
			}
		}
		p := s.poolFromOptsLocked(req, req.ListenerID)
		next.Pools = append(next.Pools, p)
		if l := next.Listener(req.ListenerID); l != nil {
			l.DefaultPoolID = p.ID
		}
		return http.StatusCreated, func(shown *model.LBRecord) any {
			return map[string]any{"pool": octaviaPoolWire(shown, shown.Octavia.Pool(p.ID), time.Now())}
		}, nil
	})
}

func (s *Front) octaviaUpdatePool(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	var req pools.UpdateOpts
	if !octaviaDecode(w, r, "pool", &req) {
		return
	}
	s.octaviaMutate(w, r, c, func(o *model.OctaviaLB) bool { return o.Pool(id) != nil }, "", func(rec *model.LBRecord, next *model.OctaviaLB) (int, func(*model.LBRecord) any, error) {
		p := next.Pool(id)
		if p == nil {
			return 0, nil, octaviaErr{http.StatusNotFound, "Pool " + id + " not found."}
		}
		if req.Name != nil {
			p.Name = *req.Name
		}
		if req.LBMethod != "" {
			p.LBAlgorithm = string(req.LBMethod)
		}
		if req.Tags != nil {
			p.Tags = *req.Tags
		}
		return http.StatusOK, func(shown *model.LBRecord) any {
			return map[string]any{"pool": octaviaPoolWire(shown, shown.Octavia.Pool(id), time.Now())}
		}, nil
	})
}

func (s *Front) octaviaDeletePool(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	s.octaviaMutate(w, r, c, func(o *model.OctaviaLB) bool { return o.Pool(id) != nil }, "", func(rec *model.LBRecord, next *model.OctaviaLB) (int, func(*model.LBRecord) any, error) {
		next.Pools = slices.DeleteFunc(next.Pools, func(p *model.OctaviaPool) bool { return p.ID == id })
		for _, l := range next.Listeners {
			if l.DefaultPoolID == id {
				l.DefaultPoolID = ""
			}
		}
		return http.StatusNoContent, noBody, nil
	})
}

func (s *Front) octaviaListMembers(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	if _, ok := octaviaQuery(w, r); !ok {
		return
	}
	if _, ok := s.ApplyFault(w, r, c, api.OpGetLoadBalancer, func(ref string) bool {
		lb := s.octaviaFindLocked(func(o *model.OctaviaLB) bool { return o.Pool(id) != nil })
		return lb != nil && (lb.ID == ref || lb.Name == ref)
	}); !ok {
		return
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	lb := s.octaviaFindLocked(func(o *model.OctaviaLB) bool { return o.Pool(id) != nil })
	if lb == nil {
		octaviaNotFound(w, "Pool", id)
		return
	}
	now := time.Now()
	out := []map[string]any{}
	for _, m := range lb.Octavia.Pool(id).Members {
		out = append(out, octaviaMemberWire(lb, m, now))
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"members": out, "members_links": []any{}})
}

// octaviaBatchMembers replaces a pool's members: those the request names
// by address and port keep their id, the rest are new or gone. Octavia
// answers 202 and applies it asynchronously.
func (s *Front) octaviaBatchMembers(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	var req []pools.BatchUpdateMemberOpts
	if !octaviaDecode(w, r, "members", &req) {
		return
	}
	s.octaviaMutate(w, r, c, func(o *model.OctaviaLB) bool { return o.Pool(id) != nil }, "", func(rec *model.LBRecord, next *model.OctaviaLB) (int, func(*model.LBRecord) any, error) {
		p := next.Pool(id)
		if p == nil {
			return 0, nil, octaviaErr{http.StatusNotFound, "Pool " + id + " not found."}
		}
		var members []model.OctaviaMember
		for _, m := range req {
			nm := model.OctaviaMember{Address: m.Address, ProtocolPort: m.ProtocolPort, Weight: weightOr(m.Weight), MonitorPort: m.MonitorPort, Tags: m.Tags}
			if m.Name != nil {
				nm.Name = *m.Name
			}
			if m.SubnetID != nil {
				nm.SubnetID = *m.SubnetID
			}
			if j := slices.IndexFunc(p.Members, func(o model.OctaviaMember) bool { return o.Address == m.Address && o.ProtocolPort == m.ProtocolPort }); j >= 0 {
				nm.ID = p.Members[j].ID
			} else {
				nm.ID = s.newOctaviaIDLocked("member")
			}
			members = append(members, nm)
		}
		p.Members = members
		return http.StatusAccepted, noBody, nil
	})
}

func (s *Front) octaviaGetMonitor(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	hasMonitor := func(o *model.OctaviaLB) bool {
		return slices.ContainsFunc(o.Pools, func(p *model.OctaviaPool) bool { return p.Monitor != nil && p.Monitor.ID == id })
	}
	if _, ok := s.ApplyFault(w, r, c, api.OpGetLoadBalancer, func(ref string) bool {
		lb := s.octaviaFindLocked(hasMonitor)
		return lb != nil && (lb.ID == ref || lb.Name == ref)
	}); !ok {
		return
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	lb := s.octaviaFindLocked(hasMonitor)
	if lb == nil {
		octaviaNotFound(w, "Health Monitor", id)
		return
	}
	for _, p := range lb.Octavia.Pools {
		if p.Monitor != nil && p.Monitor.ID == id {
			model.WriteJSON(w, http.StatusOK, map[string]any{"healthmonitor": octaviaMonitorWire(lb, p, time.Now())})
			return
		}
	}
}

func (s *Front) octaviaCreateMonitor(w http.ResponseWriter, r *http.Request, c *model.Call) {
	var req monitors.CreateOpts
	if !octaviaDecode(w, r, "healthmonitor", &req) {
		return
	}
	s.octaviaMutate(w, r, c, func(o *model.OctaviaLB) bool { return o.Pool(req.PoolID) != nil }, "", func(rec *model.LBRecord, next *model.OctaviaLB) (int, func(*model.LBRecord) any, error) {
		p := next.Pool(req.PoolID)
		if p == nil {
			return 0, nil, octaviaErr{http.StatusNotFound, "Pool " + req.PoolID + " not found."}
		}
		if p.Monitor != nil {
			return 0, nil, octaviaErr{http.StatusConflict, fmt.Sprintf("This Pool %s already has a Health Monitor %s.", p.ID, p.Monitor.ID)}
		}
		p.Monitor = s.monitorFromOptsLocked(req)
		return http.StatusCreated, func(shown *model.LBRecord) any {
			return map[string]any{"healthmonitor": octaviaMonitorWire(shown, shown.Octavia.Pool(p.ID), time.Now())}
		}, nil
	})
}

func (s *Front) octaviaUpdateMonitor(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	var req monitors.UpdateOpts
	if !octaviaDecode(w, r, "healthmonitor", &req) {
		return
	}
	s.octaviaMonitorChange(w, r, c, id, func(p *model.OctaviaPool) (int, any) {
		m := p.Monitor
		if req.Name != nil {
			m.Name = *req.Name
		}
		if req.Delay != 0 {
			m.Delay = req.Delay
		}
		if req.Timeout != 0 {
			m.Timeout = req.Timeout
		}
		if req.MaxRetries != 0 {
			m.MaxRetries = req.MaxRetries
		}
		if req.MaxRetriesDown != 0 {
			m.MaxRetriesDown = req.MaxRetriesDown
		}
		return http.StatusOK, p.ID
	})
}

func (s *Front) octaviaDeleteMonitor(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	s.octaviaMonitorChange(w, r, c, id, func(p *model.OctaviaPool) (int, any) {
		p.Monitor = nil
		return http.StatusNoContent, nil
	})
}

// octaviaMonitorChange changes the health monitor id through its pool;
// change returns the status and, to answer with the monitor, the pool's id.
func (s *Front) octaviaMonitorChange(w http.ResponseWriter, r *http.Request, c *model.Call, id string, change func(*model.OctaviaPool) (int, any)) {
	poolOf := func(o *model.OctaviaLB) *model.OctaviaPool {
		for _, p := range o.Pools {
			if p.Monitor != nil && p.Monitor.ID == id {
				return p
			}
		}
		return nil
	}
	s.octaviaMutate(w, r, c, func(o *model.OctaviaLB) bool { return poolOf(o) != nil }, "", func(rec *model.LBRecord, next *model.OctaviaLB) (int, func(*model.LBRecord) any, error) {
		p := poolOf(next)
		if p == nil {
			return 0, nil, octaviaErr{http.StatusNotFound, "Health Monitor " + id + " not found."}
		}
		status, poolID := change(p)
		return status, func(shown *model.LBRecord) any {
			if poolID == nil {
				return nil
			}
			return map[string]any{"healthmonitor": octaviaMonitorWire(shown, shown.Octavia.Pool(poolID.(string)), time.Now())}
		}, nil
	})
}
