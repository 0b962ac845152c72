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
	"slices"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// EC2's instances and route table, as the EC2 front changes and shows
// them. Each method takes the lock itself and hands out copies.

// Why an AWS operation failed, where its Kind alone does not tell the
// AWS fronts which of their codes to answer.
var (
	// ErrTerminated is an instance EC2 still shows but will not change.
	ErrTerminated = errors.New("instance is terminated")
	// ErrNoSuchGroup is a security group that does not exist.
	ErrNoSuchGroup = errors.New("no such security group")
	// ErrPoolExhausted is a load balancer address pool with none left.
	ErrPoolExhausted = errors.New("address pool exhausted")
)

// awsFailed is an AWS operation's failure: its kind, its cause for the
// fronts to tell apart, and the message AWS answers it with.
func awsFailed(k Kind, cause error, format string, args ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// EC2Instances is what EC2 knows of the instances: a copy of each,
// terminated ones too, in creation order, and whose source/destination
// check is off.
type EC2Instances struct {
	All     []api.Instance
	noCheck []string
}

// SourceDestCheck is the source/destination check of instance id: on
// unless EC2 was told to turn it off.
func (v EC2Instances) SourceDestCheck(id string) bool { return !slices.Contains(v.noCheck, id) }

func (s *Cloud) ec2InstancesLocked() EC2Instances {
	v := EC2Instances{All: make([]api.Instance, 0, len(s.st.Instances)), noCheck: slices.Clone(s.st.NoSourceDestCheck)}
	for _, inst := range s.st.Instances {
		v.All = append(v.All, CopyInstance(inst))
	}
	return v
}

// EC2Instances are the instances as EC2 sees them.
func (s *Cloud) EC2Instances() EC2Instances {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ec2InstancesLocked()
}

// AboutEC2Instances is the fault matcher of a call that answers the
// instances shown accepts: a fault's Instance refers to one of them.
func (s *Cloud) AboutEC2Instances(shown func(inst api.Instance, sourceDestCheck bool) bool) func(ref string) bool {
	return func(ref string) bool {
		v := s.ec2InstancesLocked()
		return slices.ContainsFunc(v.All, func(inst api.Instance) bool {
			return shown(inst, v.SourceDestCheck(inst.ID)) && RefersTo(ref, &inst)
		})
	}
}

// liveEC2InstanceLocked is instance id if EC2 may change it: EC2 still
// knows a terminated instance, and refuses to change it.
func (s *Cloud) liveEC2InstanceLocked(id string) (*api.Instance, error) {
	inst := s.instanceByIDLocked(id)
	switch {
	case inst == nil:
		return nil, Errorf(KindNotFound, "The instance ID '%s' does not exist", id)
	case inst.State == api.StateTerminated:
		return nil, awsFailed(KindConflict, ErrTerminated, "The instance '%s' is not in a state from which the requested operation can be performed.", id)
	}
	return inst, nil
}

// SetSourceDestCheck turns instance id's source/destination check on or
// off, as the AWS CCM does before it routes a pod CIDR to the instance.
func (s *Cloud) SetSourceDestCheck(id string, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.liveEC2InstanceLocked(id); err != nil {
		return err
	}
	i := slices.Index(s.st.NoSourceDestCheck, id)
	switch {
	case !on && i < 0:
		s.st.NoSourceDestCheck = append(s.st.NoSourceDestCheck, id)
	case on && i >= 0:
		s.st.NoSourceDestCheck = slices.Delete(s.st.NoSourceDestCheck, i, i+1)
	}
	return saveFailed(s.saveLocked())
}

// StateChange is an instance's state before and after a change.
type StateChange struct {
	ID             string
	Previous, Next api.InstanceState
}

// SetEC2InstanceStates moves every instance of ids to state to, or none:
// an ID wellFormed refuses (a KindInvalid failure), an unknown one, or a
// terminated instance asked to stop or start refuses the whole call, the
// first in ids' order. An ID is checked for its form just before it is
// looked up, so the first bad ID is the one answered whatever is wrong
// with it. A failed state write stops the changes there.
func (s *Cloud) SetEC2InstanceStates(ids []string, to api.InstanceState, wellFormed func(id string) bool) ([]StateChange, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	insts := make([]*api.Instance, 0, len(ids))
	for _, id := range ids {
		if !wellFormed(id) {
			return nil, Errorf(KindInvalid, "Invalid id: \"%s\"", id)
		}
		inst := s.instanceByIDLocked(id)
		if inst == nil {
			return nil, Errorf(KindNotFound, "The instance ID '%s' does not exist", id)
		}
		if to != api.StateTerminated {
			if _, err := s.liveEC2InstanceLocked(id); err != nil {
				return nil, err
			}
		}
		insts = append(insts, inst)
	}
	changes := make([]StateChange, 0, len(insts))
	for _, inst := range insts {
		prev := inst.State
		if err := s.setStateLocked(inst, to); err != nil {
			return nil, saveFailed(err)
		}
		changes = append(changes, StateChange{ID: inst.ID, Previous: prev, Next: to})
	}
	return changes, nil
}

// EC2Routes are the routes of EC2's route table (fakecloud's routes of
// cluster api.AWSRouteTable), blackholed when their instance is gone.
func (s *Cloud) EC2Routes() []api.Route {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []api.Route
	for _, rec := range s.st.Routes {
		if rec.Cluster == api.AWSRouteTable {
			out = append(out, s.routeViewLocked(rec))
		}
	}
	return out
}

// ErrRouteExists is a route whose destination the route table has.
var ErrRouteExists = errors.New("route exists")

// CreateEC2Route routes dest to instance id in EC2's route table, as
// route name (EC2 keys routes by destination). An ignored change answers
// as if the route were made, and makes none.
func (s *Cloud) CreateEC2Route(name, dest, id string, ignored bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.liveEC2InstanceLocked(id); err != nil {
		return err
	}
	if s.routeByNameLocked(name) != nil {
		return awsFailed(KindConflict, ErrRouteExists, "The route identified by %s already exists.", dest)
	}
	if ignored {
		return nil
	}
	s.st.Routes = append(s.st.Routes, &RouteRecord{Name: name, CreatedAt: time.Now().UTC(),
		RouteSpec: api.RouteSpec{Cluster: api.AWSRouteTable, DestinationCIDR: dest, TargetInstance: id}})
	return saveFailed(s.saveLocked())
}

// DeleteEC2Route deletes route name of EC2's route table, for dest.
func (s *Cloud) DeleteEC2Route(name, dest string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.st.Routes, func(rec *RouteRecord) bool { return rec.Name == name })
	if i < 0 {
		return Errorf(KindNotFound, "There is no route defined for '%s' in the route table. Use a different route table or DestinationCidrBlock.", dest)
	}
	s.st.Routes = slices.Delete(s.st.Routes, i, i+1)
	return saveFailed(s.saveLocked())
}
