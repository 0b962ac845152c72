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

// Package specs names every spec of the suite once: its ID, its text, its
// tag and the capability it checks. The scenarios declare each spec by its
// ID, and the providers' known differences, the negative controls and the
// migration filter name specs by ID too, so that a misspelt or renamed
// spec does not compile, instead of showing at the end of a full run of
// one provider. It is a leaf: the CLI and the providers read it without
// the e2e framework.
package specs

import (
	"fmt"
	"slices"
	"strings"
)

// ID names a spec, stably: profile files name a spec by it (a known
// difference's spec), and reports will. Its text may be reworded; its ID
// stays. A struct, not a string: a string literal where an ID belongs
// does not compile; only the IDs below, and Parse's, exist.
type ID struct{ name string }

// String is the ID as files write it ("loadbalancer/udp").
func (id ID) String() string { return id.name }

// IsZero reports whether id names no spec.
func (id ID) IsZero() bool { return id.name == "" }

// MarshalText writes the ID as files write it.
func (id ID) MarshalText() ([]byte, error) { return []byte(id.name), nil }

// UnmarshalText reads an ID a file wrote, refusing one the suite does not
// have.
func (id *ID) UnmarshalText(b []byte) error {
	parsed, err := Parse(string(b))
	if err != nil {
		return err
	}
	*id = parsed
	return nil
}

// Capability is something a CCM claims to do. Specs that need one the
// profile lacks are skipped with the reason, never passed.
type Capability string

const (
	// Instances: node initialization, provider IDs, addresses, instance types.
	Instances Capability = "instances"
	// Zones: topology zone and region labels.
	Zones Capability = "zones"
	// NodeLifecycle: shutdown taints and deletion of nodes whose instance is
	// stopped or gone.
	NodeLifecycle Capability = "node-lifecycle"
	// LoadBalancers: Services of type LoadBalancer.
	LoadBalancers Capability = "load-balancers"
	// Routes: pod CIDR routes in the cloud's network.
	Routes Capability = "routes"
)

// Capabilities are those a profile can claim.
var Capabilities = []Capability{Instances, Zones, NodeLifecycle, LoadBalancers, Routes}

// Level says whether every CCM that claims a spec's capability must pass
// it (core), or only one that also claims the spec's feature (extended).
type Level string

const (
	Core     Level = "core"
	Extended Level = "extended"
)

// Feature is optional behaviour of a capability, which a profile claims
// beside the capability: the specs of an extended feature the profile
// does not claim are reported as not claimed, not run.
type Feature string

const (
	// LoadBalancerUDP: load balancers carry UDP.
	LoadBalancerUDP Feature = "load-balancer-udp"
	// LoadBalancerMixedProtocol: one Service with TCP and UDP on the same
	// port (MixedProtocolLBService, GA in v1.26).
	LoadBalancerMixedProtocol Feature = "load-balancer-mixed-protocol"
	// LoadBalancerNoNodePorts: load balancers of Services that allocate
	// no node ports (allocateLoadBalancerNodePorts: false) reach the pods
	// another way.
	LoadBalancerNoNodePorts Feature = "load-balancer-no-node-ports"
	// LoadBalancerSourceRanges: loadBalancerSourceRanges reach the cloud.
	LoadBalancerSourceRanges Feature = "load-balancer-source-ranges"
	// LoadBalancerHealthChecks: with externalTrafficPolicy: Local the
	// load balancer health-checks healthCheckNodePort and sends only to
	// nodes with endpoints.
	LoadBalancerHealthChecks Feature = "load-balancer-health-checks"
	// LoadBalancerSourceIP: load balancers hand backends the client's own
	// address, as pass-through network load balancers (fakecloud's own,
	// AWS's network ones) do; a proxying one (a classic ELB, Octavia's
	// amphorae) does not.
	LoadBalancerSourceIP Feature = "load-balancer-source-ip"
	// LoadBalancerSessionAffinity: sessionAffinity ClientIP reaches the
	// cloud, whose load balancer then keeps a client on one backend.
	LoadBalancerSessionAffinity Feature = "load-balancer-session-affinity"
	// LoadBalancerProxyProtocol: a Service that asks (in the annotations
	// the profile names) gets a load balancer that speaks the PROXY
	// protocol to its backends, and an ingress of ipMode Proxy, so that
	// in-cluster clients go through it too (KEP-1860).
	LoadBalancerProxyProtocol Feature = "load-balancer-proxy-protocol"
	// LoadBalancerDualStack: a dual-stack Service (ipFamilyPolicy
	// RequireDualStack) gets a load balancer of both families, and an
	// ingress IP of each.
	LoadBalancerDualStack Feature = "load-balancer-dual-stack"
	// NodeDualStack: the CCM sets a node's IPv6 addresses beside its IPv4
	// ones, and honours a kubelet's dual-stack --node-ip (KEP-3705, GA in
	// v1.30): the cloud's instances have addresses of both families.
	NodeDualStack Feature = "node-dual-stack"
)

// Features are the extended features a profile can claim, each of the
// capability it extends.
var Features = map[Feature]Capability{
	LoadBalancerUDP:           LoadBalancers,
	LoadBalancerMixedProtocol: LoadBalancers,
	LoadBalancerNoNodePorts:   LoadBalancers,
	LoadBalancerSourceRanges:  LoadBalancers,
	LoadBalancerHealthChecks:  LoadBalancers,
	LoadBalancerSourceIP:      LoadBalancers,

	LoadBalancerSessionAffinity: LoadBalancers,
	LoadBalancerProxyProtocol:   LoadBalancers,
	LoadBalancerDualStack:       LoadBalancers,

	NodeDualStack: Instances,
}

// FeatureList is Features' keys in a stable order.
func FeatureList() []Feature {
	out := make([]Feature, 0, len(Features))
	for f := range Features {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// Tags are the bracketed labels of the specs' texts ("[zone]"), by which a
// label filter selects them.
const (
	TagNodeInit      = "node-init"
	TagProviderID    = "provider-id"
	TagNodeAddress   = "node-address"
	TagInstanceType  = "instance-type"
	TagZone          = "zone"
	TagNodeLifecycle = "node-lifecycle"
	TagLoadBalancer  = "loadbalancer"
	TagDatapath      = "datapath"
	TagRoute         = "route"
	TagUpgrade       = "upgrade"
	TagDowngrade     = "downgrade"
)

// The suite's specs.
var (
	InitTaintRemoved   = ID{"node-init/taint-removed"}
	InitJoiningNode    = ID{"node-init/joining-node"}
	ProviderIDSet      = ID{"provider-id/set"}
	ProviderIDKept     = ID{"provider-id/kept-across-restart"}
	NodeAddresses      = ID{"node-address/addresses"}
	ProvidedNodeIP     = ID{"node-address/provided-node-ip"}
	DualStackNodeIP    = ID{"node-address/dual-stack-node-ip"}
	InstanceTypeLabel  = ID{"instance-type/label"}
	ZoneRegionLabels   = ID{"zone/labels"}
	LifecycleShutdown  = ID{"node-lifecycle/shutdown-taint"}
	LifecycleTerminate = ID{"node-lifecycle/terminated-deleted"}
	LifecycleForeign   = ID{"node-lifecycle/foreign-node-kept"}

	LBProvision       = ID{"loadbalancer/provision"}
	LBUDP             = ID{"loadbalancer/udp"}
	LBMixedProtocol   = ID{"loadbalancer/tcp-and-udp"}
	LBPortChange      = ID{"loadbalancer/port-change"}
	LBBackends        = ID{"loadbalancer/backends"}
	LBForeignNode     = ID{"loadbalancer/foreign-node"}
	LBHealthCheckPort = ID{"loadbalancer/health-check-node-port"}
	LBSourceRanges    = ID{"loadbalancer/source-ranges"}
	LBSessionAffinity = ID{"loadbalancer/session-affinity"}
	LBIPMode          = ID{"loadbalancer/ip-mode"}
	LBDualStack       = ID{"loadbalancer/dual-stack"}
	LBNoNodePorts     = ID{"loadbalancer/no-node-ports"}
	LBClass           = ID{"loadbalancer/class-ignored"}
	LBTypeChange      = ID{"loadbalancer/type-change"}
	LBFailedCreation  = ID{"loadbalancer/failed-creation"}
	LBDeleted         = ID{"loadbalancer/deleted"}

	DatapathTCPUDP        = ID{"datapath/tcp-and-udp"}
	DatapathSourceIP      = ID{"datapath/source-ip"}
	DatapathHealthChecks  = ID{"datapath/health-checks"}
	DatapathAffinity      = ID{"datapath/session-affinity"}
	DatapathRollingUpdate = ID{"datapath/rolling-update"}
	DatapathDualStack     = ID{"datapath/dual-stack"}
	DatapathIPMode        = ID{"datapath/ip-mode"}

	RoutesCreated     = ID{"route/created"}
	RoutesReconciled  = ID{"route/reconciled"}
	RoutesForeignNode = ID{"route/foreign-node"}
	RoutesDatapath    = ID{"route/datapath"}

	MigrateToCCM = ID{"leader-migration/kcm-to-ccm"}
	UpgradeCCM   = ID{"leader-migration/ccm-upgrade"}
	MigrateBack  = ID{"leader-migration/ccm-to-kcm"}
)

// Spec is one spec of the suite.
type Spec struct {
	ID ID
	// Text is its text, under its container's ("Nodes", "LoadBalancer
	// Services", ...), without the tags the framework appends.
	Text string
	// Tag is its own bracketed label.
	Tag string
	// Capability is what a profile must claim for it to run; "" for the
	// leader-migration specs, which need a release to migrate from.
	Capability Capability
	// Feature is the extended feature a profile must claim too; "" for a
	// core spec.
	Feature Feature
}

// Level is the spec's: extended when it checks a feature.
func (s Spec) Level() Level {
	if s.Feature != "" {
		return Extended
	}
	return Core
}

// All are the suite's specs, in the order of their files.
var All = []Spec{
	{InitTaintRemoved, "removes the uninitialized taint from every node", TagNodeInit, Instances, ""},
	{InitJoiningNode, "initializes a node that joins after the CCM started", TagNodeInit, Instances, ""},
	{ProviderIDSet, "sets spec.providerID with the provider's scheme, as the cloud reports it", TagProviderID, Instances, ""},
	{ProviderIDKept, "keeps spec.providerID across a CCM restart", TagProviderID, Instances, ""},
	{NodeAddresses, "sets the addresses the cloud reports, with a Hostname", TagNodeAddress, Instances, ""},
	{ProvidedNodeIP, "honours the alpha.kubernetes.io/provided-node-ip annotation", TagNodeAddress, Instances, ""},
	{DualStackNodeIP, "honours a dual-stack --node-ip of an IPv4 and an IPv6 address", TagNodeAddress, Instances, NodeDualStack},
	{InstanceTypeLabel, "labels the instance type the cloud reports", TagInstanceType, Instances, ""},
	{ZoneRegionLabels, "labels the zone and region the cloud reports", TagZone, Zones, ""},
	{LifecycleShutdown, "taints the NotReady node of a stopped instance as shut down, and untaints it when it runs again", TagNodeLifecycle, NodeLifecycle, ""},
	{LifecycleTerminate, "deletes the NotReady node of a terminated instance", TagNodeLifecycle, NodeLifecycle, ""},
	{LifecycleForeign, "keeps a NotReady node whose provider ID is another owner's, untainted, and keeps running", TagNodeLifecycle, NodeLifecycle, ""},

	{LBProvision, "provisions a TCP load balancer with the Service's ports, every eligible node as backend, and the cleanup finalizer", TagLoadBalancer, LoadBalancers, ""},
	{LBUDP, "serves UDP", TagLoadBalancer, LoadBalancers, LoadBalancerUDP},
	{LBMixedProtocol, "serves TCP and UDP on the same port in one Service", TagLoadBalancer, LoadBalancers, LoadBalancerMixedProtocol},
	{LBPortChange, "follows a changed port and node port, keeping the ingress IP", TagLoadBalancer, LoadBalancers, ""},
	{LBBackends, "updates the backends when nodes join, leave, or are excluded", TagLoadBalancer, LoadBalancers, ""},
	{LBForeignNode, "provisions for its own nodes while a node of another owner is in the cluster", TagLoadBalancer, LoadBalancers, ""},
	{LBHealthCheckPort, "health-checks the healthCheckNodePort with externalTrafficPolicy=Local", TagLoadBalancer, LoadBalancers, LoadBalancerHealthChecks},
	{LBSourceRanges, "hands loadBalancerSourceRanges to the cloud", TagLoadBalancer, LoadBalancers, LoadBalancerSourceRanges},
	{LBSessionAffinity, "hands sessionAffinity ClientIP and its timeout to the cloud, and takes it back", TagLoadBalancer, LoadBalancers, LoadBalancerSessionAffinity},
	{LBIPMode, "makes a load balancer that speaks the PROXY protocol when asked, with ingress ipMode Proxy", TagLoadBalancer, LoadBalancers, LoadBalancerProxyProtocol},
	{LBDualStack, "provisions a load balancer of both families for a RequireDualStack Service, with an ingress IP of each", TagLoadBalancer, LoadBalancers, LoadBalancerDualStack},
	{LBNoNodePorts, "provisions without node ports when allocateLoadBalancerNodePorts=false", TagLoadBalancer, LoadBalancers, LoadBalancerNoNodePorts},
	{LBClass, "ignores a Service with a loadBalancerClass", TagLoadBalancer, LoadBalancers, ""},
	{LBTypeChange, "removes the load balancer, ingress and finalizer when the type changes to ClusterIP", TagLoadBalancer, LoadBalancers, ""},
	{LBFailedCreation, "reports a failed creation as an event and retries until the cloud recovers", TagLoadBalancer, LoadBalancers, ""},
	{LBDeleted, "removes the cloud load balancer when the Service is deleted", TagLoadBalancer, LoadBalancers, ""},

	{DatapathTCPUDP, "carries TCP and UDP from the ingress IP to a backend pod", TagDatapath, LoadBalancers, LoadBalancerMixedProtocol},
	{DatapathSourceIP, "preserves the client source IP, with externalTrafficPolicy=Local", TagDatapath, LoadBalancers, LoadBalancerSourceIP},
	{DatapathHealthChecks, "health-checks only nodes with endpoints, with externalTrafficPolicy=Local", TagDatapath, LoadBalancers, LoadBalancerHealthChecks},
	{DatapathAffinity, "keeps a client on one backend pod once sessionAffinity is ClientIP, with externalTrafficPolicy=Local", TagDatapath, LoadBalancers, LoadBalancerSessionAffinity},
	{DatapathRollingUpdate, "keeps answering while the backend pods roll, with externalTrafficPolicy=Cluster and Local", TagDatapath, LoadBalancers, LoadBalancerHealthChecks},
	{DatapathDualStack, "carries traffic through the ingress IP of each family of a RequireDualStack Service", TagDatapath, LoadBalancers, LoadBalancerDualStack},
	{DatapathIPMode, "sends in-cluster clients of a PROXY-protocol load balancer's ingress IP through the load balancer", TagDatapath, LoadBalancers, LoadBalancerProxyProtocol},

	{RoutesCreated, "creates a route to every node's pod CIDR and marks the node's network available", TagRoute, Routes, ""},
	{RoutesReconciled, "removes a deleted node's route and recreates one deleted behind the CCM's back", TagRoute, Routes, ""},
	{RoutesForeignNode, "routes its own nodes while a node of another owner is in the cluster", TagRoute, Routes, ""},
	{RoutesDatapath, "carries pod traffic between nodes over the routes of their pod CIDRs", TagRoute, Routes, ""},

	{MigrateToCCM, "[upgrade] moves the cloud controllers from kube-controller-manager to the CCM, member by member", TagUpgrade, "", ""},
	{UpgradeCCM, "[upgrade] rolls the CCMs to the next release, member by member", TagUpgrade, "", ""},
	{MigrateBack, "[downgrade] moves them back to kube-controller-manager, member by member", TagDowngrade, "", ""},
}

// Get is the spec id names; it panics on the zero ID, the only one not in
// All.
func Get(id ID) Spec {
	i := slices.IndexFunc(All, func(s Spec) bool { return s.ID == id })
	if i < 0 {
		panic(fmt.Sprintf("specs: no spec %q", id))
	}
	return All[i]
}

// Text is the text of the spec id names.
func (id ID) Text() string { return Get(id).Text }

// ByText is the spec whose text is text, as a report or JUnit shows it
// without its tags.
func ByText(text string) (Spec, bool) {
	i := slices.IndexFunc(All, func(s Spec) bool { return s.Text == text })
	if i < 0 {
		return Spec{}, false
	}
	return All[i], true
}

// Parse checks an ID read from a file (a profile's difference), saying
// which IDs there are if it is none of them.
func Parse(s string) (ID, error) {
	if slices.ContainsFunc(All, func(sp Spec) bool { return sp.ID.name == s }) {
		return ID{s}, nil
	}
	ids := make([]string, len(All))
	for i, sp := range All {
		ids[i] = sp.ID.name
	}
	return ID{}, fmt.Errorf("spec %q is none of the suite's (%s)", s, strings.Join(ids, ", "))
}

// Untagged is a spec's own text: its leaf text without the bracketed tags
// the e2e framework appends for its labels ("serves UDP [loadbalancer]").
func Untagged(leaf string) string {
	for strings.HasSuffix(leaf, "]") {
		i := strings.LastIndex(leaf, " [")
		if i < 0 {
			break
		}
		leaf = leaf[:i]
	}
	return leaf
}

// Of is the spec a report names by its full text, as JUnit's test cases
// and Ginkgo's reports do: its containers' texts before its own, its tags
// after ("[It] Nodes labels the zone and region the cloud reports [zone]").
func Of(name string) (Spec, bool) {
	name = Untagged(name)
	for _, s := range All {
		if strings.HasSuffix(name, " "+s.Text) {
			return s, true
		}
	}
	return Spec{}, false
}
