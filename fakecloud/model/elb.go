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
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// Elastic Load Balancing's classic load balancers, as the ELB front
// changes and shows them. The native spec of each is derived from its
// classic view on every change; an ignore fault leaves the part of a
// change it drops as it was.

// Why an Elastic Load Balancing operation failed, beyond its Kind.
var (
	// ErrNoSuchLB is a load balancer of the call's kind that does not exist.
	ErrNoSuchLB = errors.New("no such load balancer")
	// ErrNameTaken is a name another object, or one with other settings, has.
	ErrNameTaken = errors.New("name taken")
	// ErrNoSuchInstance is an instance that cannot take traffic: unknown
	// or terminated.
	ErrNoSuchInstance = errors.New("no such instance")
)

// ClassicLBView is a classic load balancer as the ELB front answers it:
// copies, with the name of its first security group (its source group).
type ClassicLBView struct {
	Name      string
	ID        string
	CreatedAt time.Time
	ELB       ClassicLB
	// SourceGroup is the name of its first security group, if that
	// exists (HasSourceGroup).
	SourceGroup    string
	HasSourceGroup bool
}

func (s *Cloud) classicViewLocked(rec *LBRecord) ClassicLBView {
	v := ClassicLBView{Name: rec.Name, ID: rec.ID, CreatedAt: rec.CreatedAt, ELB: *rec.ELB.Clone()}
	if len(rec.ELB.SecurityGroups) > 0 {
		if g := s.securityGroupLocked(rec.ELB.SecurityGroups[0]); g != nil {
			v.SourceGroup, v.HasSourceGroup = g.Name, true
		}
	}
	return v
}

// classicLocked is the classic load balancer called name, or nil.
func (s *Cloud) classicLocked(name string) *LBRecord {
	rec := s.lBByNameLocked(name)
	if rec == nil || rec.ELB == nil {
		return nil
	}
	return rec
}

func classicNotFound(name string) error {
	return awsFailed(KindNotFound, ErrNoSuchLB, "There is no ACTIVE Load Balancer named '%s'", name)
}

// ClassicLBs are the classic load balancers, in creation order.
func (s *Cloud) ClassicLBs() []ClassicLBView {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ClassicLBView
	for _, rec := range s.st.LoadBalancers {
		if rec.ELB != nil {
			out = append(out, s.classicViewLocked(rec))
		}
	}
	return out
}

// ClassicLB is the classic load balancer called name.
func (s *Cloud) ClassicLB(name string) (ClassicLBView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.classicLocked(name)
	if rec == nil {
		return ClassicLBView{}, classicNotFound(name)
	}
	return s.classicViewLocked(rec), nil
}

// AboutELB is the fault matcher of an Elastic Load Balancing call about
// the load balancer called name (or of that ARN): a fault's Instance may
// give it, or a reference to it.
func (s *Cloud) AboutELB(name string) func(ref string) bool {
	return func(ref string) bool {
		lb := s.lBByRefLocked(ref)
		return ref == name || (lb != nil && lb.Name == name)
	}
}

// checkGroupsLocked refuses security groups that do not exist, as
// Elastic Load Balancing does.
func (s *Cloud) checkGroupsLocked(ids []string) error {
	for _, id := range ids {
		if s.securityGroupLocked(id) == nil {
			return awsFailed(KindNotFound, ErrNoSuchGroup, "One or more security groups ('%s') are invalid", id)
		}
	}
	return nil
}

// CreateClassicLB makes the classic load balancer name as next says, its
// security groups checked first, and returns its DNS name. One of that
// name with the same listeners is answered as it is; with others, or one
// of another kind, the name is taken.
func (s *Cloud) CreateClassicLB(name string, next ClassicLB, f *api.Fault) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkGroupsLocked(next.SecurityGroups); err != nil {
		return "", err
	}
	rec := s.lBByNameLocked(name)
	switch {
	case rec != nil && rec.ELB == nil:
		return "", awsFailed(KindConflict, ErrNameTaken, "A load balancer of another kind is named '%s'", name)
	case rec != nil && !slices.Equal(rec.ELB.Listeners, next.Listeners):
		return "", awsFailed(KindConflict, ErrNameTaken, "Load balancer %s already exists with different listeners", name)
	case rec != nil:
		return rec.ELB.DNSName, nil
	}
	rec, err := s.newLBLocked(name)
	if err != nil {
		return "", err
	}
	if err := s.commitClassicLocked(f, rec, true, &next); err != nil {
		return "", err
	}
	return rec.ELB.DNSName, saveFailed(s.saveLocked())
}

// newLBLocked is a new load balancer record called name, with an address
// of the pool, not yet stored.
func (s *Cloud) newLBLocked(name string) (*LBRecord, error) {
	ip, err := s.allocateLBIPLocked()
	if err != nil {
		return nil, awsFailed(KindConflict, ErrPoolExhausted, "%v", err)
	}
	return &LBRecord{Name: name, ID: s.newLBIDLocked(), IP: ip.String(), CreatedAt: time.Now().UTC()}, nil
}

// ClassicChange is a change to a classic load balancer in the making:
// Next is a copy of its classic view to change, Name its name. Its
// methods answer what a change must know of the rest of the cloud.
type ClassicChange struct {
	Name string
	Next *ClassicLB
	c    *Cloud
}

// InstanceLive reports whether instance id exists and is not terminated.
func (ch *ClassicChange) InstanceLive(id string) bool {
	inst := ch.c.instanceByIDLocked(id)
	return inst != nil && inst.State != api.StateTerminated
}

// CheckGroups refuses security groups that do not exist (ErrNoSuchGroup).
func (ch *ClassicChange) CheckGroups(ids []string) error { return ch.c.checkGroupsLocked(ids) }

// ChangeClassicLB changes the classic load balancer called name: change
// makes the change to a copy (its error, of any type, is returned as it
// is), then the load balancer takes it, with what an ignore fault f drops
// left as it was. change runs under the cloud's lock; for a load balancer
// that does not exist it is run on an empty one, that the request is read
// whole, before the answer that it does not exist.
func (s *Cloud) ChangeClassicLB(name string, f *api.Fault, change func(ch *ClassicChange) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.classicLocked(name)
	if rec == nil {
		_ = change(&ClassicChange{Next: &ClassicLB{}, c: s})
		return classicNotFound(name)
	}
	next := rec.ELB.Clone()
	if err := change(&ClassicChange{Name: rec.Name, Next: next, c: s}); err != nil {
		return err
	}
	if err := s.commitClassicLocked(f, rec, false, next); err != nil {
		return err
	}
	return saveFailed(s.saveLocked())
}

// DeleteClassicLB deletes the classic load balancer called name; one
// that does not exist is deleted already.
func (s *Cloud) DeleteClassicLB(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.classicLocked(name)
	if rec == nil {
		return nil
	}
	return s.deleteLBLocked(rec)
}

// deleteLBLocked closes rec's listeners and forgets it.
func (s *Cloud) deleteLBLocked(rec *LBRecord) error {
	s.closeLBLocked(rec.ID)
	s.st.LoadBalancers = slices.DeleteFunc(s.st.LoadBalancers, func(l *LBRecord) bool { return l == rec })
	return saveFailed(s.saveLocked())
}

// classicIgnore undoes, in next, the part of a change an ignore fault drops.
func classicIgnore(f *api.Fault, before, next *ClassicLB) {
	if f == nil || f.Kind != api.FaultIgnore {
		return
	}
	if before == nil {
		before = &ClassicLB{}
	}
	switch f.Field {
	case api.IgnoreListeners:
		next.Listeners = slices.Clone(before.Listeners)
	case api.IgnoreBackends:
		next.Instances = slices.Clone(before.Instances)
	case api.IgnoreHealthCheck:
		next.HealthCheck = before.HealthCheck
	}
}

// commitClassicLocked makes next rec's classic view, with what an ignore
// fault drops left as it was, and the native spec and listeners to match;
// a new rec is stored. A spec the view does not make is KindInvalid;
// listeners that do not open are the data plane's failure.
func (s *Cloud) commitClassicLocked(f *api.Fault, rec *LBRecord, isNew bool, next *ClassicLB) error {
	var before *ClassicLB
	if !isNew {
		before = rec.ELB
	}
	classicIgnore(f, before, next)
	upd := *rec
	upd.ELB = next
	spec, err := s.classicSpecLocked(next)
	if err != nil {
		return &Error{Kind: KindInvalid, Err: err}
	}
	upd.LoadBalancerSpec = spec
	if err := s.openLocked(&upd, isNew); err != nil {
		return dataplaneFailed(err)
	}
	if isNew {
		upd.ELB.DNSName = s.classicDNSName(upd.Name, upd.ID, upd.ELB.Scheme)
	}
	*rec = upd
	if isNew {
		s.st.LoadBalancers = append(s.st.LoadBalancers, rec)
		s.st.LastLBIP = rec.IP
	}
	return nil
}

// classicDNSName is a classic load balancer's DNS name, as AWS forms it:
// an internal one's starts with "internal-".
func (s *Cloud) classicDNSName(name, id, scheme string) string {
	n := 0
	for _, b := range []byte(awsHash(8, id)) {
		n = n*16 + strings.IndexByte("0123456789abcdef", b)
	}
	prefix := ""
	if scheme == "internal" {
		prefix = "internal-"
	}
	return fmt.Sprintf("%s%s-%d.%s.elb.amazonaws.com", prefix, name, n%2000000000, s.region)
}

// awsHash is a stable hex string made of parts, for the AWS names derived
// from fakecloud's own (DNS names, ARNs); awsquery.Hash is the same.
func awsHash(n int, parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "/")))
	return fmt.Sprintf("%x", h[:])[:n]
}
