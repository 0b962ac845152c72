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
	"net/http"
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
	var id string
	s.octaviaMutate(w, r, c, model.OctaviaRef{LB: req.LoadbalancerID, Listener: req.ListenerID}, http.StatusCreated, func(ch model.OctaviaChange) (model.LBRecord, error) {
		p := s.poolFromOpts(req, req.ListenerID)
		id = p.ID
		return s.AddOctaviaPool(ch, p)
	}, func(shown *model.LBRecord) any {
		return map[string]any{"pool": octaviaPoolWire(shown, shown.Octavia.Pool(id), time.Now())}
	})
}

func (s *Front) octaviaUpdatePool(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	var req pools.UpdateOpts
	if !octaviaDecode(w, r, "pool", &req) {
		return
	}
	s.octaviaMutate(w, r, c, model.OctaviaRef{Pool: id}, http.StatusOK, func(ch model.OctaviaChange) (model.LBRecord, error) {
		return s.UpdateOctaviaPool(ch, id, func(p *model.OctaviaPool) {
			if req.Name != nil {
				p.Name = *req.Name
			}
			if req.LBMethod != "" {
				p.LBAlgorithm = string(req.LBMethod)
			}
			if req.Persistence != nil {
				p.Persistence = &model.OctaviaPersistence{Type: req.Persistence.Type, CookieName: req.Persistence.CookieName}
			}
			if req.Tags != nil {
				p.Tags = *req.Tags
			}
		})
	}, func(shown *model.LBRecord) any {
		return map[string]any{"pool": octaviaPoolWire(shown, shown.Octavia.Pool(id), time.Now())}
	})
}

func (s *Front) octaviaDeletePool(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	s.octaviaMutate(w, r, c, model.OctaviaRef{Pool: id}, http.StatusNoContent, func(ch model.OctaviaChange) (model.LBRecord, error) {
		return noRecord(s.DeleteOctaviaPool(ch, id))
	}, nil)
}

func (s *Front) octaviaListMembers(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	if _, ok := octaviaQuery(w, r); !ok {
		return
	}
	ref := model.OctaviaRef{Pool: id}
	if _, ok := s.ApplyFault(w, r, c, api.OpGetLoadBalancer, s.AboutOctaviaHolder(ref)); !ok {
		return
	}
	lb, ok := s.OctaviaHolder(ref)
	if !ok {
		octaviaNotFound(w, "Pool", id)
		return
	}
	now := time.Now()
	out := []map[string]any{}
	for _, m := range lb.Octavia.Pool(id).Members {
		out = append(out, octaviaMemberWire(&lb.LBRecord, m, now))
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
	var members []model.OctaviaMember
	for _, m := range req {
		nm := model.OctaviaMember{Address: m.Address, ProtocolPort: m.ProtocolPort, Weight: weightOr(m.Weight), MonitorPort: m.MonitorPort, Tags: m.Tags}
		if m.Name != nil {
			nm.Name = *m.Name
		}
		if m.SubnetID != nil {
			nm.SubnetID = *m.SubnetID
		}
		members = append(members, nm)
	}
	s.octaviaMutate(w, r, c, model.OctaviaRef{Pool: id}, http.StatusAccepted, func(ch model.OctaviaChange) (model.LBRecord, error) {
		return noRecord(s.SetOctaviaMembers(ch, id, members))
	}, nil)
}

func (s *Front) octaviaGetMonitor(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	ref := model.OctaviaRef{Monitor: id}
	if _, ok := s.ApplyFault(w, r, c, api.OpGetLoadBalancer, s.AboutOctaviaHolder(ref)); !ok {
		return
	}
	lb, ok := s.OctaviaHolder(ref)
	if !ok {
		octaviaNotFound(w, "Health Monitor", id)
		return
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"healthmonitor": octaviaMonitorWire(&lb.LBRecord, lb.Octavia.PoolOfMonitor(id), time.Now())})
}

func (s *Front) octaviaCreateMonitor(w http.ResponseWriter, r *http.Request, c *model.Call) {
	var req monitors.CreateOpts
	if !octaviaDecode(w, r, "healthmonitor", &req) {
		return
	}
	s.octaviaMutate(w, r, c, model.OctaviaRef{Pool: req.PoolID}, http.StatusCreated, func(ch model.OctaviaChange) (model.LBRecord, error) {
		return s.AddOctaviaMonitor(ch, req.PoolID, s.monitorFromOpts(req))
	}, func(shown *model.LBRecord) any {
		return map[string]any{"healthmonitor": octaviaMonitorWire(shown, shown.Octavia.Pool(req.PoolID), time.Now())}
	})
}

func (s *Front) octaviaUpdateMonitor(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	var req monitors.UpdateOpts
	if !octaviaDecode(w, r, "healthmonitor", &req) {
		return
	}
	s.octaviaMutate(w, r, c, model.OctaviaRef{Monitor: id}, http.StatusOK, func(ch model.OctaviaChange) (model.LBRecord, error) {
		return s.UpdateOctaviaMonitor(ch, id, func(m *model.OctaviaMonitor) {
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
		})
	}, func(shown *model.LBRecord) any {
		return map[string]any{"healthmonitor": octaviaMonitorWire(shown, shown.Octavia.PoolOfMonitor(id), time.Now())}
	})
}

func (s *Front) octaviaDeleteMonitor(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	s.octaviaMutate(w, r, c, model.OctaviaRef{Monitor: id}, http.StatusNoContent, func(ch model.OctaviaChange) (model.LBRecord, error) {
		return noRecord(s.DeleteOctaviaMonitor(ch, id))
	}, nil)
}
