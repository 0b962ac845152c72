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

package api

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// FaultKind says what a fault does to a matching cloud API call.
type FaultKind string

const (
	// FaultError answers with Status (default 500) and Message.
	FaultError FaultKind = "error"
	// FaultLatency delays the answer by Delay, then serves it.
	FaultLatency FaultKind = "latency"
	// FaultThrottle answers 429 with code "Throttled" and Retry-After: 1.
	FaultThrottle FaultKind = "throttle"
	// FaultCorrupt serves the call but reports Field of the matching
	// instances or load balancers as Value: a cloud that lies, for negative
	// controls.
	FaultCorrupt FaultKind = "corrupt"
	// FaultIgnore accepts an EnsureLoadBalancer but keeps Field as it was
	// (empty on creation), or a CreateRoute (Field "route") but stores no
	// route: a cloud that silently drops part of a request, so what it
	// holds, not only what it says, is wrong.
	FaultIgnore FaultKind = "ignore"
)

// Fields a FaultIgnore can drop from an EnsureLoadBalancer.
const (
	IgnoreListeners    = "listeners"
	IgnoreBackends     = "backends"
	IgnoreSourceRanges = "sourceRanges"
	IgnoreHealthCheck  = "healthCheckNodePort"
	// IgnoreClientAffinity keeps the load balancer's client affinity:
	// fakecloud's own API only.
	IgnoreClientAffinity = "clientAffinitySeconds"
	// IgnoreProxyProtocol keeps the load balancer's PROXY protocol
	// version (none on creation): a cloud whose backends get other than
	// the header the CCM asked for. fakecloud's own API only.
	IgnoreProxyProtocol = "proxyProtocol"
	// IgnoreBackendRemovals keeps every backend the request leaves out,
	// and takes those it adds: a cloud that never lets a backend go
	// (fakecloud's own API; its emulations of other clouds ignore it).
	IgnoreBackendRemovals = "backendRemovals"
	// IgnoreIPFamilies keeps the load balancer's address families (IPv4
	// alone on creation): a cloud that takes a dual-stack request and
	// makes an IPv4 load balancer. fakecloud's own API only.
	IgnoreIPFamilies = "ipFamilies"
)

var ignoreFields = []string{IgnoreListeners, IgnoreBackends, IgnoreSourceRanges, IgnoreHealthCheck, IgnoreClientAffinity, IgnoreProxyProtocol, IgnoreBackendRemovals, IgnoreIPFamilies}

// IgnoreRoute is what a FaultIgnore drops from a CreateRoute: the route.
// The call succeeds; the route table stays as it was.
const IgnoreRoute = "route"

// Fields a FaultCorrupt can falsify. For CorruptAddresses, Value is a
// comma-separated list of Type=address pairs. For CorruptState, Value is an
// InstanceState.
const (
	CorruptZone         = "zone"
	CorruptRegion       = "region"
	CorruptInstanceType = "instanceType"
	CorruptAddresses    = "addresses"
	CorruptID           = "id"
	CorruptState        = "state"
)

// Load balancer fields a FaultCorrupt can falsify.
const (
	// CorruptIP reports the frontend IP as Value (any string, "" included).
	CorruptIP = "ip"
	// CorruptListeners reports the load balancer with no listeners. Value
	// must be empty.
	CorruptListeners = "listeners"
)

var (
	instanceFields = []string{CorruptZone, CorruptRegion, CorruptInstanceType, CorruptAddresses, CorruptID, CorruptState}
	lbFields       = []string{CorruptIP, CorruptListeners}
)

// CorruptsOperation reports whether a corrupt fault on field can falsify the
// answer of op: only operations that answer with the field's resource can
// lie about it. A fault for OpAny fires only on those, so a zone lie is not
// spent on a load balancer call.
func CorruptsOperation(field, op string) bool {
	switch {
	case op == OpAny:
		return true
	case slices.Contains(instanceFields, field):
		return op == OpListInstances || op == OpGetInstance
	case slices.Contains(lbFields, field):
		return op == OpListLoadBalancers || op == OpGetLoadBalancer || op == OpEnsureLoadBalancer
	}
	return false
}

// Fault is an injected misbehaviour of the cloud API.
type Fault struct {
	// ID is assigned by the server.
	ID string `json:"id,omitempty"`
	// Operation is an Op* name, or OpAny.
	Operation string `json:"operation"`
	// Instance limits the fault to calls about the instance with this name
	// or ID; for load balancer operations, about the load balancer with this
	// name or ID; for route operations, about the route with this name (a
	// route's creation also about the instance it leads to).
	// Empty means every call of Operation. For an instance, a shell
	// pattern (join-*) matches every instance whose name or ID it
	// matches: the nodes a spec adds have random names (RefMatches).
	Instance string    `json:"instance,omitempty"`
	Kind     FaultKind `json:"kind"`
	Status   int       `json:"status,omitempty"`
	Message  string    `json:"message,omitempty"`
	Delay    Duration  `json:"delay,omitempty"`
	Field    string    `json:"field,omitempty"`
	Value    string    `json:"value,omitempty"`
	// Count is how many more calls the fault fires for; 0 means until it is
	// removed.
	Count int `json:"count,omitempty"`
	// After is how many more calls it would fire for that it lets pass
	// first: a fault of a later step (an update, a recreation) whose first
	// calls go through. The count is the fault's, over every load balancer,
	// instance or route it is about.
	After int `json:"after,omitempty"`
}

// RefMatches reports whether a fault's Instance refers to name: equal,
// or a shell pattern (path.Match) that matches it.
func RefMatches(ref, name string) bool {
	if ref == name {
		return true
	}
	ok, err := path.Match(ref, name)
	return err == nil && ok && strings.ContainsAny(ref, "*?[")
}

// FaultList is the body of GET /admin/v1/faults.
type FaultList struct {
	Faults []Fault `json:"faults"`
}

// Duration is a time.Duration that travels as a Go duration string ("250ms").
type Duration struct{ time.Duration }

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"250ms\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q is not a Go duration such as \"250ms\"", s)
	}
	d.Duration = v
	return nil
}

// Validate reports the first thing wrong with a fault a client asks for,
// naming the JSON field, so a bad fault fails when it is added rather than
// silently never firing. The ID is not checked: the server assigns it.
func (f Fault) Validate() error {
	ops := strings.Join(operations, ", ") + " or \"" + OpAny + "\""
	switch {
	case f.Operation == OpAny || slices.Contains(operations, f.Operation):
	case f.Operation == "":
		return fmt.Errorf("operation is required (one of %s)", ops)
	default:
		return fmt.Errorf("operation %q is not one of %s", f.Operation, ops)
	}
	if f.Count < 0 {
		return fmt.Errorf("count %d is negative (use 0 for a fault that fires until removed)", f.Count)
	}
	if f.After < 0 {
		return fmt.Errorf("after %d is negative (use 0 for a fault that fires from the first call)", f.After)
	}
	if f.Status != 0 && f.Kind != FaultError {
		return fmt.Errorf("status only applies to kind %q, not %q", FaultError, f.Kind)
	}
	if f.Delay.Duration != 0 && f.Kind != FaultLatency {
		return fmt.Errorf("delay only applies to kind %q, not %q", FaultLatency, f.Kind)
	}
	if (f.Field != "" || f.Value != "") && f.Kind != FaultCorrupt && f.Kind != FaultIgnore {
		return fmt.Errorf("field and value only apply to kinds %q and %q, not %q", FaultCorrupt, FaultIgnore, f.Kind)
	}
	switch f.Kind {
	case FaultError:
		if f.Status != 0 && (f.Status < 400 || f.Status > 599) {
			return fmt.Errorf("status %d is not an HTTP error status (400-599)", f.Status)
		}
	case FaultLatency:
		if f.Delay.Duration <= 0 {
			return fmt.Errorf("delay must be positive for kind %q, e.g. \"2s\"", FaultLatency)
		}
	case FaultThrottle:
	case FaultCorrupt:
		if err := validateCorruption(f.Field, f.Value); err != nil {
			return err
		}
		if !CorruptsOperation(f.Field, f.Operation) {
			what := "instances"
			if slices.Contains(lbFields, f.Field) {
				what = "load balancers"
			}
			return fmt.Errorf("field %q is a field of %s, which operation %s does not answer with", f.Field, what, f.Operation)
		}
	case FaultIgnore:
		switch f.Operation {
		case OpEnsureLoadBalancer:
			if !slices.Contains(ignoreFields, f.Field) {
				return fmt.Errorf("field %q cannot be ignored (one of %s)", f.Field, strings.Join(ignoreFields, ", "))
			}
		case OpCreateRoute:
			if f.Field != IgnoreRoute {
				return fmt.Errorf("field %q cannot be ignored in %s (only %q)", f.Field, OpCreateRoute, IgnoreRoute)
			}
		default:
			return fmt.Errorf("kind %q applies only to operations %s and %s", FaultIgnore, OpEnsureLoadBalancer, OpCreateRoute)
		}
		if f.Value != "" {
			return fmt.Errorf("value does not apply to kind %q", FaultIgnore)
		}
	case "":
		return fmt.Errorf("kind is required (one of %s, %s, %s, %s or %s)", FaultError, FaultLatency, FaultThrottle, FaultCorrupt, FaultIgnore)
	default:
		return fmt.Errorf("kind %q is not one of %s, %s, %s, %s or %s", f.Kind, FaultError, FaultLatency, FaultThrottle, FaultCorrupt, FaultIgnore)
	}
	return nil
}

func validateCorruption(field, value string) error {
	switch field {
	case CorruptZone, CorruptRegion, CorruptInstanceType, CorruptID:
		// Any value, the empty string included, is a lie worth telling.
		return nil
	case CorruptState:
		switch InstanceState(value) {
		case StateRunning, StateStopped, StateTerminated:
			return nil
		}
		return fmt.Errorf("value %q is not an instance state (%s, %s or %s)", value, StateRunning, StateStopped, StateTerminated)
	case CorruptAddresses:
		if _, err := ParseAddresses(value); err != nil {
			return fmt.Errorf("value: %w", err)
		}
		return nil
	case CorruptIP:
		return nil
	case CorruptListeners:
		if value != "" {
			return fmt.Errorf("value must be empty for field %q: the listeners are reported as none", CorruptListeners)
		}
		return nil
	case "":
		return fmt.Errorf("field is required for kind %q", FaultCorrupt)
	default:
		return fmt.Errorf("field %q is not one of %s", field, strings.Join(append(slices.Clone(instanceFields), lbFields...), ", "))
	}
}
