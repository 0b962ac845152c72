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
	"strings"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// Octavia's operations on the cloud: each takes the lock, makes its change
// to a copy of the load balancer's Octavia tree, keeps it only if Octavia
// would accept it and the listeners open, persists it and answers with
// copies. Refusals are in Octavia's words (the front answers an Octavia
// client with them), their Kind saying which status they are.

// octaviaBusy is how long a change keeps a load balancer PENDING_*: as in
// Octavia, a further change meanwhile is refused, so a client that does
// not wait for ACTIVE fails here as it would there. The OpenStack CCM
// first polls one second after a change.
const octaviaBusy = 300 * time.Millisecond

// OctaviaLBView is an Octavia load balancer as a read answers it: its
// record, deep-copied, and the native view, for a corrupt fault to
// falsify.
type OctaviaLBView struct {
	LBRecord
	Native api.LoadBalancer
}

// OctaviaRef names the load balancer an Octavia call is about: by its ID,
// or by a listener, pool or health monitor it holds ("" names nothing).
type OctaviaRef struct {
	LB, Listener, Pool, Monitor string
}

func (o *OctaviaLB) holds(ref OctaviaRef) bool {
	return (ref.Listener != "" && o.Listener(ref.Listener) != nil) ||
		(ref.Pool != "" && o.Pool(ref.Pool) != nil) ||
		(ref.Monitor != "" && o.PoolOfMonitor(ref.Monitor) != nil)
}

// OctaviaChange is the load balancer a change is made to: found by name,
// as it was before the call's fault fired.
type OctaviaChange struct {
	Name string
	// LBID is the load balancer ID the request gave, "" for one it named
	// by an object: a refusal of a load balancer gone meanwhile says it.
	LBID string
	// Fault fired on the call, if any: an ignore fault drops its part of
	// the change.
	Fault *api.Fault
}

// NewOctaviaID is a new ID for an Octavia listener, pool, member or
// health monitor: prefix, and what a new load balancer ID would have.
func (s *Cloud) NewOctaviaID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newOctaviaIDLocked(prefix)
}

func (s *Cloud) newOctaviaIDLocked(prefix string) string {
	return prefix + "-" + strings.TrimPrefix(s.newLBIDLocked(), "lb-")
}

// octaviaLBLocked is the load balancer id made through Octavia, or nil.
func (s *Cloud) octaviaLBLocked(id string) *LBRecord {
	for _, lb := range s.st.LoadBalancers {
		if lb.ID == id && lb.Octavia != nil {
			return lb
		}
	}
	return nil
}

// octaviaHolderLocked is the Octavia load balancer holding an object ref
// names, or nil.
func (s *Cloud) octaviaHolderLocked(ref OctaviaRef) *LBRecord {
	for _, lb := range s.st.LoadBalancers {
		if lb.Octavia != nil && lb.Octavia.holds(ref) {
			return lb
		}
	}
	return nil
}

// octaviaCopy is rec deep-copied, to hand out without sharing the state.
func octaviaCopy(rec *LBRecord) LBRecord {
	out := *rec
	out.LoadBalancerSpec = CopySpec(rec.LoadBalancerSpec)
	out.Octavia = rec.Octavia.Clone()
	return out
}

func (s *Cloud) octaviaViewLocked(rec *LBRecord) OctaviaLBView {
	return OctaviaLBView{LBRecord: octaviaCopy(rec), Native: s.lBViewLocked(rec)}
}

// OctaviaLBs are the load balancers made through Octavia, in creation
// order.
func (s *Cloud) OctaviaLBs() []OctaviaLBView {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []OctaviaLBView
	for _, lb := range s.st.LoadBalancers {
		if lb.Octavia != nil {
			out = append(out, s.octaviaViewLocked(lb))
		}
	}
	return out
}

// OctaviaLB is the load balancer id made through Octavia.
func (s *Cloud) OctaviaLB(id string) (OctaviaLBView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lb := s.octaviaLBLocked(id)
	if lb == nil {
		return OctaviaLBView{}, false
	}
	return s.octaviaViewLocked(lb), true
}

// OctaviaHolder is the Octavia load balancer holding the object ref names.
func (s *Cloud) OctaviaHolder(ref OctaviaRef) (OctaviaLBView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lb := s.octaviaHolderLocked(ref)
	if lb == nil {
		return OctaviaLBView{}, false
	}
	return s.octaviaViewLocked(lb), true
}

// OctaviaLBName is the name of the Octavia load balancer ref names, by its
// ID or else by an object it holds: what a change's fault is about.
func (s *Cloud) OctaviaLBName(ref OctaviaRef) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.octaviaLBLocked(ref.LB)
	if rec == nil {
		rec = s.octaviaHolderLocked(ref)
	}
	if rec == nil {
		return "", Errorf(KindNotFound, "Load Balancer %s not found.", ref.LB)
	}
	return rec.Name, nil
}

// The fault matchers of Octavia's calls. They run under the lock, as
// ApplyFault asks them.

// AboutSomeLB is about a list of load balancers: a fault's Instance names
// one the cloud has, by name or ID.
func (s *Cloud) AboutSomeLB() func(ref string) bool {
	return func(ref string) bool { return s.lBByRefLocked(ref) != nil }
}

// AboutLBCalled is about a call naming the load balancer id: a fault's
// Instance gives that, or the name of the load balancer id refers to.
func (s *Cloud) AboutLBCalled(id string) func(ref string) bool {
	return func(ref string) bool {
		lb := s.lBByRefLocked(id)
		return ref == id || (lb != nil && lb.Name == ref)
	}
}

// AboutLBFound is about the load balancer lbRef refers to, if there is
// one: a fault's Instance gives its ID or name.
func (s *Cloud) AboutLBFound(lbRef string) func(ref string) bool {
	return func(ref string) bool {
		lb := s.lBByRefLocked(lbRef)
		return lb != nil && (lb.ID == ref || lb.Name == ref)
	}
}

// AboutOctaviaHolder is about the Octavia load balancer holding the
// object ref names: a fault's Instance gives its ID or name.
func (s *Cloud) AboutOctaviaHolder(ref OctaviaRef) func(ref string) bool {
	return func(fref string) bool {
		lb := s.octaviaHolderLocked(ref)
		return lb != nil && (lb.ID == fref || lb.Name == fref)
	}
}
