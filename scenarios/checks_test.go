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

package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudproviderapi "k8s.io/cloud-provider/api"
	"k8s.io/cloud-provider/names"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/internal/nodewait"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/scenarios/labels"
	"sigs.k8s.io/ccm-harness/specs"
)

const (
	zoneLabel       = "topology.kubernetes.io/zone"
	legacyZoneLabel = "failure-domain.beta.kubernetes.io/zone"
	typeLabel       = "node.kubernetes.io/instance-type"
)

// testNodeOpt shapes a test node the way a CCM or kubelet would have.
type testNodeOpt func(*v1.Node)

// testNode is node-1 as an initialized node with no conditions, shaped by opts.
func testNode(opts ...testNodeOpt) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{}}}
	for _, o := range opts {
		o(n)
	}
	return n
}

func withName(name string) testNodeOpt { return func(n *v1.Node) { n.Name = name } }

func withProviderID(id string) testNodeOpt { return func(n *v1.Node) { n.Spec.ProviderID = id } }

func withLabel(k, v string) testNodeOpt { return func(n *v1.Node) { n.Labels[k] = v } }

func withTaint(key string) testNodeOpt {
	return func(n *v1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: key, Effect: v1.TaintEffectNoSchedule})
	}
}

var testUninitialized = withTaint(cloudproviderapi.TaintExternalCloudProvider)

func withReady(s v1.ConditionStatus) testNodeOpt {
	return func(n *v1.Node) {
		n.Status.Conditions = append(n.Status.Conditions,
			v1.NodeCondition{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse},
			v1.NodeCondition{Type: v1.NodeReady, Status: s})
	}
}

func withAddresses(a ...v1.NodeAddress) testNodeOpt {
	return func(n *v1.Node) { n.Status.Addresses = append([]v1.NodeAddress(nil), a...) }
}

func internalIP(ip string) v1.NodeAddress {
	return v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip}
}
func externalIP(ip string) v1.NodeAddress {
	return v1.NodeAddress{Type: v1.NodeExternalIP, Address: ip}
}
func hostnameAddr(h string) v1.NodeAddress { return v1.NodeAddress{Type: v1.NodeHostName, Address: h} }
func internalDNS(h string) v1.NodeAddress {
	return v1.NodeAddress{Type: v1.NodeInternalDNS, Address: h}
}

var testInstance = providers.Instance{
	Name:         "node-1",
	ProviderID:   "fakecloud://i-0001",
	InstanceType: "fake.small",
	Zone:         "fake-zone-a",
	Region:       "fake-region-1",
	Addresses:    []v1.NodeAddress{internalIP("10.0.0.1"), externalIP("203.0.113.1")},
	Running:      true,
}

var testCloud = map[string]providers.Instance{"node-1": testInstance}

type testCheckCase struct {
	name  string
	check nodewait.Check
	node  *v1.Node
	// want is empty for a node that must pass; otherwise every string must
	// be in the error, so a failure names the node, the expected and the
	// actual value.
	want []string
}

func runCheckCases(t *testing.T, tests []testCheckCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.check(tt.node)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("check failed on a node that is as wanted: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("check passed; want an error containing %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestInitialized(t *testing.T) {
	runCheckCases(t, []testCheckCase{
		{name: "taint removed", check: nodewait.Initialized, node: testNode(withTaint("other"))},
		{
			name:  "taint present",
			check: nodewait.Initialized,
			node:  testNode(testUninitialized, withProviderID("fakecloud://i-0001")),
			want:  []string{"node node-1", "expected taint " + cloudproviderapi.TaintExternalCloudProvider + " removed", "actual: still present", `"fakecloud://i-0001"`},
		},
	})
}

func TestProviderIDFromCloud(t *testing.T) {
	check := ProviderIDFromCloud("fakecloud", testCloud)
	runCheckCases(t, []testCheckCase{
		{name: "the cloud's ID", check: check, node: testNode(withProviderID("fakecloud://i-0001"))},
		// The cloud is only asked about some nodes; the others need the
		// scheme alone.
		{name: "node the cloud was not asked about", check: check, node: testNode(withName("node-9"), withProviderID("fakecloud://i-0009"))},
		{
			name: "wrong scheme", check: check, node: testNode(withProviderID("aws:///us-east-1a/i-0001")),
			want: []string{"node node-1", "scheme fakecloud://", `actual "aws:///us-east-1a/i-0001"`},
		},
		{
			name: "empty", check: check, node: testNode(),
			want: []string{"node node-1", "scheme fakecloud://", `actual ""`},
		},
		{
			name: "another instance's ID", check: check, node: testNode(withProviderID("fakecloud://i-0002")),
			want: []string{"node node-1", `expected spec.providerID "fakecloud://i-0001"`, `actual "fakecloud://i-0002"`},
		},
		{
			name: "not initialized", check: check, node: testNode(testUninitialized, withProviderID("fakecloud://i-0001")),
			want: []string{"node node-1", cloudproviderapi.TaintExternalCloudProvider, "still present"},
		},
	})
}

func TestLabelsFromCloud(t *testing.T) {
	zone := LabelsFromCloud(testCloud, "zone", func(i providers.Instance) string { return i.Zone }, zoneLabel, legacyZoneLabel)
	itype := LabelsFromCloud(testCloud, "instance type", func(i providers.Instance) string { return i.InstanceType }, typeLabel)
	runCheckCases(t, []testCheckCase{
		{name: "zone labels", check: zone, node: testNode(withLabel(zoneLabel, "fake-zone-a"), withLabel(legacyZoneLabel, "fake-zone-a"))},
		{name: "instance type", check: itype, node: testNode(withLabel(typeLabel, "fake.small"))},
		{
			name: "wrong zone", check: zone, node: testNode(withLabel(zoneLabel, "fake-zone-b"), withLabel(legacyZoneLabel, "fake-zone-a")),
			want: []string{"node node-1", zoneLabel + `="fake-zone-a"`, "the cloud's zone", `actual "fake-zone-b"`},
		},
		// Every listed label is checked, not only the first.
		{
			name: "wrong legacy zone", check: zone, node: testNode(withLabel(zoneLabel, "fake-zone-a"), withLabel(legacyZoneLabel, "fake-zone-c")),
			want: []string{"node node-1", legacyZoneLabel + `="fake-zone-a"`, `actual "fake-zone-c"`},
		},
		{
			name: "label not set", check: itype, node: testNode(withLabel(zoneLabel, "fake-zone-a")),
			want: []string{"node node-1", typeLabel + `="fake.small"`, "the cloud's instance type", "actual: label not set"},
		},
		// An empty value is set, and wrong: it must not read as "not set".
		{
			name: "empty value", check: itype, node: testNode(withLabel(typeLabel, "")),
			want: []string{"node node-1", typeLabel + `="fake.small"`, `actual ""`},
		},
		{
			name: "no cloud instance", check: zone, node: testNode(withName("node-9"), withLabel(zoneLabel, "fake-zone-a")),
			want: []string{"node node-9", "the cloud has no instance"},
		},
		{
			name: "not initialized", check: zone, node: testNode(testUninitialized, withLabel(zoneLabel, "fake-zone-a"), withLabel(legacyZoneLabel, "fake-zone-a")),
			want: []string{"node node-1", cloudproviderapi.TaintExternalCloudProvider},
		},
	})
}

func TestAddressesFromCloud(t *testing.T) {
	check := AddressesFromCloud(testCloud)
	withHost := providers.Instance{Name: "node-2", Addresses: []v1.NodeAddress{internalIP("10.0.0.2"), hostnameAddr("ip-10-0-0-2"), internalDNS("ip-10-0-0-2.internal")}}
	check2 := AddressesFromCloud(map[string]providers.Instance{"node-2": withHost})
	runCheckCases(t, []testCheckCase{
		// The cloud reports no Hostname, so the kubelet's stays.
		{name: "cloud's plus kubelet hostname", check: check, node: testNode(withAddresses(internalIP("10.0.0.1"), externalIP("203.0.113.1"), hostnameAddr("node-1")))},
		{name: "any order", check: check, node: testNode(withAddresses(hostnameAddr("node-1"), externalIP("203.0.113.1"), internalIP("10.0.0.1")))},
		{name: "cloud's own hostname", check: check2, node: testNode(withName("node-2"), withAddresses(internalDNS("ip-10-0-0-2.internal"), hostnameAddr("ip-10-0-0-2"), internalIP("10.0.0.2")))},
		{
			name: "kubelet hostname dropped", check: check, node: testNode(withAddresses(internalIP("10.0.0.1"), externalIP("203.0.113.1"))),
			want: []string{"node node-1", "expected addresses [ExternalIP=203.0.113.1 Hostname=node-1 InternalIP=10.0.0.1]", "actual [ExternalIP=203.0.113.1 InternalIP=10.0.0.1]"},
		},
		// When the cloud names the host, the kubelet's name must give way.
		{
			name: "kubelet hostname kept over the cloud's", check: check2, node: testNode(withName("node-2"), withAddresses(internalIP("10.0.0.2"), hostnameAddr("node-2"), internalDNS("ip-10-0-0-2.internal"))),
			want: []string{"node node-2", "Hostname=ip-10-0-0-2 ", "actual [Hostname=node-2 "},
		},
		{
			name: "missing external", check: check, node: testNode(withAddresses(internalIP("10.0.0.1"), hostnameAddr("node-1"))),
			want: []string{"node node-1", "ExternalIP=203.0.113.1", "actual [Hostname=node-1 InternalIP=10.0.0.1]"},
		},
		{
			name: "extra address", check: check, node: testNode(withAddresses(internalIP("10.0.0.1"), internalIP("192.168.0.1"), externalIP("203.0.113.1"), hostnameAddr("node-1"))),
			want: []string{"node node-1", "expected addresses [ExternalIP=203.0.113.1 Hostname=node-1 InternalIP=10.0.0.1]", "InternalIP=192.168.0.1"},
		},
		{
			name: "wrong IP", check: check, node: testNode(withAddresses(internalIP("10.0.0.99"), externalIP("203.0.113.1"), hostnameAddr("node-1"))),
			want: []string{"node node-1", "InternalIP=10.0.0.1]", "InternalIP=10.0.0.99]"},
		},
		{
			name: "no cloud instance", check: check, node: testNode(withName("node-9"), withAddresses(hostnameAddr("node-9"))),
			want: []string{"node node-9", "the cloud has no instance"},
		},
		{
			name: "not initialized", check: check, node: testNode(testUninitialized, withAddresses(internalIP("10.0.0.1"), externalIP("203.0.113.1"), hostnameAddr("node-1"))),
			want: []string{"node node-1", cloudproviderapi.TaintExternalCloudProvider},
		},
	})
}

func TestProvidedNodeIPHonoured(t *testing.T) {
	multi := providers.Instance{Name: "node-1", Addresses: []v1.NodeAddress{internalIP("10.0.0.1"), internalIP("10.0.0.2"), externalIP("203.0.113.1")}}
	check := ProvidedNodeIPHonoured("10.0.0.2", multi)
	runCheckCases(t, []testCheckCase{
		{name: "provided IP only", check: check, node: testNode(withAddresses(internalIP("10.0.0.2"), externalIP("203.0.113.1"), hostnameAddr("node-1")))},
		// The CCM puts the provided IP first; the check must not care.
		{name: "any order", check: check, node: testNode(withAddresses(hostnameAddr("node-1"), externalIP("203.0.113.1"), internalIP("10.0.0.2")))},
		{
			name: "other InternalIP kept", check: check, node: testNode(withAddresses(internalIP("10.0.0.2"), internalIP("10.0.0.1"), externalIP("203.0.113.1"), hostnameAddr("node-1"))),
			want: []string{"node node-1", "provided-node-ip 10.0.0.2", "expected addresses [ExternalIP=203.0.113.1 Hostname=node-1 InternalIP=10.0.0.2]", "InternalIP=10.0.0.1 InternalIP=10.0.0.2]"},
		},
		{
			name: "provided IP ignored", check: check, node: testNode(withAddresses(internalIP("10.0.0.1"), externalIP("203.0.113.1"), hostnameAddr("node-1"))),
			want: []string{"node node-1", "provided-node-ip 10.0.0.2", "InternalIP=10.0.0.2]", "actual [ExternalIP=203.0.113.1 Hostname=node-1 InternalIP=10.0.0.1]"},
		},
		{
			name: "cloud's other types dropped", check: check, node: testNode(withAddresses(internalIP("10.0.0.2"), hostnameAddr("node-1"))),
			want: []string{"node node-1", "ExternalIP=203.0.113.1", "actual [Hostname=node-1 InternalIP=10.0.0.2]"},
		},
		{
			name: "not initialized", check: check, node: testNode(testUninitialized, withAddresses(internalIP("10.0.0.2"), externalIP("203.0.113.1"), hostnameAddr("node-1"))),
			want: []string{"node node-1", cloudproviderapi.TaintExternalCloudProvider},
		},
	})
	// vSphere reports each family's guest address as both InternalIP and
	// ExternalIP: providing the IPv6 one makes it both, and drops the IPv4.
	dual := providers.Instance{Name: "node-1", Addresses: []v1.NodeAddress{
		hostnameAddr("node-1"), internalIP("198.18.0.1"), externalIP("198.18.0.1"), internalIP("2001:db8::1"), externalIP("2001:db8::1"),
	}}
	check = ProvidedNodeIPHonoured("2001:db8::1", dual)
	runCheckCases(t, []testCheckCase{
		{name: "dual-stack, both types enforced", check: check, node: testNode(withAddresses(hostnameAddr("node-1"), internalIP("2001:db8::1"), externalIP("2001:db8::1")))},
		{
			name: "dual-stack, other family's ExternalIP kept", check: check,
			node: testNode(withAddresses(hostnameAddr("node-1"), internalIP("2001:db8::1"), externalIP("2001:db8::1"), externalIP("198.18.0.1"))),
			want: []string{"node node-1", "expected addresses [ExternalIP=2001:db8::1 Hostname=node-1 InternalIP=2001:db8::1]"},
		},
	})
	// A dual-stack --node-ip (KEP-3705) enforces an address of each
	// family, however the IPv6 one is spelt.
	cloud := providers.Instance{Name: "node-1", Addresses: []v1.NodeAddress{
		internalIP("10.0.0.1"), internalIP("10.0.0.2"), internalIP("fd00:1::2"), externalIP("203.0.113.1"),
	}}
	check = ProvidedNodeIPHonoured("10.0.0.2,fd00:1:0::2", cloud)
	runCheckCases(t, []testCheckCase{
		{name: "both families enforced", check: check, node: testNode(withAddresses(internalIP("10.0.0.2"), internalIP("fd00:1::2"), externalIP("203.0.113.1"), hostnameAddr("node-1")))},
		{
			name: "IPv6 one dropped", check: check, node: testNode(withAddresses(internalIP("10.0.0.2"), externalIP("203.0.113.1"), hostnameAddr("node-1"))),
			want: []string{"node node-1", "with provided-node-ip 10.0.0.2,fd00:1:0::2, expected addresses [ExternalIP=203.0.113.1 Hostname=node-1 InternalIP=10.0.0.2 InternalIP=fd00:1::2]"},
		},
		{
			name: "not initialized", check: check, node: testNode(testUninitialized, withAddresses(internalIP("10.0.0.2"), internalIP("fd00:1::2"), hostnameAddr("node-1"))),
			want: []string{"node node-1", cloudproviderapi.TaintExternalCloudProvider, "(its kubelet gave --node-ip 10.0.0.2,fd00:1:0::2)"},
		},
	})
}

func TestTainted(t *testing.T) {
	runCheckCases(t, []testCheckCase{
		{name: "present as wanted", check: Tainted(ShutdownTaint, true), node: testNode(withTaint("a"), withTaint(ShutdownTaint))},
		{name: "absent as wanted", check: Tainted(ShutdownTaint, false), node: testNode(withTaint("a"))},
		{
			name: "absent, wanted present", check: Tainted(ShutdownTaint, true), node: testNode(withTaint("a"), withTaint("b")),
			want: []string{"node node-1", "expected taint " + ShutdownTaint + " present", "actual taints: a,b"},
		},
		{
			name: "no taints, wanted present", check: Tainted(ShutdownTaint, true), node: testNode(),
			want: []string{"node node-1", ShutdownTaint + " present", "actual taints: none"},
		},
		{
			name: "present, wanted absent", check: Tainted(ShutdownTaint, false), node: testNode(withTaint(ShutdownTaint)),
			want: []string{"node node-1", "expected taint " + ShutdownTaint + " absent", "actual taints: " + ShutdownTaint},
		},
	})
}

func TestReadyIs(t *testing.T) {
	runCheckCases(t, []testCheckCase{
		{name: "ready", check: ReadyIs(true), node: testNode(withReady(v1.ConditionTrue))},
		{name: "not ready", check: ReadyIs(false), node: testNode(withReady(v1.ConditionFalse))},
		{name: "unknown counts as not ready", check: ReadyIs(false), node: testNode(withReady(v1.ConditionUnknown))},
		{name: "no condition counts as not ready", check: ReadyIs(false), node: testNode()},
		{
			name: "not ready, wanted ready", check: ReadyIs(true), node: testNode(withReady(v1.ConditionFalse)),
			want: []string{"node node-1", "expected Ready=true", "actual Ready=False"},
		},
		{
			name: "no condition, wanted ready", check: ReadyIs(true), node: testNode(),
			want: []string{"node node-1", "expected Ready=true", "actual Ready=Unknown"},
		},
		{
			name: "ready, wanted not ready", check: ReadyIs(false), node: testNode(withReady(v1.ConditionTrue)),
			want: []string{"node node-1", "expected Ready=false", "actual Ready=True"},
		},
	})
}

func TestAll(t *testing.T) {
	stopped := All(ReadyIs(false), Tainted(ShutdownTaint, true))
	runCheckCases(t, []testCheckCase{
		{name: "no checks", check: All(), node: testNode()},
		{name: "all pass", check: stopped, node: testNode(withReady(v1.ConditionUnknown), withTaint(ShutdownTaint))},
		{
			name: "second fails", check: stopped, node: testNode(withReady(v1.ConditionFalse)),
			want: []string{"node node-1", "expected taint " + ShutdownTaint + " present"},
		},
		{
			name: "first fails", check: stopped, node: testNode(withReady(v1.ConditionTrue), withTaint(ShutdownTaint)),
			want: []string{"node node-1", "expected Ready=false"},
		},
	})

	// The first failure is the one reported, so a message reads in the
	// order the checks were written.
	err := stopped(testNode(withReady(v1.ConditionTrue)))
	if err == nil || !strings.Contains(err.Error(), "Ready") || strings.Contains(err.Error(), "taint") {
		t.Fatalf("both checks fail: got %v, want the first (Ready) alone", err)
	}
}

// The deadline of the wait itself must not replace what the cloud last said.
func TestWaitForCloudReportsLastRealMismatch(t *testing.T) {
	calls := 0
	err := WaitForCloud(context.Background(), 1200*time.Millisecond, "a thing", func(ctx context.Context) error {
		calls++
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("node n1: expected x, actual y")
	})
	if err == nil || !strings.Contains(err.Error(), "expected x, actual y") || !strings.Contains(err.Error(), "timed out after 1.2s waiting for a thing") {
		t.Fatalf("err = %v, want the last real mismatch after %d calls", err, calls)
	}
}

// A last poll cut short by its own bound (a slow cloud plugin) must not
// hide what the polls before it said.
func TestWaitForCloudKeepsComplaintOfCutPoll(t *testing.T) {
	defer func(d time.Duration) { cloudPollTimeout = d }(cloudPollTimeout)
	cloudPollTimeout = 300 * time.Millisecond
	calls := 0
	err := WaitForCloud(context.Background(), 600*time.Millisecond, "a thing", func(ctx context.Context) error {
		calls++
		if calls == 1 {
			return fmt.Errorf("leaked: load balancer a1")
		}
		<-ctx.Done()
		return fmt.Errorf("list the cloud's routes: %w", ctx.Err())
	})
	if err == nil || !strings.Contains(err.Error(), "waiting for a thing: leaked: load balancer a1 (the last poll, cut short at 300ms: list the cloud's routes: context deadline exceeded)") {
		t.Fatalf("err = %v after %d calls, want the whole poll's complaint first", err, calls)
	}
}

// A poll slower than cloudPollTimeout passes when it fits in half the
// wait: cut short each time, a slow plugin's leak check never passed.
func TestWaitForCloudLetsSlowPollsEnd(t *testing.T) {
	defer func(d time.Duration) { cloudPollTimeout = d }(cloudPollTimeout)
	cloudPollTimeout = 100 * time.Millisecond
	calls := 0
	err := WaitForCloud(context.Background(), 2*time.Second, "a thing", func(ctx context.Context) error {
		calls++
		select {
		case <-ctx.Done():
			return fmt.Errorf("list the cloud's routes: %w", ctx.Err())
		case <-time.After(400 * time.Millisecond):
			return nil
		}
	})
	if err != nil {
		t.Fatalf("err = %v after %d calls, want a pass: each poll takes 400ms of a 2s wait", err, calls)
	}
}

// A known difference is a strict expected failure, not a skip: its spec
// runs (Unmet says nothing of it), and a difference must name a spec the
// suite has.
func TestUnmetDifference(t *testing.T) {
	f := Features{Provider: "p", Capabilities: providers.NewCapabilities(providers.LoadBalancers),
		Differences: []providers.Difference{{Spec: specs.LBUDP, Step: providers.StepProvision, Shows: "no UDP", Evidence: "its cloud has no UDP"}}}
	if got := Unmet("serves UDP", Needs(Claims(providers.LoadBalancers)), f, false); got != "" {
		t.Errorf("a difference skips its spec: %q", got)
	}
	if got := Unmet("serves UDP", Needs(Claims(providers.Routes)), f, false); !strings.Contains(got, `does not claim "routes"`) {
		t.Errorf("an unclaimed capability: %q", got)
	}
	if bad := UnknownDifferences(f.Differences, []string{"serves UDP [loadbalancer]"}); len(bad) != 0 {
		t.Errorf("a known spec: %v", bad)
	}
	if bad := UnknownDifferences(f.Differences, []string{"serves TCP [loadbalancer]"}); len(bad) != 1 {
		t.Errorf("an unknown spec: %v", bad)
	}
}

// An extended feature the profile does not claim: its spec does not run,
// and says it is not claimed (the report counts it so, not as a skip).
func TestUnmetFeature(t *testing.T) {
	f := Features{Provider: "aws", Capabilities: providers.NewCapabilities(providers.LoadBalancers),
		Extended: providers.NewFeatures(specs.LoadBalancerSourceRanges)}
	labels := append(Needs(Claims(providers.LoadBalancers)), Needs(Claims(specs.LoadBalancerUDP))...)
	want := `not claimed: provider aws does not claim the extended feature "load-balancer-udp" of load-balancers (it claims load-balancer-source-ranges)`
	if got := Unmet("serves UDP", labels, f, false); got != want {
		t.Errorf("an unclaimed feature: %q, want %q", got, want)
	}
	f.Extended[specs.LoadBalancerUDP] = true
	if got := Unmet("serves UDP", labels, f, false); got != "" {
		t.Errorf("a claimed feature: %q", got)
	}
	// What is not claimed says first, before what the runtime lacks.
	onKwok := append(Needs(NeedDataPlane), Needs(Claims(specs.LoadBalancerSourceIP))...)
	if got := Unmet("preserves the client source IP", onKwok, f, false); !strings.HasPrefix(got, NotClaimed) {
		t.Errorf("an unclaimed feature on simulated nodes: %q", got)
	}
	// The capability first: a profile that claims no load balancers is
	// told so, not about a feature of them.
	f.Capabilities = providers.NewCapabilities(providers.Routes)
	if got := Unmet("serves UDP", labels, f, false); !strings.Contains(got, `does not claim "load-balancers"`) {
		t.Errorf("an unclaimed capability: %q", got)
	}
}

// TestLoadBalancerIngress checks the ingress against the cloud's load
// balancer, an IP or a hostname, as each provider gives it.
func TestLoadBalancerIngress(t *testing.T) {
	lb := &providers.LoadBalancer{Name: "a1", IP: "127.20.0.1", Hostname: "a1-1.r.elb.amazonaws.com",
		Listeners: []providers.Listener{{Port: 80, Protocol: v1.ProtocolTCP, NodePort: 30080}}}
	for _, tc := range []struct {
		ingress v1.LoadBalancerIngress
		want    string
	}{
		{v1.LoadBalancerIngress{IP: "127.20.0.1"}, ""},
		{v1.LoadBalancerIngress{Hostname: "a1-1.r.elb.amazonaws.com"}, ""},
		{v1.LoadBalancerIngress{IP: "127.20.0.9"}, "expected status ingress IP to be the cloud load balancer's 127.20.0.1, actual 127.20.0.9"},
		{v1.LoadBalancerIngress{Hostname: "b2-1.r.elb.amazonaws.com"}, `expected status ingress hostname to be the cloud load balancer's "a1-1.r.elb.amazonaws.com", actual "b2-1.r.elb.amazonaws.com"`},
	} {
		s := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
			Spec:   v1.ServiceSpec{Ports: []v1.ServicePort{{Port: 80, Protocol: v1.ProtocolTCP, NodePort: 30080}}},
			Status: v1.ServiceStatus{LoadBalancer: v1.LoadBalancerStatus{Ingress: []v1.LoadBalancerIngress{tc.ingress}}}}
		err := LoadBalancerMatches(s, nil, lb)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("ingress %+v: %v, want %q", tc.ingress, err, tc.want)
		}
		if got, want := ingressOf(s), tc.ingress.IP+tc.ingress.Hostname; got != want {
			t.Errorf("ingressOf: %s, want %s", got, want)
		}
	}
}

// TestLoadBalancerDualStack checks a dual-stack Service against its cloud
// load balancer: both families in the cloud, an ingress IP of each, in
// either order; and HasDualStackIngress on what Kubernetes shows.
func TestLoadBalancerDualStack(t *testing.T) {
	listeners := []providers.Listener{{Port: 80, Protocol: v1.ProtocolTCP, NodePort: 30080}}
	dual := &providers.LoadBalancer{Name: "a1", IP: "127.20.0.1", IPv6: "fd00:2::1", Listeners: listeners}
	single := &providers.LoadBalancer{Name: "a1", IP: "127.20.0.1", Listeners: listeners}
	ingress := func(ips ...string) []v1.LoadBalancerIngress {
		var out []v1.LoadBalancerIngress
		for _, ip := range ips {
			out = append(out, v1.LoadBalancerIngress{IP: ip})
		}
		return out
	}
	both := []v1.IPFamily{v1.IPv4Protocol, v1.IPv6Protocol}
	for _, tc := range []struct {
		name     string
		families []v1.IPFamily
		lb       *providers.LoadBalancer
		ingress  []v1.LoadBalancerIngress
		want     string
	}{
		{"dual-stack", both, dual, ingress("127.20.0.1", "fd00:2::1"), ""},
		{"dual-stack, IPv6 first", both, dual, ingress("fd00:2::1", "127.20.0.1"), ""},
		{"made IPv4 alone", both, single, ingress("127.20.0.1"), "expected cloud load balancer a1 of IPv4 and IPv6 (the Service's ipFamilies), actual IPv4 alone (addresses 127.20.0.1)"},
		{"an ingress IP missing", both, dual, ingress("127.20.0.1"), "expected status ingress IPs [127.20.0.1 fd00:2::1] (the cloud load balancer's), actual [127.20.0.1]"},
		{"another IPv6 ingress", both, dual, ingress("127.20.0.1", "fd00:2::9"), "actual [127.20.0.1 fd00:2::9]"},
		{"single-stack Service, dual-stack load balancer", []v1.IPFamily{v1.IPv4Protocol}, dual, ingress("127.20.0.1"), "expected cloud load balancer a1 of IPv4 alone (the Service's ipFamilies), actual IPv4 and IPv6"},
	} {
		s := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
			Spec:   v1.ServiceSpec{Ports: []v1.ServicePort{{Port: 80, Protocol: v1.ProtocolTCP, NodePort: 30080}}, IPFamilies: tc.families},
			Status: v1.ServiceStatus{LoadBalancer: v1.LoadBalancerStatus{Ingress: tc.ingress}}}
		err := LoadBalancerMatches(s, nil, tc.lb)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct {
		ingress []v1.LoadBalancerIngress
		want    string
	}{
		{ingress("127.20.0.1", "fd00:2::1"), ""},
		{[]v1.LoadBalancerIngress{{Hostname: "a1-1.r.elb.amazonaws.com"}}, ""},
		{ingress("127.20.0.1"), "expected an ingress IP of each family (ipFamilies [IPv4 IPv6]), actual [127.20.0.1]"},
		{nil, "expected status.loadBalancer.ingress, actual: none"},
	} {
		s := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}, Spec: v1.ServiceSpec{IPFamilies: both},
			Status: v1.ServiceStatus{LoadBalancer: v1.LoadBalancerStatus{Ingress: tc.ingress}}}
		err := HasDualStackIngress(s)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("HasDualStackIngress(%v): %v, want %q", tc.ingress, err, tc.want)
		}
	}
}

// TestLoadBalancerAffinity checks the cloud's session affinity against
// the Service's: none for none, ClientIP with its timeout (the API
// server's default when it gives none) where the cloud says one.
func TestLoadBalancerAffinity(t *testing.T) {
	secs := func(n int32) *v1.SessionAffinityConfig {
		return &v1.SessionAffinityConfig{ClientIP: &v1.ClientIPConfig{TimeoutSeconds: &n}}
	}
	for _, tc := range []struct {
		name     string
		affinity v1.ServiceAffinity
		config   *v1.SessionAffinityConfig
		cloud    *providers.ClientAffinity
		want     string
	}{
		{"none, none", v1.ServiceAffinityNone, nil, nil, ""},
		{"ClientIP, the same timeout", v1.ServiceAffinityClientIP, secs(60), &providers.ClientAffinity{TimeoutSeconds: 60}, ""},
		{"ClientIP, a cloud that does not say how long", v1.ServiceAffinityClientIP, secs(60), &providers.ClientAffinity{}, ""},
		{"ClientIP, the default timeout", v1.ServiceAffinityClientIP, nil, &providers.ClientAffinity{TimeoutSeconds: 10800}, ""},
		{"ClientIP, none in the cloud", v1.ServiceAffinityClientIP, secs(60), nil, "expected cloud load balancer a1 session affinity ClientIP for 60s, actual none"},
		{"ClientIP, another timeout", v1.ServiceAffinityClientIP, secs(60), &providers.ClientAffinity{TimeoutSeconds: 10800}, "session affinity ClientIP for 60s, actual ClientIP for 10800s"},
		{"switched off, kept in the cloud", v1.ServiceAffinityNone, secs(60), &providers.ClientAffinity{}, "session affinity none, actual ClientIP (the cloud does not say for how long)"},
	} {
		lb := &providers.LoadBalancer{Name: "a1", Listeners: []providers.Listener{{Port: 80, Protocol: v1.ProtocolTCP, NodePort: 30080}}, ClientAffinity: tc.cloud}
		s := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
			Spec: v1.ServiceSpec{Ports: []v1.ServicePort{{Port: 80, Protocol: v1.ProtocolTCP, NodePort: 30080}},
				SessionAffinity: tc.affinity, SessionAffinityConfig: tc.config}}
		err := LoadBalancerMatches(s, nil, lb)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestEveryNeedDecides: each need's function says nothing of features that
// offer everything, and says why of features that offer nothing (but the
// chosen node IP, a need of the node pool's nodes only); the labels the
// doors read name needs that exist.
func TestEveryNeedDecides(t *testing.T) {
	all := Features{Provider: "p", Capabilities: providers.NewCapabilities(specs.Capabilities...),
		Extended: providers.AllFeatures(providers.NewCapabilities(specs.Capabilities...)),
		NodePool: true, ChosenNodeIP: true, Machines: true, Inspector: true, LBInspector: true, RouteInspect: true,
		DataPlane: true, IPv6Nodes: true, DualStackServices: true, IPv6LoadBalancers: true, Restart: true, CCMSeen: true, Faults: true, InTreeKCM: true, HA: true, OlderCCM: true}
	none := Features{Provider: "p"}
	for label, n := range needs {
		if got := n.unmet(all); got != "" {
			t.Errorf("%s: unmet with everything offered: %q", label, got)
		}
		if got := n.unmet(none); got == "" && n.label != NeedChosenNodeIP.label {
			t.Errorf("%s: met with nothing offered", label)
		}
	}
	for _, id := range []specs.ID{specs.MigrateToCCM, specs.UpgradeCCM, specs.MigrateBack} {
		if n := needOf(labels.MigrationNeed(id)); n.unmet == nil {
			t.Errorf("%s: its need decides nothing", id)
		}
	}
	if got := len(needs); got != 15+len(specs.Capabilities)+len(specs.Features) {
		t.Errorf("%d needs declared", got)
	}
}

// fakeCCM answers which controllers it runs.
type fakeCCM struct {
	controllers []string
	err         error
}

func (c fakeCCM) Log() string { return "ccm.log" }
func (c fakeCCM) Controllers(context.Context) ([]string, error) {
	return c.controllers, c.err
}

// The CCM still runs after a node of another owner only if the harness
// can ask it: a CCM it cannot see is no pass, and the spec that asks
// skips first where none is seen.
func TestCCMServing(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		c    cluster.Cluster
		want string
	}{
		{"no CCM to ask", cluster.Cluster{}, "the harness has no CCM to ask"},
		{"died", cluster.Cluster{Health: func() error { return errors.New("cloud-controller-manager exited") }, RunningCCM: fakeCCM{}},
			"expected the CCM running, actual: cloud-controller-manager exited"},
		{"unreachable", cluster.Cluster{RunningCCM: fakeCCM{err: errors.New("connection refused")}}, "expected the CCM serving its /healthz, actual: connection refused"},
		{"no lifecycle controller", cluster.Cluster{RunningCCM: fakeCCM{controllers: []string{names.ServiceLBController}}},
			"expected the CCM running its " + names.CloudNodeLifecycleController},
		{"runs it", cluster.Cluster{RunningCCM: fakeCCM{controllers: []string{names.CloudNodeLifecycleController}}}, ""},
	} {
		err := ccmServing(ctx, &tc.c)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	labels := Needs(NeedCCMSeen)
	if got := Unmet("keeps a node", labels, Features{}, false); !strings.Contains(got, "cannot ask it") {
		t.Errorf("no CCM seen: %q", got)
	}
	if got := Unmet("keeps a node", labels, Features{CCMSeen: true}, false); got != "" {
		t.Errorf("a CCM seen: %q", got)
	}
}

// The nodes a CCM must make backends are its own: a node of another
// owner, as bare metal or another cloud registers one, is no machine of
// its cloud.
func TestEligibleNodes(t *testing.T) {
	node := func(name, providerID string, labels map[string]string) v1.Node {
		return v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: v1.NodeSpec{ProviderID: providerID}}
	}
	nodes := []v1.Node{
		node("own", "fakecloud://i-1", nil),
		node("excluded", "fakecloud://i-2", map[string]string{v1.LabelNodeExcludeBalancers: "true"}),
		node("uninitialized", "", nil),
		node("foreign", "static://foreign", nil),
		node("no-scheme", "i-3", nil),
	}
	if got := EligibleNodes(nodes, "fakecloud"); strings.Join(got, " ") != "own" {
		t.Errorf("with the scheme fakecloud: %v, want [own]", got)
	}
	if got := EligibleNodes(nodes, ""); strings.Join(got, " ") != "own foreign no-scheme" {
		t.Errorf("with no scheme known: %v, want [own foreign no-scheme]", got)
	}
}

// The routes the CCM owes are its own nodes', initialized or not; a node
// of another owner's scheme is no machine of its cloud.
func TestOwnNodes(t *testing.T) {
	nodes := []v1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "own"}, Spec: v1.NodeSpec{ProviderID: "fakecloud://i-1"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "uninitialized"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "foreign"}, Spec: v1.NodeSpec{ProviderID: "static://foreign"}},
	}
	if got := OwnNodes(nodes, "fakecloud"); strings.Join(got, " ") != "own uninitialized" {
		t.Errorf("with the scheme fakecloud: %v, want [own uninitialized]", got)
	}
	if got := OwnNodes(nodes, ""); strings.Join(got, " ") != "own uninitialized foreign" {
		t.Errorf("with no scheme known: %v, want every node", got)
	}
}

// The route checks, on a node the route controller has not come to, one
// it failed to route, and one it routed.
func TestRouteChecks(t *testing.T) {
	node := func(cidr string, conds ...v1.NodeCondition) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: v1.NodeSpec{PodCIDR: cidr}, Status: v1.NodeStatus{Conditions: conds}}
	}
	failed := v1.NodeCondition{Type: v1.NodeNetworkUnavailable, Status: v1.ConditionTrue, Reason: "NoRouteCreated"}
	routed := v1.NodeCondition{Type: v1.NodeNetworkUnavailable, Status: v1.ConditionFalse, Reason: "RouteCreated"}
	for _, c := range []struct {
		name                     string
		n                        *v1.Node
		cidr, asked, routeExists bool
	}{
		{"no pod CIDR", node(""), false, false, true},
		{"not come to", node("10.244.1.0/24"), true, false, false},
		{"failed", node("10.244.1.0/24", failed), true, true, false},
		{"routed", node("10.244.1.0/24", routed), true, true, true},
	} {
		if got := HasPodCIDR(c.n) == nil; got != c.cidr {
			t.Errorf("%s: HasPodCIDR passes %v, want %v", c.name, got, c.cidr)
		}
		if got := NetworkConditionSet(c.n) == nil; got != c.asked {
			t.Errorf("%s: NetworkConditionSet passes %v, want %v", c.name, got, c.asked)
		}
		if got := RouteCreated(c.n) == nil; got != c.routeExists {
			t.Errorf("%s: RouteCreated passes %v, want %v", c.name, got, c.routeExists)
		}
	}
}

// TestIngressProxied checks the ingress of a load balancer that speaks
// the PROXY protocol: ipMode Proxy on an IP; a hostname alone passes;
// VIP, or no ipMode (which means VIP), fails naming the mode.
func TestIngressProxied(t *testing.T) {
	proxy, vip := v1.LoadBalancerIPModeProxy, v1.LoadBalancerIPModeVIP
	for _, tc := range []struct {
		ingress []v1.LoadBalancerIngress
		want    string
	}{
		{[]v1.LoadBalancerIngress{{IP: "127.20.0.1", IPMode: &proxy}}, ""},
		{[]v1.LoadBalancerIngress{{Hostname: "a1-1.r.elb.amazonaws.com"}}, ""},
		{[]v1.LoadBalancerIngress{{IP: "127.20.0.1", IPMode: &vip}}, "expected ingress 127.20.0.1 of ipMode Proxy, its load balancer speaking the PROXY protocol (with VIP, kube-proxy sends in-cluster clients of 127.20.0.1 straight to the backends, without the header), actual ipMode VIP"},
		{[]v1.LoadBalancerIngress{{IP: "127.20.0.1"}}, "actual ipMode unset (VIP)"},
		{[]v1.LoadBalancerIngress{{IP: "127.20.0.1", IPMode: &proxy}, {IP: "fd00::1", IPMode: &vip}}, "expected ingress fd00::1 of ipMode Proxy"},
		{nil, "expected status.loadBalancer.ingress, actual: none"},
	} {
		s := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
			Status: v1.ServiceStatus{LoadBalancer: v1.LoadBalancerStatus{Ingress: tc.ingress}}}
		err := IngressProxied(s)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("ingress %+v: %v, want %q", tc.ingress, err, tc.want)
		}
	}
}
