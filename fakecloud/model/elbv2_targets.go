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
	"strconv"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// Elastic Load Balancing v2's target groups and their targets, as the
// ELBv2 front changes and shows them. A change derives again the network
// load balancers, whose backends and node ports are their target groups'.

// TargetGroupView is a target group as the ELBv2 front answers it: a
// copy, with the load balancers whose listeners forward to it and the
// health of each of its targets.
type TargetGroupView struct {
	TargetGroup
	// Users are the ARNs of the load balancers that forward to it.
	Users []string
	// Health is each target's health, as ELBv2 names it: healthy,
	// unhealthy (its instance is not running) or unused (no load
	// balancer forwards to the group).
	Health []string
}

func targetGroupNotFound(arn string) error {
	return awsFailed(KindNotFound, ErrNoSuchTargetGroup, "One or more target groups not found: '%s'", arn)
}

// targetGroupUsersLocked are the load balancers whose listeners forward
// to a target group.
func (s *Cloud) targetGroupUsersLocked(arn string) []string {
	var out []string
	for _, rec := range s.st.LoadBalancers {
		if rec.NLB != nil && slices.ContainsFunc(rec.NLB.Listeners, func(l NetworkListener) bool { return l.TargetGroup == arn }) {
			out = append(out, rec.NLB.ARN)
		}
	}
	return out
}

func (s *Cloud) targetGroupViewLocked(tg *TargetGroup) TargetGroupView {
	v := TargetGroupView{TargetGroup: *tg, Users: s.targetGroupUsersLocked(tg.ARN)}
	v.Targets, v.Tags = slices.Clone(tg.Targets), slices.Clone(tg.Tags)
	for _, t := range tg.Targets {
		h := "healthy"
		if inst := s.instanceByIDLocked(t.ID); inst == nil || inst.State != api.StateRunning {
			h = "unhealthy"
		} else if len(v.Users) == 0 {
			h = "unused"
		}
		v.Health = append(v.Health, h)
	}
	return v
}

// TargetGroupOf is the target group of that ARN, if it exists, and the
// load balancers that forward to that ARN whether it does or not.
func (s *Cloud) TargetGroupOf(arn string) (tg TargetGroupView, users []string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	users = s.targetGroupUsersLocked(arn)
	if g := s.targetGroupLocked(arn); g != nil {
		return s.targetGroupViewLocked(g), users, true
	}
	return TargetGroupView{}, users, false
}

// CreateTargetGroup makes target group tg, of a name no other has; one
// of that name and the same protocol, port and health check is answered
// as it is.
func (s *Cloud) CreateTargetGroup(tg TargetGroup) (TargetGroupView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.IndexFunc(s.st.TargetGroups, func(x *TargetGroup) bool { return x.Name == tg.Name }); i >= 0 {
		old := s.st.TargetGroups[i]
		if old.Protocol != tg.Protocol || old.Port != tg.Port || old.HealthCheck != tg.HealthCheck {
			return TargetGroupView{}, awsFailed(KindConflict, ErrTargetGroupTaken, "A target group with the same name '%s' exists, but with different settings", tg.Name)
		}
		return s.targetGroupViewLocked(old), nil
	}
	tg.ARN = s.elbv2ARN("targetgroup", tg.Name, awsHash(16, tg.Name, time.Now().String()))
	stored := &tg
	s.st.TargetGroups = append(s.st.TargetGroups, stored)
	return s.targetGroupViewLocked(stored), saveFailed(s.saveLocked())
}

// changeTargetGroup changes target group arn as change says, then derives
// the network load balancers again and persists. A derivation that fails
// is KindInvalid, the change made, as before.
func (s *Cloud) changeTargetGroup(arn string, change func(tg *TargetGroup) error) (TargetGroupView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tg := s.targetGroupLocked(arn)
	if tg == nil {
		return TargetGroupView{}, targetGroupNotFound(arn)
	}
	if err := change(tg); err != nil {
		return TargetGroupView{}, err
	}
	view := s.targetGroupViewLocked(tg)
	if err := s.networkRederiveLocked(); err != nil {
		return TargetGroupView{}, &Error{Kind: KindInvalid, Err: err}
	}
	return view, saveFailed(s.saveLocked())
}

// ModifyTargetGroup gives target group arn health check hc.
func (s *Cloud) ModifyTargetGroup(arn string, hc TargetHealthCheck) (TargetGroupView, error) {
	return s.changeTargetGroup(arn, func(tg *TargetGroup) error {
		tg.HealthCheck = hc
		return nil
	})
}

// DeleteTargetGroup deletes target group arn, which no listener may
// forward to.
func (s *Cloud) DeleteTargetGroup(arn string) error {
	_, err := s.changeTargetGroup(arn, func(tg *TargetGroup) error {
		if len(s.targetGroupUsersLocked(arn)) > 0 {
			return awsFailed(KindConflict, ErrTargetGroupInUse, "Target group '%s' is currently in use by a listener or a rule", arn)
		}
		s.st.TargetGroups = slices.DeleteFunc(s.st.TargetGroups, func(x *TargetGroup) bool { return x == tg })
		return nil
	})
	return err
}

// TargetRef is a target as a request names it: an instance ID, and a
// port as given (empty for the group's).
type TargetRef struct{ ID, Port string }

// RegisterTargets registers targets with target group arn, or
// deregisters them; an ignored change checks them and changes nothing.
// A target registered must be a live instance.
func (s *Cloud) RegisterTargets(arn string, register bool, targets []TargetRef, ignored bool) error {
	_, err := s.changeTargetGroup(arn, func(tg *TargetGroup) error {
		for _, t := range targets {
			port := tg.Port
			if t.Port != "" {
				n, err := strconv.ParseInt(t.Port, 10, 32)
				if err != nil {
					return Errorf(KindInvalid, "Target port %q is not a number", t.Port)
				}
				port = int32(n)
			}
			inst := s.instanceByIDLocked(t.ID)
			if register && (inst == nil || inst.State == api.StateTerminated) {
				return awsFailed(KindNotFound, ErrNoSuchInstance, "The following targets are not in a running state and cannot be registered: '%s'", t.ID)
			}
			if ignored {
				continue
			}
			target := Target{ID: t.ID, Port: port}
			tg.Targets = slices.DeleteFunc(tg.Targets, func(x Target) bool { return x == target })
			if register {
				tg.Targets = append(tg.Targets, target)
			}
		}
		return nil
	})
	return err
}
