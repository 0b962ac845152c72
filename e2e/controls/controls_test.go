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

// Package controls holds the negative controls of the scenarios: the real
// suite, run against a deliberately broken cloud, must fail exactly the
// specs that check what was broken, with messages that name the node, the
// expected and the actual value. A scenario that passes here could not
// catch the fault it exists for.
//
// Each control is a whole e2e.test run on its own cluster, so this package
// needs the built suite: E2E_TEST=<path to e2e.test> (make controls sets
// it), or it builds one.
package controls

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cloud-provider/names"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	fakecloudccm "sigs.k8s.io/ccm-harness/fakecloud/cloudprovider"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/process"
	"sigs.k8s.io/ccm-harness/manifests"
	"sigs.k8s.io/ccm-harness/migration"
	"sigs.k8s.io/ccm-harness/options"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/providers/aws"
	"sigs.k8s.io/ccm-harness/providers/emulated"
	"sigs.k8s.io/ccm-harness/providers/fake"
	"sigs.k8s.io/ccm-harness/providers/openstack"
	"sigs.k8s.io/ccm-harness/providers/vsphere"
	"sigs.k8s.io/ccm-harness/specs"
)

type control struct {
	name string
	// provider is the profile whose cloud is broken; default fake.
	provider string
	// cluster is the runtime; default local.
	cluster string
	// label is the Ginkgo label filter: the specs this control exercises.
	label string
	// focus, if set, narrows them further (a Ginkgo focus regexp).
	focus string
	// config is the provider config that breaks the cloud; with profile,
	// the profile file's cloudConfig.
	config any
	// ccmMigration, if set, is the CCMs' LeaderMigrationConfiguration in
	// the leader-migration specs: a broken migration rather than a broken
	// cloud.
	ccmMigration []byte
	// migration, if set, is every manager's LeaderMigrationConfiguration.
	migration []byte
	// rollbackMigration, if set, is that of release N's managers the
	// downgrade brings back.
	rollbackMigration []byte
	// migrationDefault runs the managers with leader migration and no
	// configuration file: each with its library's built-in default.
	migrationDefault bool
	// coordinated runs the cluster with coordinated leader election
	// (--coordinated-leader-election).
	coordinated bool
	// dualStack makes the kind cluster of both families (--dual-stack).
	dualStack bool
	// profile, if set, is a profile file of this repository's that the
	// control runs (PROVIDER=external) with its manifests as manifests
	// changes them: the CCM's RBAC or settings broken rather than the
	// cloud. Its image must have been built (make controls builds them).
	profile   string
	manifests func([]byte) []byte
	// misbehave, if set, is a deliberate fault of fakecloud's CCM as the
	// built-in fake provider runs it (a process of the harness's, which
	// inherits the suite's environment), where profile would take a
	// cluster's images and manifests.
	misbehave fakecloudccm.Misbehaviour
	// differences, with profile, are the profile's known differences
	// instead of its own.
	differences []providers.Difference
	// plugin, with profile, is a cloud plugin of this repository's that
	// answers in place of the profile's: one that lies.
	plugin string
	// exhaustive leaves the control to make controls-all (the presubmit
	// pull-ccm-harness-controls, when the specs, the clouds or the
	// profiles change, and the daily periodic ci-ccm-harness-controls):
	// make test runs the others, which fail every spec this one fails but
	// onlyExhaustive's (TestEverySpecHasAControl checks it). The ones
	// marked are a second way to break a spec (another provider's cloud,
	// another migration config, another misbehaving CCM), each a cluster's
	// minutes of both cores that make test's budget cannot hold.
	exhaustive bool
	// fail maps a spec to what its failure message must contain.
	// Every other spec run must pass: a fault that breaks unrelated specs
	// would show a scenario failing for the wrong reason.
	fail map[specs.ID][]string
}

var controls = []control{
	{
		name:   "taint never removed",
		label:  "node-init",
		config: emulated.Config{Faults: []api.Fault{{Operation: api.OpAny, Instance: "node-2", Kind: api.FaultError, Status: 500, Message: "injected: instance API down"}}},
		fail: map[specs.ID][]string{
			specs.InitTaintRemoved: {"node node-2", "expected taint node.cloudprovider.kubernetes.io/uninitialized removed", "actual: still present"},
		},
	},
	{
		name:   "wrong provider ID",
		label:  "provider-id",
		config: emulated.Config{Faults: []api.Fault{{Operation: api.OpAny, Instance: "node-2", Kind: api.FaultCorrupt, Field: api.CorruptID, Value: "i-bogus"}}},
		fail: map[specs.ID][]string{
			specs.ProviderIDSet: {"node node-2", "expected spec.providerID \"fakecloud://i-", `actual "fakecloud://i-bogus"`},
		},
	},
	{
		name:   "wrong address",
		label:  "node-address",
		config: emulated.Config{Faults: []api.Fault{{Operation: api.OpAny, Instance: "node-3", Kind: api.FaultCorrupt, Field: api.CorruptAddresses, Value: "InternalIP=127.9.9.9,Hostname=node-3"}}},
		fail: map[specs.ID][]string{
			specs.NodeAddresses: {"node node-3", "expected addresses [", "actual [Hostname=node-3 InternalIP=127.9.9.9]"},
		},
	},
	{
		name:   "wrong instance type",
		label:  "instance-type",
		config: emulated.Config{Faults: []api.Fault{{Operation: api.OpAny, Instance: "node-1", Kind: api.FaultCorrupt, Field: api.CorruptInstanceType, Value: "fake.wrong"}}},
		fail: map[specs.ID][]string{
			specs.InstanceTypeLabel: {"node node-1", `="fake.medium" (the cloud's instance type)`, `actual "fake.wrong"`},
		},
	},
	{
		// And the backends spec's join step: the cloud keeps a load
		// balancer's first backends through every update.
		name:  "wrong zone, load balancer backends frozen after creation",
		label: "zone || loadbalancer",
		focus: "labels the zone and region|updates the backends when nodes join",
		config: emulated.Config{Faults: []api.Fault{
			{Operation: api.OpAny, Instance: "node-1", Kind: api.FaultCorrupt, Field: api.CorruptZone, Value: "fake-region-9z"},
			{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreBackends, After: 1},
		}},
		fail: map[specs.ID][]string{
			specs.ZoneRegionLabels: {"node node-1", "expected label topology.kubernetes.io/zone=\"fake-region-1", `actual "fake-region-9z"`},
			specs.LBBackends:       {"step join: ", "Service loadbalancer-", "(every eligible node), actual [node-1 node-2 node-3]"},
		},
	},
	{
		// The nodes a spec adds have random names: a fault about join-*
		// breaks only the joining node's instance, one about restart-*
		// lies about the ID of the node the restarted CCM initializes,
		// and the region of node-2 is the cloud's lie alone.
		name:  "joining node never initialized, restarted CCM's node given a wrong ID, region wrong",
		label: "node-init || provider-id || zone",
		config: emulated.Config{Faults: []api.Fault{
			{Operation: api.OpAny, Instance: "join-*", Kind: api.FaultError, Status: 500, Message: "injected: instance API down for joining nodes"},
			{Operation: api.OpAny, Instance: "restart-*", Kind: api.FaultCorrupt, Field: api.CorruptID, Value: "i-bogus"},
			{Operation: api.OpAny, Instance: "node-2", Kind: api.FaultCorrupt, Field: api.CorruptRegion, Value: "fake-region-9"},
		}},
		fail: map[specs.ID][]string{
			specs.InitJoiningNode:  {"node join-", "expected taint node.cloudprovider.kubernetes.io/uninitialized removed by the CCM, actual: still present"},
			specs.ProviderIDKept:   {"node restart-", "expected spec.providerID \"fakecloud://i-", `actual "fakecloud://i-bogus"`},
			specs.ZoneRegionLabels: {"node node-2", "expected label topology.kubernetes.io/region=", `actual "fake-region-9"`},
		},
	},
	{
		name:   "load balancer ports dropped",
		label:  "loadbalancer",
		focus:  "provisions a TCP load balancer|serves UDP|serves TCP and UDP|provisions without node ports|follows a changed port",
		config: emulated.Config{Faults: []api.Fault{{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreListeners}}},
		fail: map[specs.ID][]string{
			specs.LBProvision:     {"Service loadbalancer-", "expected cloud load balancer", "listeners [TCP:80->", "actual []"},
			specs.LBUDP:           {"expected cloud load balancer", "listeners [UDP:53->", "actual []"},
			specs.LBMixedProtocol: {"expected cloud load balancer", "listeners [TCP:53->", "UDP:53->", "actual []"},
			specs.LBNoNodePorts:   {"expected cloud load balancer", "listeners [TCP:80->0]", "actual []"},
			specs.LBPortChange:    {"expected cloud load balancer", "listeners [TCP:80->", "actual []"},
		},
	},
	{
		// A cloud that never recovers: beside the fault the spec adds and
		// clears, one of the config's says the same and stays.
		name:   "load balancer creation failing for good",
		label:  "loadbalancer",
		focus:  "reports a failed creation",
		config: emulated.Config{Faults: []api.Fault{{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultError, Status: 500, Message: "injected by the harness: load balancer quota exceeded, for good"}}},
		fail: map[specs.ID][]string{
			specs.LBFailedCreation: {"waiting for an ingress IP after the cloud recovered", "expected status.loadBalancer.ingress, actual: none"},
		},
	},
	{
		name:   "load balancer backend missing",
		label:  "loadbalancer",
		focus:  "updates the backends when nodes join",
		config: emulated.Config{Faults: []api.Fault{{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreBackends}}},
		fail: map[specs.ID][]string{
			specs.LBBackends: {"Service loadbalancer-", "backends [node-1 node-2 node-3] (every eligible node), actual []"},
		},
	},
	{
		name:   "load balancer source ranges dropped",
		label:  "loadbalancer",
		focus:  "hands loadBalancerSourceRanges to the cloud",
		config: emulated.Config{Faults: []api.Fault{{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreSourceRanges}}},
		fail: map[specs.ID][]string{
			specs.LBSourceRanges: {"expected cloud load balancer", "source ranges [127.0.0.1/32 127.0.100.0/24], actual []"},
		},
	},
	{
		name:   "load balancer health check dropped",
		label:  "loadbalancer",
		focus:  "health-checks the healthCheckNodePort",
		config: emulated.Config{Faults: []api.Fault{{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreHealthCheck}}},
		fail: map[specs.ID][]string{
			specs.LBHealthCheckPort: {"expected cloud load balancer", "health check on node port 3", "actual 0"},
		},
	},
	{
		name:   "wrong ingress IP",
		label:  "loadbalancer",
		focus:  "provisions a TCP load balancer",
		config: emulated.Config{Faults: []api.Fault{{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultCorrupt, Field: api.CorruptIP, Value: "127.19.9.9"}}},
		fail: map[specs.ID][]string{
			specs.LBProvision: {"expected status ingress IP to be the cloud load balancer's 127.20.", "actual 127.19.9.9"},
		},
	},
	{
		name:   "load balancer leaked, finalizer never removed",
		label:  "loadbalancer",
		focus:  "when the Service is deleted|when the type changes to ClusterIP",
		config: emulated.Config{Faults: []api.Fault{{Operation: api.OpDeleteLoadBalancer, Kind: api.FaultError, Status: 500, Message: "injected: delete failed"}}},
		fail: map[specs.ID][]string{
			specs.LBDeleted:    {"expected deleted, actual: still present with finalizers [service.kubernetes.io/load-balancer-cleanup]"},
			specs.LBTypeChange: {"expected finalizer service.kubernetes.io/load-balancer-cleanup absent"},
		},
	},
	{
		// And a cloud that drops a load balancer's session affinity.
		name:  "route never created, load balancer session affinity dropped",
		label: "route || loadbalancer",
		focus: "creates a route to every node's pod CIDR|hands sessionAffinity ClientIP",
		config: emulated.Config{Faults: []api.Fault{
			{Operation: api.OpCreateRoute, Kind: api.FaultError, Status: 500, Message: "injected: route table full"},
			{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreClientAffinity},
		}},
		fail: map[specs.ID][]string{
			specs.RoutesCreated:     {"node node-", "expected condition NetworkUnavailable=False reason RouteCreated, actual True"},
			specs.LBSessionAffinity: {"Service loadbalancer-", "expected cloud load balancer", "session affinity ClientIP for 60s, actual none"},
		},
	},
	{
		// A cloud that drops a load balancer's PROXY protocol (one ignore
		// fault fires per call, so not beside another): fakecloud's CCM
		// then writes the ipMode of the load balancer the cloud made, VIP,
		// and the spec names both wrongs.
		name:   "load balancer PROXY protocol dropped",
		label:  "loadbalancer",
		focus:  "speaks the PROXY protocol when asked",
		config: emulated.Config{Faults: []api.Fault{{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreProxyProtocol}}},
		fail: map[specs.ID][]string{
			specs.LBIPMode: {"to speak the PROXY protocol to its backends, as annotations fakecloud.ccm-harness.sigs.k8s.io/proxy-protocol=v1 ask, actual: it speaks none",
				"of ipMode Proxy, its load balancer speaking the PROXY protocol", "actual ipMode VIP"},
		},
	},
	{
		// And a cloud whose load balancer error is another than the one
		// the spec injects: the event must name the cloud's own error.
		name:  "route never deleted, load balancer creation failing with another error",
		label: "route || loadbalancer",
		focus: "removes a deleted node's route|reports a failed creation",
		config: emulated.Config{Faults: []api.Fault{
			{Operation: api.OpDeleteRoute, Kind: api.FaultError, Status: 500, Message: "injected: route table locked"},
			{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultError, Status: 503, Message: "injected: load balancer API unavailable"},
		}},
		fail: map[specs.ID][]string{
			specs.RoutesReconciled: {"to node route-", "expected none (no node has that pod CIDR), actual: present"},
			specs.LBFailedCreation: {`expected event SyncLoadBalancerFailed mentioning "injected by the harness: load balancer quota exceeded"`, "injected: load balancer API unavailable"},
		},
	},
	{
		// A cloud that keeps the session affinity a load balancer was
		// made with through every change after, as a CCM that sets it
		// only when it creates the load balancer does.
		name:   "load balancer session affinity kept once switched off",
		label:  "loadbalancer",
		focus:  "hands sessionAffinity ClientIP",
		config: emulated.Config{Faults: []api.Fault{{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreClientAffinity, After: 1}}},
		fail: map[specs.ID][]string{
			specs.LBSessionAffinity: {"expected cloud load balancer", "session affinity none, actual ClientIP for 60s"},
		},
	},
	{
		// Real nodes: one kind cluster for the three [datapath] checks. The
		// cloud accepts the routes and stores none, so Kubernetes sees
		// them made (pods schedule) while no packet finds its way.
		name:       "kind datapath with no load balancer backends and no routes",
		exhaustive: true,
		cluster:    "kind",
		label:      "datapath",
		focus:      "carries TCP and UDP|health-checks only nodes with endpoints|carries pod traffic",
		config: emulated.Config{Faults: []api.Fault{
			{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreBackends},
			{Operation: api.OpCreateRoute, Kind: api.FaultIgnore, Field: api.IgnoreRoute},
		}},
		fail: map[specs.ID][]string{
			// The ingress IP: 10.251.N.x on kind as root, 127.20.N.x
			// otherwise (providers/emulated's lbNet).
			specs.DatapathTCPUDP:       {"Could not reach HTTP service through ", ":80 after "},
			specs.DatapathHealthChecks: {"Could not reach HTTP service through ", ":80 after "},
			specs.RoutesDatapath:       {"expected a TCP connection from pod client to 10.244.", "actual:"},
		},
	},
	{
		// Real nodes again, for the steps after reachability: load
		// balancers that send to every node, never told the health check,
		// that proxy, handing backends fakecloud's address, that say they
		// keep a client on its backend and do not, and that say they have
		// an IPv6 address and serve nothing there (on a dual-stack
		// cluster, whose other specs' Services are IPv4 alone), and a CCM
		// that writes ipMode VIP for a load balancer speaking the PROXY
		// protocol (hcloud CCM 727), so that kube-proxy sends pods'
		// requests for its ingress IP straight to the backend. Unchecked,
		// the nodes whose pods roll lose requests under Local.
		name:      "kind load balancers with no health check, proxying, without affinity, IPv6 unserved; a CCM writing ipMode VIP",
		cluster:   "kind",
		dualStack: true,
		label:     "datapath",
		focus:     "health-checks only nodes with endpoints|preserves the client source IP|keeps a client on one backend pod|keeps answering while the backend pods roll|through the ingress IP of each family|in-cluster clients of a PROXY-protocol",
		misbehave: fakecloudccm.VIPForProxyProtocol,
		config: emulated.Config{ProxyLoadBalancers: true, IgnoreClientAffinity: true, UnservedIPv6: true, Faults: []api.Fault{
			{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreHealthCheck},
		}},
		fail: map[specs.ID][]string{
			specs.DatapathHealthChecks:  {"expected the load balancer to send all", "requests to nodes with an endpoint", "failed, as at a node without one"},
			specs.DatapathSourceIP:      {"expected the backend to see client address ", ", actual "},
			specs.DatapathAffinity:      {"expected 15 requests from one client with sessionAffinity ClientIP answered by one backend pod, actual: request 1 by datapath-affinity-"},
			specs.DatapathRollingUpdate: {"datapath-rolling-local (externalTrafficPolicy Local): expected at least 95% of the requests through", "answered while the backend pods rolled (rollout 1 of 2), actual"},
			specs.DatapathDualStack:     {"waiting for an answer from a backend pod through the IPv6 ingress fd00:", "request 1 of 1: "},
			specs.DatapathIPMode: {"Service datapath-", "expected a request from pod ipmode-client to ingress IP 10.251.",
				"(ipMode VIP) to reach the backend through the load balancer, behind the PROXY protocol header it sends, actual: the backend got the request with nothing before it"},
		},
	},
	{
		// The later steps of two specs: a cloud that keeps a load
		// balancer's first listeners through a port change, and refuses
		// to create a joining node's route a second time.
		name:  "load balancer port change ignored, route never recreated",
		label: "loadbalancer || route",
		focus: "follows a changed port|removes a deleted node's route",
		config: emulated.Config{Faults: []api.Fault{
			{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreListeners, After: 1},
			{Operation: api.OpCreateRoute, Instance: "route-*", Kind: api.FaultError, Status: 500, Message: "injected: route table full for recreated routes", After: 1},
		}},
		fail: map[specs.ID][]string{
			specs.LBPortChange:     {"expected cloud load balancer", "listeners [TCP:8080->", "actual [TCP:80->"},
			specs.RoutesReconciled: {"node route-", "expected a route for its pod CIDR", "actual: none"},
		},
	},
	{
		// Its exclude and leave steps: a cloud that never lets a backend
		// go. The exclusion's failure is stated as a known difference,
		// so the spec goes on to the leave step, which fails too: the
		// deleted node stays a backend. Were the exclusion to pass, the
		// difference would fail the spec as no longer holding.
		name:    "load balancer backends never removed",
		label:   "loadbalancer",
		focus:   "updates the backends when nodes join",
		profile: "e2e/testdata/fakecloud-ccm-image.yaml",
		config:  emulated.Config{Faults: []api.Fault{{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreBackendRemovals}}},
		differences: []providers.Difference{{Spec: specs.LBBackends, Step: providers.StepExclude,
			Shows: "(every eligible node), actual [lb-", Evidence: "stated for the control: the cloud keeps every backend"}},
		fail: map[specs.ID][]string{
			specs.LBBackends: {"step leave: ", "backends [node-1 node-2 node-3] (every eligible node), actual [lb-"},
		},
	},
	{
		// The power-on step of the shutdown spec has no control: the
		// CCM's node lifecycle controller (k8s.io/cloud-provider's)
		// removes the shutdown taint from any Ready node before it asks
		// the cloud anything, so no cloud fault can keep the taint: its
		// control needs a CCM built to leave it, which is not written.
		name:   "node never deleted nor tainted",
		label:  "node-lifecycle",
		config: emulated.Config{Faults: []api.Fault{{Operation: api.OpAny, Kind: api.FaultCorrupt, Field: api.CorruptState, Value: string(api.StateRunning)}}},
		fail: map[specs.ID][]string{
			specs.LifecycleShutdown:  {"node stop-", "expected taint node.cloudprovider.kubernetes.io/shutdown present", "actual taints:"},
			specs.LifecycleTerminate: {"node term-", "expected the Node deleted, actual: still present"},
		},
	},
	{
		// No cloud fault reaches a node that is not the cloud's: the
		// CCM is not to ask about it. fakecloud's CCM told to look such
		// a node up by its name, as a CCM that ignores the scheme does,
		// finds no instance and deletes it.
		name:      "a CCM that deletes a node of another owner",
		label:     "node-lifecycle",
		focus:     "keeps a NotReady node whose provider ID",
		profile:   "e2e/testdata/fakecloud-ccm-image.yaml",
		manifests: misbehave(fakecloudccm.AdoptForeignNodes),
		fail: map[specs.ID][]string{
			specs.LifecycleForeign: {"the CCM to leave the node of another owner alone: stopped holding after", "node foreign-", "expected kept, actual: deleted"},
		},
	},
	{
		// A cloud whose load balancer speaks the PROXY protocol, and a
		// CCM that writes ipMode VIP for it all the same (hcloud CCM
		// 727): in-cluster clients would skip the load balancer.
		name:      "a CCM that writes ipMode VIP for a PROXY-protocol load balancer",
		label:     "loadbalancer",
		focus:     "speaks the PROXY protocol when asked",
		profile:   "e2e/testdata/fakecloud-ccm-image.yaml",
		manifests: misbehave(fakecloudccm.VIPForProxyProtocol),
		fail: map[specs.ID][]string{
			specs.LBIPMode: {"Service loadbalancer-", "of ipMode Proxy, its load balancer speaking the PROXY protocol (with VIP, kube-proxy sends in-cluster clients of 127.20.", "actual ipMode VIP"},
		},
	},
	{
		// A cloud that takes a dual-stack load balancer's request and
		// makes it IPv4 alone: the CCM writes the one ingress IP the
		// cloud gave.
		name:   "dual-stack load balancer made IPv4 alone",
		label:  "loadbalancer",
		focus:  "provisions a load balancer of both families",
		config: emulated.Config{Faults: []api.Fault{{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreIPFamilies}}},
		fail: map[specs.ID][]string{
			specs.LBDualStack: {"waiting for an ingress IP of each family", "Service loadbalancer-", "expected an ingress IP of each family (ipFamilies [IPv4 IPv6]), actual [127.20."},
		},
	},
	{
		// A dual-stack cloud, and a CCM that reports its instances'
		// IPv4 addresses alone, as the AWS CCM does unless its
		// NodeIPFamilies names ipv6: the nodes lack their IPv6 address,
		// and a node whose kubelet was given a dual-stack --node-ip is
		// never initialized (the CCM's addresses lack one of its IPs).
		name:      "a CCM that reports IPv4 addresses only",
		label:     "node-address",
		focus:     "sets the addresses the cloud reports|honours a dual-stack --node-ip",
		profile:   "e2e/testdata/fakecloud-ccm-image.yaml",
		manifests: misbehave(fakecloudccm.IPv4OnlyAddresses),
		fail: map[specs.ID][]string{
			specs.NodeAddresses:   {"expected addresses [", "InternalIP=fd00:1:", "(the cloud's), actual ["},
			specs.DualStackNodeIP: {"node nodeip6-", "expected taint node.cloudprovider.kubernetes.io/uninitialized removed by the CCM, actual: still present", "(its kubelet gave --node-ip 127.1.", ",fd00:1:"},
		},
	},
	{
		// And told to panic on it, as a CCM that parses every provider
		// ID as its own: the node is kept, the CCM is gone.
		name:       "a CCM that crashes on a node of another owner",
		exhaustive: true,
		label:      "node-lifecycle",
		focus:      "keeps a NotReady node whose provider ID",
		profile:    "e2e/testdata/fakecloud-ccm-image.yaml",
		manifests:  misbehave(fakecloudccm.CrashOnForeignNodes),
		fail: map[specs.ID][]string{
			specs.LifecycleForeign: {"expected the CCM running, actual: ", "exited unexpectedly"},
		},
	},
	{
		// And told to fail every load balancer while such a node is in
		// the cluster, as a CCM that reads every node's provider ID as
		// its own to place one (OpenStack's subnet autodetection): the
		// Service gets no ingress.
		name:      "a CCM that fails load balancers on a node of another owner",
		label:     "loadbalancer",
		focus:     "provisions for its own nodes while a node of another owner",
		profile:   "e2e/testdata/fakecloud-ccm-image.yaml",
		manifests: misbehave(fakecloudccm.FailLoadBalancersOnForeignNodes),
		fail: map[specs.ID][]string{
			specs.LBForeignNode: {"waiting for an ingress IP", "expected status.loadBalancer.ingress, actual: none"},
		},
	},
	{
		// And told to fail its whole route table once asked for a route
		// to such a node, as a CCM that takes every route's target for
		// its own instance: the node that joins after it gets no route.
		name:      "a CCM that fails its routes on a node of another owner",
		label:     "route",
		focus:     "routes its own nodes while a node of another owner",
		profile:   "e2e/testdata/fakecloud-ccm-image.yaml",
		manifests: misbehave(fakecloudccm.FailRoutesOnForeignNodes),
		fail: map[specs.ID][]string{
			specs.RoutesForeignNode: {"which joined after the node of another owner", "expected condition NetworkUnavailable=False reason RouteCreated"},
		},
	},
	// vSphere: the real vSphere CCM against a vcsim made to lie or to hold
	// a broken VM. Their CCM reads inline credentials, the e2e run's a
	// Secret: a spec that passes here shows the inline ones work.
	{
		// The CCM's endpoint renames the zone tag while the inspector's
		// endpoint tells the truth, so the labels the CCM sets differ
		// from the tags vCenter holds: every node placed in zone-a1 fails.
		name:     "vsphere zone tag read wrong",
		provider: vsphere.Name,
		label:    "zone",
		config:   vsphere.Config{Credentials: "inline", Faults: vsphere.Faults{RenameTags: map[string]string{"zone-a1": "zone-a9"}}},
		fail: map[specs.ID][]string{
			specs.ZoneRegionLabels: {"node node-", `expected label topology.kubernetes.io/zone="zone-a1" (the cloud's zone), actual "zone-a9"`},
		},
	},
	{
		// A cloud plugin's answers are the truth the specs judge by: one
		// that says every machine is in another zone than EC2 says (and
		// the CCM labels) fails the zone spec, quoting the plugin's zone.
		name:    "cloud plugin lying about zones",
		profile: "e2e/testdata/aws-plugin.yaml",
		plugin:  "e2e/testdata/lying-zone-plugin.sh",
		label:   "zone",
		fail: map[specs.ID][]string{
			specs.ZoneRegionLabels: {"node node-", `expected label topology.kubernetes.io/zone="lie-zone-1x" (the cloud's zone), actual "fake-region-1`},
		},
	},
	{
		// Without a guest hostname the CCM cannot find the node's VM by
		// name; a joining node with one must still be initialized.
		name:       "vsphere VM without guest hostname",
		exhaustive: true,
		provider:   vsphere.Name,
		label:      "node-init",
		config:     vsphere.Config{Credentials: "inline", Faults: vsphere.Faults{NoGuestHostname: []string{"node-2"}}},
		fail: map[specs.ID][]string{
			specs.InitTaintRemoved: {"node node-2", "expected taint node.cloudprovider.kubernetes.io/uninitialized removed", "actual: still present"},
		},
	},
	// OpenStack: the real OpenStack CCM against fakecloud's OpenStack API
	// made to lie, with the faults of the native API: Nova and Neutron
	// answer from the same instances. One cluster for both: the lies are
	// about different nodes.
	{
		name:       "openstack server's availability zone and addresses wrong",
		exhaustive: true,
		provider:   openstack.Name,
		label:      "zone || node-address",
		focus:      "labels the zone and region|sets the addresses the cloud reports",
		config: openstack.Config{Config: emulated.Config{Faults: []api.Fault{
			{Operation: api.OpAny, Instance: "node-1", Kind: api.FaultCorrupt, Field: api.CorruptZone, Value: "fake-region-9z"},
			{Operation: api.OpAny, Instance: "node-3", Kind: api.FaultCorrupt, Field: api.CorruptAddresses, Value: "InternalIP=127.9.9.9,Hostname=node-3"},
		}}},
		fail: map[specs.ID][]string{
			specs.ZoneRegionLabels: {"node node-1", "expected label topology.kubernetes.io/zone=\"fake-region-1", `actual "fake-region-9z"`},
			specs.NodeAddresses:    {"node node-3", "expected addresses [", "actual [Hostname=node-3 InternalIP=127.9.9.9]"},
		},
	},
	{
		// The CCM told to report no IPv6 address (ipv6-support-disabled
		// in [Networking]), against servers that have one: the nodes
		// lack it, and a node whose kubelet was given a dual-stack
		// --node-ip is never initialized.
		name:       "openstack CCM with IPv6 support disabled",
		exhaustive: true,
		provider:   openstack.Name,
		label:      "node-address",
		focus:      "sets the addresses the cloud reports|honours a dual-stack --node-ip",
		config:     openstack.Config{IPv6SupportDisabled: true},
		fail: map[specs.ID][]string{
			specs.NodeAddresses:   {"expected addresses [", "InternalIP=fd00:1:", "(the cloud's), actual ["},
			specs.DualStackNodeIP: {"node nodeip6-", "expected taint node.cloudprovider.kubernetes.io/uninitialized removed by the CCM, actual: still present", ",fd00:1:"},
		},
	},
	{
		// Octavia acknowledges the listeners and keeps none: the OpenStack
		// CCM sees its load balancer ACTIVE, the cloud serves nothing. And
		// Neutron refuses every extra route. One cluster for both: the
		// faults are on different operations.
		name:     "openstack load balancer ports dropped, route never created",
		provider: openstack.Name,
		label:    "loadbalancer || route",
		focus:    "provisions a TCP load balancer|creates a route to every node's pod CIDR",
		config: openstack.Config{Config: emulated.Config{Faults: []api.Fault{
			{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreListeners},
			{Operation: api.OpCreateRoute, Kind: api.FaultError, Status: 500, Message: "injected: route table full"},
		}}},
		fail: map[specs.ID][]string{
			specs.LBProvision:   {"Service loadbalancer-", "expected cloud load balancer", "listeners [TCP:80->", "actual []"},
			specs.RoutesCreated: {"node node-", "expected condition NetworkUnavailable=False reason RouteCreated, actual True"},
		},
	},
	// AWS: the real AWS CCM against fakecloud's EC2 made to lie, with the
	// faults of the native API. One cluster: the lies are about different
	// nodes and operations. The zone lie names a zone EC2 lists (a fourth
	// the nodes are not in): the CCM refuses a zone it cannot find.
	{
		name:     "aws instance's zone, type and addresses wrong, route never created, load balancer ports dropped",
		provider: aws.Name,
		label:    "zone || node-address || instance-type || route || loadbalancer",
		focus:    "labels the zone and region|sets the addresses the cloud reports|labels the instance type|creates a route to every node's pod CIDR|provisions a TCP load balancer",
		config: aws.Config{Config: emulated.Config{
			Zones: []string{"fake-region-1a", "fake-region-1b", "fake-region-1c", "fake-region-1d"},
			Faults: []api.Fault{
				{Operation: api.OpAny, Instance: "node-1", Kind: api.FaultCorrupt, Field: api.CorruptZone, Value: "fake-region-1d"},
				{Operation: api.OpAny, Instance: "node-2", Kind: api.FaultCorrupt, Field: api.CorruptInstanceType, Value: "m5.large"},
				{Operation: api.OpAny, Instance: "node-3", Kind: api.FaultCorrupt, Field: api.CorruptAddresses, Value: "InternalIP=127.9.9.9,Hostname=node-3"},
				{Operation: api.OpCreateRoute, Kind: api.FaultError, Status: 500, Message: "injected: route table full"},
				// Elastic Load Balancing acknowledges the listeners and
				// keeps none.
				{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreListeners},
			}}},
		fail: map[specs.ID][]string{
			specs.LBProvision:       {"Service loadbalancer-", "expected cloud load balancer", "listeners [TCP:80->", "actual []"},
			specs.ZoneRegionLabels:  {"node node-1", "expected label topology.kubernetes.io/zone=\"fake-region-1", `actual "fake-region-1d"`},
			specs.InstanceTypeLabel: {"node node-2", `actual "m5.large"`},
			specs.NodeAddresses:     {"node node-3", "expected addresses [", "actual [Hostname=node-3 InternalDNS=node-3 InternalIP=127.9.9.9]"},
			specs.RoutesCreated:     {"node node-", "expected condition NetworkUnavailable=False reason RouteCreated, actual True"},
		},
	},
	{
		// Elastic Load Balancing v2 acknowledges the targets and keeps
		// none: the network load balancer forwards to no node. And, in
		// the same cluster, a cloud with IPv6 whose CCM is told
		// NodeIPFamilies ipv4 alone, as a user who left ipv6 out: it
		// reports no IPv6 address of an instance that has one, and a node
		// whose kubelet was given a dual-stack --node-ip is never
		// initialized.
		name:       "aws network load balancer targets dropped, CCM told NodeIPFamilies ipv4 in a cloud with IPv6",
		exhaustive: true,
		provider:   aws.Name,
		label:      "loadbalancer || node-address",
		focus:      "provisions a TCP load balancer|sets the addresses the cloud reports|honours a dual-stack --node-ip",
		config: aws.Config{LoadBalancerType: aws.NLB, IPv6: true, NodeIPFamilies: []string{"ipv4"}, Config: emulated.Config{Faults: []api.Fault{
			{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreBackends},
		}}},
		fail: map[specs.ID][]string{
			specs.LBProvision:     {"Service loadbalancer-", "expected cloud load balancer", "backends [", "(every eligible node), actual []"},
			specs.NodeAddresses:   {"expected addresses [", "InternalIP=fd00:1:", "(the cloud's), actual ["},
			specs.DualStackNodeIP: {"node nodeip6-", "expected taint node.cloudprovider.kubernetes.io/uninitialized removed by the CCM, actual: still present", ",fd00:1:"},
		},
	},
	{
		// The CCMs' configuration forgets a controller: they run it under
		// their own lease while release N's kube-controller-manager runs
		// it under the migration lease.
		name:         "CCM leader migration config without service-lb-controller",
		label:        "leader-migration && upgrade",
		ccmMigration: migration.NewConfig(migration.CloudControllers...).Without(names.ServiceLBController).YAML(),
		fail: map[specs.ID][]string{
			specs.MigrateToCCM: {
				"the timeline breaks leader migration's invariants", "conflict from ",
				"service-lb-controller ran in m", "(" + olderCCM(fake.Name).String() + ")", "(kube-controller-manager-fakecloud v1.30.14)", " at once, from ",
			},
		},
	},
	{
		// The same under coordinated leader election, whose handovers
		// start kube-controller-managers again (they exit when they
		// yield): the timeline still sees the conflict.
		name:         "CCM leader migration config without service-lb-controller, coordinated leader election",
		exhaustive:   true,
		label:        "leader-migration && upgrade",
		focus:        "moves the cloud controllers from kube-controller-manager",
		ccmMigration: migration.NewConfig(migration.CloudControllers...).Without(names.ServiceLBController).YAML(),
		coordinated:  true,
		fail: map[specs.ID][]string{
			specs.MigrateToCCM: {
				"the timeline breaks leader migration's invariants", "conflict from ",
				"service-lb-controller ran in m", "(" + olderCCM(fake.Name).String() + ")", "(kube-controller-manager-fakecloud v1.30.14)", " at once, from ",
			},
		},
	},
	{
		// A provider with no in-tree release starts from the older CCMs;
		// their configuration leaves a controller to kube-controller-
		// manager, which runs none any more: nobody runs it.
		name:         "aws CCM leader migration config leaving service-lb-controller to kube-controller-manager",
		provider:     aws.Name,
		label:        "leader-migration && upgrade",
		ccmMigration: migration.NewConfig(migration.CloudControllers...).LeftTo("kube-controller-manager", names.ServiceLBController).YAML(),
		fail: map[specs.ID][]string{
			specs.UpgradeCCM: {
				"expected service-lb-controller run by the first members' cloud-controller-manager, actual: not",
			},
		},
	},
}

// olderCCM is the CCM the provider's leader-migration specs upgrade from,
// with its default CCM under test.
func olderCCM(provider string) binaries.Component {
	p, err := providers.Get(provider)
	if err == nil {
		// The controls' suites take the cluster's release from
		// $K8S_VERSION, as make e2e's do; the CCM and the one it is
		// upgraded from follow it (v1.34: the in-tree era's).
		version := ""
		if release := os.Getenv("K8S_VERSION"); release != "" {
			version = options.CCMFor(p.CCM, release)
		}
		p, err = p.WithCCMVersion(version)
	}
	if err != nil {
		panic(err)
	}
	return p.OlderCCM
}

// The controls of a broken leader migration configuration.
var migrationControls = []control{
	{
		// The rollback hands a controller to the CCM: release N's
		// kube-controller-managers the downgrade brings back leave
		// service-lb-controller to a cloud-controller-manager, and once
		// the last CCM is gone nothing runs it. The upgrades, with the
		// shared configuration, pass.
		name:              "rollback leader migration config handing service-lb-controller to the CCM",
		label:             "leader-migration",
		rollbackMigration: rollbackToCCM(names.ServiceLBController),
		fail: map[specs.ID][]string{
			specs.MigrateBack: {
				// Which wait says so depends on the member that held
				// the migration lease last: any manager's, mid-way, or
				// release N's, at the end.
				"to run every migrating controller: expected service-lb-controller run by ", ", actual: not",
			},
		},
	},
	{
		// Names the managers do not register: the older names of
		// k8s.io/controller-manager's built-in default. Said in one line
		// before any manager of the HA control plane starts.
		name:       "leader migration config with names no manager registers",
		exhaustive: true,
		label:      "leader-migration && upgrade",
		focus:      "moves the cloud controllers from kube-controller-manager",
		migration:  migration.ManagersDefault().YAML(),
		fail: map[specs.ID][]string{
			specs.MigrateToCCM: {
				"the leader migration config names route-controller, service-controller, which no manager registers (",
				"kube-controller-manager-fakecloud v1.30.14", "the cloud controllers they register are service-lb-controller, node-route-controller, cloud-node-lifecycle-controller",
			},
		},
	},
	{
		// No configuration file: each manager's built-in default names
		// route-controller and service-controller, which these managers
		// call node-route-controller and service-lb-controller, so neither
		// is migrated and both run in release N's kube-controller-manager
		// and the CCM at once.
		name:             "managers' default leader migration config",
		exhaustive:       true,
		label:            "leader-migration && upgrade",
		focus:            "moves the cloud controllers from kube-controller-manager",
		migrationDefault: true,
		fail: map[specs.ID][]string{
			specs.MigrateToCCM: {
				"the timeline breaks leader migration's invariants", "conflict from ",
				"service-lb-controller ran in m", "(kube-controller-manager-fakecloud v1.30.14)", " at once, from ",
			},
		},
	},
	{
		// incluster-ccm told by its ConfigMap to leave the status to
		// another component, as kube-vip's CCM does: the address is in
		// the Service, the ingress is not, and the failure says which.
		name:    "a CCM that leaves status.loadBalancer to another component",
		label:   "loadbalancer",
		focus:   "provisions a TCP load balancer",
		profile: "e2e/incluster-ccm/profile.yaml",
		manifests: func(m []byte) []byte {
			return bytes.Replace(m, []byte("  pool: 198.51.100.0/28\n"), []byte("  pool: 198.51.100.0/28\n  status: annotate\n"), 1)
		},
		fail: map[specs.ID][]string{
			specs.LBProvision: {
				"expected status.loadBalancer.ingress, actual: none (the Service shows spec.loadBalancerIP=198.51.100.1; annotation incluster-ccm.ccm-harness.sigs.k8s.io/address=198.51.100.1",
				"left status.loadBalancer",
			},
		},
	},
	{
		// incluster-ccm told by its ConfigMap to serve Services of any
		// loadBalancerClass, as a CCM that ignores the field does.
		name:    "a CCM that serves a Service of another loadBalancerClass",
		label:   "loadbalancer",
		focus:   "ignores a Service with a loadBalancerClass",
		profile: "e2e/incluster-ccm/profile.yaml",
		manifests: func(m []byte) []byte {
			return bytes.Replace(m, []byte("  pool: 198.51.100.0/28\n"), []byte("  pool: 198.51.100.0/28\n  classes: any\n"), 1)
		},
		fail: map[specs.ID][]string{
			specs.LBClass: {"expected no status.loadBalancer.ingress, actual [{198.51.100."},
		},
	},
	{
		// Differences stated wrong: one for a step that passes (a
		// difference that no longer holds), one whose step fails
		// otherwise than it says, one naming a step its spec lacks.
		// Each fails its spec: no difference is a free pass.
		name:    "known differences that do not hold",
		label:   "loadbalancer",
		focus:   "serves UDP|serves TCP and UDP|hands loadBalancerSourceRanges",
		profile: "e2e/testdata/fakecloud-ccm-image.yaml",
		differences: []providers.Difference{
			{Spec: specs.LBUDP, Step: providers.StepProvision, Shows: "Protocol UDP not supported", Evidence: "stated for the control"},
			{Spec: specs.LBMixedProtocol, Step: providers.StepProvision, Shows: "mixed protocol is not supported", Evidence: "stated for the control"},
			{Spec: specs.LBSourceRanges, Step: providers.StepJoin, Shows: "anything", Evidence: "stated for the control"},
		},
		fail: map[specs.ID][]string{
			specs.LBUDP:           {"difference no longer holds: step provision of this spec passed, which provider fakecloud-image's CCM is known to fail"},
			specs.LBMixedProtocol: {"difference no longer holds"},
			specs.LBSourceRanges:  {"provider fakecloud-image's known difference names step join of this spec, a step the spec does not have (it checked [provision])"},
		},
	},
	{
		// The CCM's ClusterRole without patch on nodes/status: the cloud
		// node controller cannot write the addresses, which is all the
		// node-address specs check, and every one of their failures
		// names the missing rule.
		name:    "RBAC without patch on nodes/status",
		label:   "node-address || zone || node-init",
		profile: "e2e/testdata/fakecloud-ccm-image.yaml",
		manifests: func(m []byte) []byte {
			return bytes.Replace(m, []byte("resources: [nodes/status]\n  verbs: [patch, update]"), []byte("resources: [nodes/status]\n  verbs: [update]"), 1)
		},
		fail: map[specs.ID][]string{
			specs.NodeAddresses: {
				"expected addresses [", "(the cloud's), actual [Hostname=node-1]",
				"RBAC: the API server refused the CCM's ServiceAccount (system:serviceaccount:kube-system:cloud-controller-manager)",
				`patch nodes/status refused `, `(rule that allows it: {apiGroups: [""], resources: ["nodes/status"], verbs: ["patch"]})`,
			},
			specs.ProvidedNodeIP: {
				`(rule that allows it: {apiGroups: [""], resources: ["nodes/status"], verbs: ["patch"]})`,
			},
			specs.DualStackNodeIP: {
				"with provided-node-ip 127.1.", ",fd00:1:",
				`(rule that allows it: {apiGroups: [""], resources: ["nodes/status"], verbs: ["patch"]})`,
			},
		},
	},
}

// misbehave sets fakecloud's CCM's own deliberate fault in its manifests'
// container environment.
func misbehave(m fakecloudccm.Misbehaviour) func([]byte) []byte {
	return func(b []byte) []byte {
		return bytes.Replace(b, []byte("        env:\n"), []byte("        env:\n        - name: "+fakecloudccm.MisbehaveEnv+"\n          value: "+string(m)+"\n"), 1)
	}
}

// rollbackToCCM is the harness's configuration with controller's
// component the CCM's rather than whichever holds the lease.
func rollbackToCCM(controller string) []byte {
	c := migration.NewConfig(migration.CloudControllers...)
	for i := range c.ControllerLeaders {
		if c.ControllerLeaders[i].Name == controller {
			c.ControllerLeaders[i].Component = "cloud-controller-manager"
		}
	}
	return c.YAML()
}

func TestNegativeControls(t *testing.T) {
	t.Parallel()
	suite := e2eBinary(t)
	all := os.Getenv("CONTROLS_ALL") == "true"
	var each []control
	for _, c := range append(controls, migrationControls...) {
		if c.exhaustive && !all {
			t.Run(c.name, func(t *testing.T) {
				t.Skip("exhaustive: make controls-all runs it (CONTROLS_ALL=true); the controls make test runs fail the same specs")
			})
			continue
		}
		each = append(each, c)
	}
	each = order(each)
	clusters := newSlots(controlClusters, len(each))
	for _, c := range each {
		granted := clusters.ask()
		// The body runs, up to t.Parallel, before t.Run returns.
		started := false
		t.Run(c.name, func(t *testing.T) {
			started = true
			t.Parallel()
			clusters.take(t, granted)
			run(t, suite, c)
		})
		if !started {
			clusters.drop(granted)
		}
	}
}

// order is the order the controls start in: the longest first (a kind
// cluster's), so that none starts last and runs alone, then the HA control
// planes' each between two local clusters, so that they start spread out,
// not together: three at once beside a kind cluster's bring-up left a
// manager that took the leases over ten seconds to start its controllers,
// past the leader-migration specs' bound for a controller running nowhere,
// in a control whose fault is elsewhere.
func order(all []control) []control {
	var kind, ha, local []control
	for _, c := range all {
		switch cost(c) {
		case 2:
			kind = append(kind, c)
		case 1:
			ha = append(ha, c)
		default:
			local = append(local, c)
		}
	}
	out := kind
	for len(ha) > 0 || len(local) > 0 {
		if len(ha) > 0 {
			out, ha = append(out, ha[0]), ha[1:]
		}
		if len(local) > 0 {
			out, local = append(out, local[0]), local[1:]
		}
	}
	return out
}

// cost ranks a control by the cluster it brings up.
func cost(c control) int {
	switch {
	case c.cluster == "kind":
		return 2
	case c.migration != nil || c.ccmMigration != nil || c.rollbackMigration != nil || c.migrationDefault || c.coordinated:
		return 1
	}
	return 0
}

// changedProfile is the profile file path (of this repository) with its
// manifests as change leaves them, for PROVIDER=external.
func changedProfile(t *testing.T, path string, change func([]byte) []byte, differences []providers.Difference, cloudConfig any, plugin string) []byte {
	t.Helper()
	path = filepath.Join(sourceRoot(t), path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f providers.File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	if f.Manifests != "" {
		f.Manifests = filepath.Join(dir, f.Manifests)
	}
	if f.Inspector != nil {
		f.Inspector.Plugin = filepath.Join(dir, f.Inspector.Plugin)
		if plugin != "" {
			f.Inspector.Plugin = filepath.Join(sourceRoot(t), plugin)
		}
	}
	if change != nil {
		m, err := manifests.Read(f.Manifests)
		if err != nil {
			t.Fatal(err)
		}
		changed := change(m)
		if bytes.Equal(changed, m) {
			t.Fatal("the control's change leaves the manifests as they are: it breaks nothing")
		}
		tmp := t.TempDir()
		if err := os.WriteFile(filepath.Join(tmp, "manifests.yaml"), changed, 0o644); err != nil {
			t.Fatal(err)
		}
		f.Manifests = tmp
	}
	if differences != nil {
		f.Differences = differences
	}
	if cloudConfig != nil {
		f.CloudConfig = cloudConfig
	}
	if archive, ok := strings.CutPrefix(f.CCM.Image, "docker-archive:"); ok && !filepath.IsAbs(archive) {
		f.CCM.Image = "docker-archive:" + filepath.Join(dir, archive)
	}
	out, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func run(t *testing.T, suite string, c control) {
	state, artifacts := t.TempDir(), t.TempDir()
	// Under $ARTIFACTS the runs' JUnit and logs outlive the test, for CI.
	if dir := os.Getenv("ARTIFACTS"); dir != "" {
		artifacts = filepath.Join(dir, "controls", strings.NewReplacer(" ", "-", ",", "").Replace(c.name))
		if err := os.RemoveAll(artifacts); err != nil {
			t.Fatal(err)
		}
	}
	provider, clusterKind := c.provider, c.cluster
	if provider == "" {
		provider = fake.Name
	}
	if clusterKind == "" {
		clusterKind = "local"
	}
	cfg, err := json.Marshal(c.config)
	if err != nil {
		t.Fatal(err)
	}
	if c.profile != "" {
		provider, cfg = providers.External, changedProfile(t, c.profile, c.manifests, c.differences, c.config, c.plugin)
	}
	cfgFile := filepath.Join(t.TempDir(), "provider.yaml")
	if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{
		// The default CCM version, whatever CCM_VERSION says.
		"--provider=" + provider, "--cluster=" + clusterKind, "--ccm-version=", "--provider-config=" + cfgFile, "--artifacts=" + artifacts,
		// A quarter of the usual waits: long enough for a healthy CCM on
		// this machine, short enough that a broken one fails quickly. Half
		// on kind, whose packets cross real containers: beside three other
		// controls of three processes each, a load balancer's first
		// answer once took over the quarter's 30 s, and the control
		// failed before the step it is about.
		"--wait-scale=" + map[bool]string{false: "0.25", true: "0.5"}[clusterKind == "kind"],
	}
	// Ginkgo's own flags, for the suite binary (-ginkgo.X) or the CLI (--X).
	ginkgoArgs := []string{"label-filter=" + c.label, "no-color", "timeout=" + controlTimeout.String()}
	if c.focus != "" {
		ginkgoArgs = append(ginkgoArgs, "focus="+c.focus)
	}
	for flag, cfg := range map[string][]byte{"--ccm-leader-migration-config": c.ccmMigration, "--leader-migration-config": c.migration, "--rollback-leader-migration-config": c.rollbackMigration} {
		if cfg == nil {
			continue
		}
		f := filepath.Join(t.TempDir(), strings.TrimPrefix(flag, "--")+".yaml")
		if err := os.WriteFile(f, cfg, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, flag+"="+f)
	}
	if c.migrationDefault {
		args = append(args, "--leader-migration-default")
	}
	if c.coordinated {
		args = append(args, "--coordinated-leader-election")
	}
	if c.dualStack {
		args = append(args, "--dual-stack")
	}
	// Its own Ginkgo timeout (above), under go test's: a hung control
	// tears its cluster down itself and fails. On a local cluster, in
	// parallel processes, as make e2e runs the suite: a control must fail
	// the same specs with the same messages there.
	cmd := suiteCommand(t, suite, clusterKind == "local", ginkgoArgs, args)
	cmd.Env = append(os.Environ(), "CCM_HARNESS_STATE="+state)
	if c.misbehave != "" {
		cmd.Env = append(cmd.Env, fakecloudccm.MisbehaveEnv+"="+string(c.misbehave))
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = runSuite(cmd)
	logFile := filepath.Join(artifacts, "suite.log")
	_ = os.WriteFile(logFile, out.Bytes(), 0o644)
	if err == nil {
		t.Fatalf("the suite passed against a cloud with %s; a scenario cannot catch it (log: %s)", c.name, logFile)
	}

	cases := readJUnit(t, filepath.Join(artifacts, "junit_"+provider+"-"+clusterKind+"_01.xml"))
	seen := map[specs.ID]bool{}
	ran := 0
	for _, tc := range cases {
		if !strings.HasPrefix(tc.Name, "[It]") || tc.Skipped != nil {
			continue
		}
		ran++
		spec, _ := specs.Of(tc.Name)
		want, expected := c.fail[spec.ID]
		seen[spec.ID] = true
		switch {
		case expected && tc.Failure == nil:
			t.Errorf("%s: passed, but it must fail against a cloud with %s", tc.Name, c.name)
		case expected:
			msg := tc.Failure.Message + "\n" + tc.Failure.Body
			for _, s := range want {
				if !strings.Contains(msg, s) {
					t.Errorf("%s: failure message lacks %q; it was:\n%s", tc.Name, s, msg)
				}
			}
			// The body goes on with what the CCM and the cloud logged
			// meanwhile.
			if !strings.Contains(tc.Failure.Body, "\nLogs written while the spec ran") {
				t.Errorf("%s: the JUnit failure body lacks the log excerpt:\n%s", tc.Name, tc.Failure.Body)
			}
		case tc.Failure != nil:
			t.Errorf("%s: failed, but %s should not affect it: %s", tc.Name, c.name, tc.Failure.Message+"\n"+tc.Failure.Body)
		}
	}
	for spec := range c.fail {
		if !seen[spec] {
			t.Errorf("spec %s (%q) did not run (label filter %q)", spec, spec.Text(), c.label)
		}
	}
	if ran == 0 {
		// The bring-up failed: what it said is the whole story, and CI
		// keeps only this test's output.
		t.Errorf("no spec ran%s", process.LogTail(logFile, 20))
	}
	assertNothingLeft(t, state)
	if clusterKind == "kind" {
		assertNoKindNodes(t, artifacts)
	}
	if t.Failed() {
		t.Logf("suite log: %s", logFile)
	}
}

// assertNothingLeft fails if any process still runs from the control's
// cluster state folder, or the folder's cluster state remains.
func assertNothingLeft(t *testing.T, state string) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err == nil && bytes.Contains(data, []byte(state)) {
			t.Errorf("process left behind: %s", strings.ReplaceAll(string(data), "\x00", " "))
		}
	}
	entries, _ := os.ReadDir(state)
	for _, e := range entries {
		t.Errorf("cluster state left behind: %s", filepath.Join(state, e.Name()))
	}
}

// assertNoKindNodes fails if a node container is left of a kind cluster
// the suite brought up: those whose logs it kept (artifacts/logs/e2e-*).
// Kind controls run side by side: another's cluster is not this one's.
func assertNoKindNodes(t *testing.T, artifacts string) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(artifacts, "logs", "e2e-*"))
	if len(dirs) == 0 {
		t.Errorf("the suite kept no logs of a cluster it brought up (%s)", filepath.Join(artifacts, "logs"))
		return
	}
	for _, d := range dirs {
		name := filepath.Base(d)
		out, err := exec.Command("docker", "ps", "--all", "--filter", "label=io.x-k8s.kind.cluster="+name, "--format", "{{.Names}}").Output()
		if err != nil {
			t.Errorf("docker ps: %v", err)
			return
		}
		for _, c := range strings.Fields(string(out)) {
			t.Errorf("kind node container of cluster %s left behind: %s", name, c)
		}
	}
}

type junitCase struct {
	Name    string        `xml:"name,attr"`
	Failure *junitFailure `xml:"failure"`
	// Error is Ginkgo's for a spec interrupted, panicked or aborted:
	// readJUnit counts it as its failure.
	Error   *junitFailure `xml:"error"`
	Skipped *struct{}     `xml:"skipped"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

func readJUnit(t *testing.T, path string) []junitCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the suite wrote no JUnit: %v", err)
	}
	var doc struct {
		Suites []struct {
			Cases []junitCase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	var out []junitCase
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if c.Failure == nil {
				c.Failure = c.Error
			}
			out = append(out, c)
		}
	}
	return out
}

func sourceRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// controlsNeed is the least time a test that runs controls must have
// left: go test's default timeout of 10 minutes ended the controls midway,
// and its panic skipped their cleanups (temporary folders left behind).
// make controls gives them 40.
const controlsNeed = 12 * time.Minute

// e2eBinary is $E2E_TEST, or the suite built into a temporary folder.
func e2eBinary(t *testing.T) string {
	if d, ok := t.Deadline(); ok && time.Until(d) < controlsNeed {
		t.Skipf("the negative controls need more than go test's %s left (they take about 15 minutes): run make controls, or go test -timeout 40m", time.Until(d).Round(time.Minute))
	}
	if p := os.Getenv("E2E_TEST"); p != "" {
		return p
	}
	out := filepath.Join(t.TempDir(), "e2e.test")
	cmd := exec.Command("go", "test", "-c", "-o", out, "./e2e")
	cmd.Dir = sourceRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the suite: %v\n%s", err, b)
	}
	return out
}

// TestReadJUnitCountsErrors: an interrupted spec is written as an <error>,
// and must not read as passed (a control interrupted said its spec
// "passed, but it must fail").
func TestReadJUnitCountsErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junit.xml")
	doc := `<testsuites><testsuite>
<testcase name="[It] failed" status="failed"><failure message="" type="failed">[FAILED] expected x, actual y</failure></testcase>
<testcase name="[It] interrupted" status="interrupted"><error message="" type="interrupted">[INTERRUPTED] Interrupted by User</error></testcase>
<testcase name="[It] passed" status="passed"></testcase>
</testsuite></testsuites>`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range readJUnit(t, path) {
		got[c.Name] = "passed"
		if c.Failure != nil {
			got[c.Name] = c.Failure.Body
		}
	}
	want := map[string]string{"[It] failed": "[FAILED] expected x, actual y", "[It] interrupted": "[INTERRUPTED] Interrupted by User", "[It] passed": "passed"}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: expected %q, actual %q", name, w, got[name])
		}
	}
}
