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
	"slices"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// Octavia's changes. The objects a change adds come from the caller with
// their IDs (NewOctaviaID) and become the cloud's: the caller keeps no
// reference to them. Each change answers with the load balancer as the
// client asked for it (an ignore fault's part included), deep-copied.

// CreateOctaviaLoadBalancer creates the load balancer name with the tree
// o, fully populated or empty; f is the fault that fired on the call.
func (s *Cloud) CreateOctaviaLoadBalancer(name string, f *api.Fault, o *OctaviaLB) (LBRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ip, err := s.allocateLBIPLocked()
	if err != nil {
		return LBRecord{}, &Error{Kind: KindConflict, Msg: "Quota has been met for resources: " + err.Error(), Err: err}
	}
	rec := &LBRecord{Name: name, ID: s.newLBIDLocked(), IP: ip.String(), CreatedAt: time.Now().UTC()}
	return s.octaviaChangeLocked(f, rec, true, o)
}

// UpdateOctaviaLoadBalancer changes the load balancer itself by update.
func (s *Cloud) UpdateOctaviaLoadBalancer(ch OctaviaChange, update func(*OctaviaLB)) (LBRecord, error) {
	return s.changeOctavia(ch, func(next *OctaviaLB) error {
		update(next)
		return nil
	})
}

// DeleteOctaviaLoadBalancer deletes the load balancer id made through
// Octavia; without cascade, Octavia refuses while it has listeners or
// pools.
func (s *Cloud) DeleteOctaviaLoadBalancer(id string, cascade bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	lb := s.octaviaLBLocked(id)
	if lb == nil {
		return Errorf(KindNotFound, "Load Balancer %s not found.", id)
	}
	if st := lb.Octavia.Status(time.Now()); st != OctaviaActive {
		return Errorf(KindConflict, "Invalid state %s of loadbalancer resource %s", st, id)
	}
	if !cascade && len(lb.Octavia.Listeners)+len(lb.Octavia.Pools) > 0 {
		return Errorf(KindInvalid, "Validation failure: Cannot delete Load Balancer %s - it has children", id)
	}
	s.closeLBLocked(lb.ID)
	s.st.LoadBalancers = slices.DeleteFunc(s.st.LoadBalancers, func(l *LBRecord) bool { return l == lb })
	return saveFailed(s.saveLocked())
}

// AddOctaviaListener adds the listener l.
func (s *Cloud) AddOctaviaListener(ch OctaviaChange, l *OctaviaListener) (LBRecord, error) {
	return s.changeOctavia(ch, func(next *OctaviaLB) error {
		next.Listeners = append(next.Listeners, l)
		return nil
	})
}

// UpdateOctaviaListener changes the listener id by update.
func (s *Cloud) UpdateOctaviaListener(ch OctaviaChange, id string, update func(*OctaviaListener)) (LBRecord, error) {
	return s.changeOctavia(ch, func(next *OctaviaLB) error {
		l := next.Listener(id)
		if l == nil {
			return Errorf(KindNotFound, "Listener %s not found.", id)
		}
		update(l)
		return nil
	})
}

// DeleteOctaviaListener deletes the listener id. Its pool stays, unbound,
// as in Octavia.
func (s *Cloud) DeleteOctaviaListener(ch OctaviaChange, id string) error {
	_, err := s.changeOctavia(ch, func(next *OctaviaLB) error {
		next.Listeners = slices.DeleteFunc(next.Listeners, func(l *OctaviaListener) bool { return l.ID == id })
		for _, p := range next.Pools {
			if p.ListenerID == id {
				p.ListenerID = ""
			}
		}
		return nil
	})
	return err
}

// AddOctaviaPool adds the pool p, as the default pool of its listener if
// it names one: a listener has one default pool at most.
func (s *Cloud) AddOctaviaPool(ch OctaviaChange, p *OctaviaPool) (LBRecord, error) {
	return s.changeOctavia(ch, func(next *OctaviaLB) error {
		if p.ListenerID != "" {
			l := next.Listener(p.ListenerID)
			if l == nil {
				return Errorf(KindNotFound, "Listener %s not found.", p.ListenerID)
			}
			if had := next.PoolOf(l.ID); had != nil {
				return Errorf(KindConflict, "Listener %s already has default pool %s.", l.ID, had.ID)
			}
		}
		next.Pools = append(next.Pools, p)
		if l := next.Listener(p.ListenerID); l != nil {
			l.DefaultPoolID = p.ID
		}
		return nil
	})
}

// UpdateOctaviaPool changes the pool id by update.
func (s *Cloud) UpdateOctaviaPool(ch OctaviaChange, id string, update func(*OctaviaPool)) (LBRecord, error) {
	return s.changeOctavia(ch, func(next *OctaviaLB) error {
		p := next.Pool(id)
		if p == nil {
			return Errorf(KindNotFound, "Pool %s not found.", id)
		}
		update(p)
		return nil
	})
}

// DeleteOctaviaPool deletes the pool id, and unbinds its listener.
func (s *Cloud) DeleteOctaviaPool(ch OctaviaChange, id string) error {
	_, err := s.changeOctavia(ch, func(next *OctaviaLB) error {
		next.Pools = slices.DeleteFunc(next.Pools, func(p *OctaviaPool) bool { return p.ID == id })
		for _, l := range next.Listeners {
			if l.DefaultPoolID == id {
				l.DefaultPoolID = ""
			}
		}
		return nil
	})
	return err
}

// SetOctaviaMembers replaces the members of the pool poolID: a member at
// the address and port of one it has keeps that one's ID, the others get
// new ones (their IDs are ignored).
func (s *Cloud) SetOctaviaMembers(ch OctaviaChange, poolID string, members []OctaviaMember) error {
	_, err := s.changeOctavia(ch, func(next *OctaviaLB) error {
		p := next.Pool(poolID)
		if p == nil {
			return Errorf(KindNotFound, "Pool %s not found.", poolID)
		}
		var out []OctaviaMember
		for _, m := range members {
			if j := slices.IndexFunc(p.Members, func(o OctaviaMember) bool { return o.Address == m.Address && o.ProtocolPort == m.ProtocolPort }); j >= 0 {
				m.ID = p.Members[j].ID
			} else {
				m.ID = s.newOctaviaIDLocked("member")
			}
			out = append(out, m)
		}
		p.Members = out
		return nil
	})
	return err
}

// AddOctaviaMonitor gives the pool poolID the health monitor m: a pool
// has one at most.
func (s *Cloud) AddOctaviaMonitor(ch OctaviaChange, poolID string, m *OctaviaMonitor) (LBRecord, error) {
	return s.changeOctavia(ch, func(next *OctaviaLB) error {
		p := next.Pool(poolID)
		if p == nil {
			return Errorf(KindNotFound, "Pool %s not found.", poolID)
		}
		if p.Monitor != nil {
			return Errorf(KindConflict, "This Pool %s already has a Health Monitor %s.", p.ID, p.Monitor.ID)
		}
		p.Monitor = m
		return nil
	})
}

// UpdateOctaviaMonitor changes the health monitor id by update.
func (s *Cloud) UpdateOctaviaMonitor(ch OctaviaChange, id string, update func(*OctaviaMonitor)) (LBRecord, error) {
	return s.changeOctavia(ch, func(next *OctaviaLB) error {
		p := next.PoolOfMonitor(id)
		if p == nil {
			return Errorf(KindNotFound, "Health Monitor %s not found.", id)
		}
		update(p.Monitor)
		return nil
	})
}

// DeleteOctaviaMonitor deletes the health monitor id.
func (s *Cloud) DeleteOctaviaMonitor(ch OctaviaChange, id string) error {
	_, err := s.changeOctavia(ch, func(next *OctaviaLB) error {
		p := next.PoolOfMonitor(id)
		if p == nil {
			return Errorf(KindNotFound, "Health Monitor %s not found.", id)
		}
		p.Monitor = nil
		return nil
	})
	return err
}

// changeOctavia makes a change to the load balancer ch names, as found
// again under the lock: edit changes a copy of its tree, or refuses.
func (s *Cloud) changeOctavia(ch OctaviaChange, edit func(next *OctaviaLB) error) (LBRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.lBByNameLocked(ch.Name)
	if rec == nil || rec.Octavia == nil {
		return LBRecord{}, Errorf(KindNotFound, "Load Balancer %s not found.", ch.LBID)
	}
	next := rec.Octavia.Clone()
	if err := edit(next); err != nil {
		return LBRecord{}, err
	}
	return s.octaviaChangeLocked(ch.Fault, rec, false, next)
}

// octaviaChangeLocked makes a change to the load balancer rec (isNew: one
// the change creates): it is refused while rec is PENDING_*, the ignore
// fault f drops its part, the native spec is derived and the listeners
// opened. It answers rec as the change asked for it.
func (s *Cloud) octaviaChangeLocked(f *api.Fault, rec *LBRecord, isNew bool, next *OctaviaLB) (LBRecord, error) {
	now := time.Now()
	var before *OctaviaLB
	if !isNew {
		before = rec.Octavia
		if st := before.Status(now); st != OctaviaActive {
			return LBRecord{}, Errorf(KindConflict, "Invalid state %s of loadbalancer resource %s", st, rec.ID)
		}
	}
	if err := validateOctavia(next); err != nil {
		return LBRecord{}, err
	}
	asked := next.Clone()
	octaviaIgnore(f, before, next)
	upd := *rec
	upd.Octavia = next
	spec, err := s.octaviaSpecLocked(upd.Name, next)
	if err != nil {
		return LBRecord{}, &Error{Kind: KindInvalid, Err: err}
	}
	upd.LoadBalancerSpec = spec
	if err := s.openLocked(&upd, isNew); err != nil {
		// Whatever kept the listeners shut, Octavia's client hears a
		// conflict: the change cannot be made as things are.
		return LBRecord{}, &Error{Kind: KindConflict, Msg: "fakecloud could not open the listeners: " + err.Error(), Err: err}
	}
	pending := OctaviaPendingUpdate
	if isNew {
		pending = OctaviaPendingCreate
	}
	for _, o := range []*OctaviaLB{next, asked} {
		o.Pending, o.BusyUntil, o.UpdatedAt = pending, now.Add(octaviaBusy), now.UTC()
	}
	*rec = upd
	if isNew {
		s.st.LoadBalancers = append(s.st.LoadBalancers, rec)
		s.st.LastLBIP = rec.IP
	}
	if err := s.saveLocked(); err != nil {
		return LBRecord{}, saveFailed(err)
	}
	shown := octaviaCopy(rec)
	shown.Octavia = asked
	return shown, nil
}
