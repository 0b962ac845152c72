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
	"strings"
	"testing"
	"time"
)

func TestAddressesRoundTrip(t *testing.T) {
	tests := []struct {
		in   string
		want []Address
		ok   bool
	}{
		{"", []Address{}, true},
		{"InternalIP=127.1.0.1, Hostname=n1", []Address{{"InternalIP", "127.1.0.1"}, {"Hostname", "n1"}}, true},
		{"ExternalIP=", []Address{{"ExternalIP", ""}}, true},
		{"127.1.0.1", nil, false},
		{"=127.1.0.1", nil, false},
	}
	for _, tt := range tests {
		got, err := ParseAddresses(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseAddresses(%q) error %v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if !tt.ok {
			continue
		}
		if FormatAddresses(got) != FormatAddresses(tt.want) || len(got) != len(tt.want) {
			t.Errorf("ParseAddresses(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestDurationJSON(t *testing.T) {
	b, err := json.Marshal(Fault{Operation: OpAny, Kind: FaultLatency, Delay: Duration{1500 * time.Millisecond}})
	if err != nil || !strings.Contains(string(b), `"delay":"1.5s"`) {
		t.Fatalf("Marshal = %s, %v; want delay as \"1.5s\"", b, err)
	}
	var f Fault
	if err := json.Unmarshal(b, &f); err != nil || f.Delay.Duration != 1500*time.Millisecond {
		t.Errorf("round trip gave %v, %v", f.Delay, err)
	}
	for _, bad := range []string{`{"delay":1500}`, `{"delay":"soon"}`} {
		if err := json.Unmarshal([]byte(bad), &f); err == nil {
			t.Errorf("Unmarshal(%s) accepted a bad duration", bad)
		}
	}
}

func TestValidateAcceptsEveryKind(t *testing.T) {
	good := []Fault{
		{Operation: OpAny, Kind: FaultError},
		{Operation: OpListInstances, Kind: FaultError, Status: 503, Message: "x", Count: 2},
		{Operation: OpGetInstance, Instance: "n1", Kind: FaultLatency, Delay: Duration{time.Second}},
		{Operation: OpAny, Kind: FaultThrottle},
		{Operation: OpAny, Kind: FaultCorrupt, Field: CorruptState, Value: string(StateStopped)},
		{Operation: OpAny, Kind: FaultCorrupt, Field: CorruptAddresses, Value: "InternalIP=127.1.0.9"},
		{Operation: OpAny, Kind: FaultCorrupt, Field: CorruptZone},
		{Operation: OpDeleteLoadBalancer, Instance: "lb1", Kind: FaultError},
		{Operation: OpCreateRoute, Kind: FaultThrottle},
		{Operation: OpGetLoadBalancer, Kind: FaultCorrupt, Field: CorruptIP, Value: "127.9.9.9"},
		{Operation: OpEnsureLoadBalancer, Kind: FaultCorrupt, Field: CorruptListeners},
	}
	for _, f := range good {
		if err := f.Validate(); err != nil {
			t.Errorf("Validate(%+v): %v", f, err)
		}
	}
}

func TestCorruptsOperation(t *testing.T) {
	tests := []struct {
		field, op string
		want      bool
	}{
		{CorruptZone, OpGetInstance, true},
		{CorruptAddresses, OpListInstances, true},
		{CorruptZone, OpGetLoadBalancer, false},
		{CorruptIP, OpGetLoadBalancer, true},
		{CorruptIP, OpListLoadBalancers, true},
		{CorruptListeners, OpEnsureLoadBalancer, true},
		{CorruptIP, OpDeleteLoadBalancer, false}, // answers nothing to lie in
		{CorruptIP, OpGetInstance, false},
		{CorruptIP, OpListRoutes, false},
		{CorruptIP, OpAny, true},
		{"color", OpGetInstance, false},
	}
	for _, tt := range tests {
		if got := CorruptsOperation(tt.field, tt.op); got != tt.want {
			t.Errorf("CorruptsOperation(%s, %s) = %v, want %v", tt.field, tt.op, got, tt.want)
		}
	}
}
