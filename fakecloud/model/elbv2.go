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
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// Elastic Load Balancing v2's network load balancers and listeners, as
// the ELBv2 front changes and shows them (target groups are in
// elbv2_targets.go). The native spec of each is derived from its ELBv2
// view, its listeners' target groups and the nodes' group on every change.

// Why an Elastic Load Balancing v2 operation failed, beyond its Kind.
var (
	// ErrNoSuchTargetGroup is a target group that does not exist.
	ErrNoSuchTargetGroup = errors.New("no such target group")
	// ErrTargetGroupTaken is a target group name taken with other settings.
	ErrTargetGroupTaken = errors.New("target group name taken")
	// ErrTargetGroupInUse is a target group a listener forwards to.
	ErrTargetGroupInUse = errors.New("target group in use")
	// ErrNoSuchListener is a listener that does not exist.
	ErrNoSuchListener = errors.New("no such listener")
	// ErrListenerTaken is a port a listener of the load balancer has.
	ErrListenerTaken = errors.New("listener port taken")
)

// networkDefaultAttributes are a network load balancer's attributes as
// AWS makes it.
var networkDefaultAttributes = map[string]string{
	"load_balancing.cross_zone.enabled": "false", "access_logs.s3.enabled": "false",
	"access_logs.s3.bucket": "", "access_logs.s3.prefix": "", "deletion_protection.enabled": "false",
}

// NetworkLBView is a network load balancer as the ELBv2 front answers
// it: copies.
type NetworkLBView struct {
	Name      string
	ID        string
	CreatedAt time.Time
	NLB       NetworkLB
}

// Clone deep-copies n, to hand out without sharing State.
func (n *NetworkLB) Clone() NetworkLB {
	out := *n
	out.Subnets, out.SecurityGroups = slices.Clone(n.Subnets), slices.Clone(n.SecurityGroups)
	out.Listeners, out.Tags = slices.Clone(n.Listeners), slices.Clone(n.Tags)
	out.Attributes = maps.Clone(n.Attributes)
	return out
}

func networkView(rec *LBRecord) NetworkLBView {
	return NetworkLBView{Name: rec.Name, ID: rec.ID, CreatedAt: rec.CreatedAt, NLB: rec.NLB.Clone()}
}

// ELBv2State is what Elastic Load Balancing v2 shows, at one time: the
// network load balancers and the target groups, in creation order.
type ELBv2State struct {
	LBs          []NetworkLBView
	TargetGroups []TargetGroupView
}

// LB is the network load balancer with this ARN or name.
func (v ELBv2State) LB(ref string) (NetworkLBView, bool) {
	i := slices.IndexFunc(v.LBs, func(lb NetworkLBView) bool { return lb.NLB.ARN == ref || lb.Name == ref })
	if i < 0 {
		return NetworkLBView{}, false
	}
	return v.LBs[i], true
}

// TargetGroup is the target group of that ARN.
func (v ELBv2State) TargetGroup(arn string) (TargetGroupView, bool) {
	i := slices.IndexFunc(v.TargetGroups, func(tg TargetGroupView) bool { return tg.ARN == arn })
	if i < 0 {
		return TargetGroupView{}, false
	}
	return v.TargetGroups[i], true
}

// ELBv2 is what Elastic Load Balancing v2 shows now.
func (s *Cloud) ELBv2() ELBv2State {
	s.mu.Lock()
	defer s.mu.Unlock()
	var v ELBv2State
	for _, rec := range s.st.LoadBalancers {
		if rec.NLB != nil {
			v.LBs = append(v.LBs, networkView(rec))
		}
	}
	for _, tg := range s.st.TargetGroups {
		v.TargetGroups = append(v.TargetGroups, s.targetGroupViewLocked(tg))
	}
	return v
}

// networkLocked is the network load balancer with this ARN or name, or nil.
func (s *Cloud) networkLocked(ref string) *LBRecord {
	for _, rec := range s.st.LoadBalancers {
		if rec.NLB != nil && (rec.NLB.ARN == ref || rec.Name == ref) {
			return rec
		}
	}
	return nil
}

func networkNotFound(ref string) error {
	return awsFailed(KindNotFound, ErrNoSuchLB, "One or more load balancers not found: '%s'", ref)
}

// elbv2ARN is an ELBv2 resource's ARN.
func (s *Cloud) elbv2ARN(kind, name, id string) string {
	return fmt.Sprintf("arn:aws:elasticloadbalancing:%s:%s:%s/%s/%s", s.region, api.AWSAccountID, kind, name, id)
}

// NetworkLBRequest is what CreateLoadBalancer asks of a network load
// balancer.
type NetworkLBRequest struct {
	Name, Scheme            string
	Subnets, SecurityGroups []string
	Tags                    []Tag
}

// CreateNetworkLB makes the network load balancer req asks for, its
// security groups checked first. One of that name is answered as it is;
// one of another kind has the name taken.
func (s *Cloud) CreateNetworkLB(req NetworkLBRequest, f *api.Fault) (NetworkLBView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkGroupsLocked(req.SecurityGroups); err != nil {
		return NetworkLBView{}, err
	}
	rec := s.lBByNameLocked(req.Name)
	if rec != nil && rec.NLB == nil {
		return NetworkLBView{}, awsFailed(KindConflict, ErrNameTaken, "A load balancer with the same name '%s' exists, but with different settings", req.Name)
	}
	if rec != nil {
		return networkView(rec), nil
	}
	rec, err := s.newLBLocked(req.Name)
	if err != nil {
		return NetworkLBView{}, err
	}
	hash := awsHash(16, rec.ID)
	next := &NetworkLB{ARN: s.elbv2ARN("loadbalancer/net", req.Name, hash), Scheme: req.Scheme, Subnets: req.Subnets, SecurityGroups: req.SecurityGroups,
		DNSName: fmt.Sprintf("%s-%s.elb.%s.amazonaws.com", req.Name, hash, s.region), Attributes: maps.Clone(networkDefaultAttributes), Tags: req.Tags}
	if err := s.commitNetworkLocked(f, rec, true, next); err != nil {
		return NetworkLBView{}, err
	}
	return networkView(rec), saveFailed(s.saveLocked())
}

// commitNetworkLocked makes next rec's ELBv2 view, with what an ignore
// fault drops left as it was, and the native spec and listeners to match;
// a new rec is stored.
func (s *Cloud) commitNetworkLocked(f *api.Fault, rec *LBRecord, isNew bool, next *NetworkLB) error {
	if f != nil && f.Kind == api.FaultIgnore && f.Field == api.IgnoreListeners {
		next.Listeners = nil
		if !isNew {
			next.Listeners = slices.Clone(rec.NLB.Listeners)
		}
	}
	upd := *rec
	upd.NLB = next
	spec, err := s.networkSpecLocked(upd.Name, next)
	if err != nil {
		return &Error{Kind: KindInvalid, Err: err}
	}
	upd.LoadBalancerSpec = spec
	if err := s.openLocked(&upd, isNew); err != nil {
		return dataplaneFailed(err)
	}
	*rec = upd
	if isNew {
		s.st.LoadBalancers = append(s.st.LoadBalancers, rec)
		s.st.LastLBIP = rec.IP
	}
	return nil
}

// DeleteNetworkLB deletes the network load balancer with this ARN (or
// name) and its listeners; its target groups stay, as in ELBv2. One that
// does not exist is deleted already.
func (s *Cloud) DeleteNetworkLB(ref string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.networkLocked(ref)
	if rec == nil {
		return nil
	}
	return s.deleteLBLocked(rec)
}

// NetworkAttribute is a network load balancer's attribute.
type NetworkAttribute struct{ Key, Value string }

// SetNetworkLBAttributes sets attributes of the network load balancer
// with this ARN (or name), persisted if save, and returns them all. A
// describe call that names attributes sets them unsaved, as before.
func (s *Cloud) SetNetworkLBAttributes(ref string, set []NetworkAttribute, save bool) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.networkLocked(ref)
	if rec == nil {
		return nil, networkNotFound(ref)
	}
	for _, a := range set {
		rec.NLB.Attributes[a.Key] = a.Value
	}
	if save {
		if err := saveFailed(s.saveLocked()); err != nil {
			return nil, err
		}
	}
	return maps.Clone(rec.NLB.Attributes), nil
}

// ListenerRequest is a change to a network load balancer's listener:
// CreateListener's (LB the load balancer's ARN), ModifyListener's or
// DeleteListener's (Listener the listener's ARN). Port, Protocol and
// Forward are what the request gives, empty when it does not.
type ListenerRequest struct {
	Create, Delete bool
	LB, Listener   string
	Port, Protocol string
	// Forward is the first default action's type and target group, if any.
	Forward *[2]string
}

// ChangeListener creates, modifies or deletes a network load balancer's
// listener, and returns the listener made or modified with its load
// balancer's ARN.
func (s *Cloud) ChangeListener(req ListenerRequest, f *api.Fault) (lbARN string, l *NetworkListener, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, i, err := s.listenerOfLocked(req)
	if err != nil {
		return "", nil, err
	}
	next := *rec.NLB
	next.Listeners = slices.Clone(rec.NLB.Listeners)
	if req.Delete {
		next.Listeners = slices.Delete(next.Listeners, i, i+1)
	} else if i, err = s.setListenerLocked(rec, &next, i, req); err != nil {
		return "", nil, err
	}
	if err := s.commitNetworkLocked(f, rec, false, &next); err != nil {
		return "", nil, err
	}
	if err := saveFailed(s.saveLocked()); err != nil {
		return "", nil, err
	}
	if !req.Delete && i < len(rec.NLB.Listeners) {
		out := rec.NLB.Listeners[i]
		l = &out
	}
	return rec.NLB.ARN, l, nil
}

// listenerOfLocked is the load balancer a listener request changes, and
// the index of the listener it names (-1 for a new one).
func (s *Cloud) listenerOfLocked(req ListenerRequest) (*LBRecord, int, error) {
	if req.Create {
		rec := s.networkLocked(req.LB)
		if rec == nil {
			return nil, -1, networkNotFound(req.LB)
		}
		return rec, -1, nil
	}
	for _, rec := range s.st.LoadBalancers {
		if rec.NLB == nil {
			continue
		}
		if i := slices.IndexFunc(rec.NLB.Listeners, func(l NetworkListener) bool { return l.ARN == req.Listener }); i >= 0 {
			return rec, i, nil
		}
	}
	return nil, -1, awsFailed(KindNotFound, ErrNoSuchListener, "One or more listeners not found")
}

// setListenerLocked makes listener i of next (a new one if -1) as req
// says, and returns its index.
func (s *Cloud) setListenerLocked(rec *LBRecord, next *NetworkLB, i int, req ListenerRequest) (int, error) {
	l := NetworkListener{ARN: req.Listener}
	if i >= 0 {
		l = next.Listeners[i]
	}
	if req.Port != "" {
		n, err := strconv.ParseInt(req.Port, 10, 32)
		if err != nil || n < 1 || n > 65535 {
			return i, Errorf(KindInvalid, "Port %q must be 1 to 65535", req.Port)
		}
		l.Port = int32(n)
	}
	if req.Protocol != "" {
		l.Protocol = req.Protocol
	}
	if req.Forward != nil {
		if req.Forward[0] != "forward" || s.targetGroupLocked(req.Forward[1]) == nil {
			return i, targetGroupNotFound(req.Forward[1])
		}
		l.TargetGroup = req.Forward[1]
	}
	switch l.Protocol {
	case "TCP", "UDP", "TCP_UDP", "TLS":
	default:
		return i, Errorf(KindInvalid, "Protocol '%s' is not valid for a network load balancer's listener", l.Protocol)
	}
	if l.TargetGroup == "" {
		return i, Errorf(KindInvalid, "A listener needs a default action that forwards to a target group")
	}
	if slices.ContainsFunc(next.Listeners, func(x NetworkListener) bool { return x.Port == l.Port && x.ARN != l.ARN }) {
		return i, awsFailed(KindConflict, ErrListenerTaken, "A listener already exists on this port for this load balancer")
	}
	if i >= 0 {
		next.Listeners[i] = l
		return i, nil
	}
	l.ARN = s.elbv2ARN("listener/net", rec.Name, awsHash(16, rec.ID)+"/"+awsHash(16, rec.ID, strconv.Itoa(int(l.Port)), l.Protocol, time.Now().String()))
	next.Listeners = append(next.Listeners, l)
	return len(next.Listeners) - 1, nil
}
