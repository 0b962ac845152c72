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
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/scenarios/labels"
	"sigs.k8s.io/ccm-harness/specs"
)

// Need is something a spec needs of the provider and runtime. A spec
// carries its needs as Ginkgo labels, so that a label filter and a dry
// run see them, and one function, Unmet, decides whether it runs: before
// its first step in a real run (SkipUnmet), and without running it in a
// dry run. Each need is declared below with the function that decides it.
type Need struct {
	label string
	when  stage
	// unmet says why f does not meet the need, or "".
	unmet func(f Features) string
}

// stage is when a need is decided, in this order: what the profile does
// not claim says first (the report counts it as not claimed), then what
// the runtime lacks, then, at the spec's cloud-side part, after what
// Kubernetes shows, what the cloud cannot be asked (the spec ends skipped
// there).
type stage int

const (
	claimed stage = iota
	upFront
	late
)

const (
	needPrefix = "needs-"
	// Checked late: the spec checks what Kubernetes shows first, and is
	// skipped at its cloud-side part.
	lateNeedPrefix = "cloud-checks-"
)

// needs are every Need by its label, for Unmet to read a spec's labels.
var needs = map[string]Need{}

func newNeed(label string, when stage, unmet func(Features) string) Need {
	n := Need{label: label, when: when, unmet: unmet}
	needs[label] = n
	return n
}

// unless is "" when ok, else why.
func unless(ok bool, why string) string {
	if ok {
		return ""
	}
	return why
}

var (
	// NeedNodePool: the runtime adds nodes and powers their instances.
	NeedNodePool = newNeed(needPrefix+"node-pool", upFront, func(f Features) string {
		return unless(f.NodePool, fmt.Sprintf("the harness cannot add nodes to this cluster (provider %s has no instance control here, and no --join-hook was given)", f.Provider))
	})
	// NeedChosenNodeIP: the runtime registers a node with a kubelet
	// --node-ip the spec chooses from its instance's addresses (a join
	// hook takes labels only).
	NeedChosenNodeIP = newNeed(needPrefix+"chosen-node-ip", upFront, func(f Features) string {
		return unless(!f.NodePool || f.ChosenNodeIP, "needs a node registered with a kubelet --node-ip of the spec's choosing: the join hook is given labels only")
	})
	// NeedIPv6Nodes: the runtime's nodes can have IPv6 addresses. Where
	// they can, a profile that claims a dual-stack feature answers for
	// its cloud's instances having them.
	NeedIPv6Nodes = newNeed(needPrefix+"ipv6-nodes", upFront, func(f Features) string {
		return unless(f.IPv6Nodes, "needs nodes with IPv6 addresses: this runtime's nodes are of IPv4 alone (the kind runtime's clusters are IPv4 clusters but with --dual-stack, DUAL_STACK=true)")
	})
	// NeedDualStackServices: the cluster makes dual-stack Services, and
	// the cloud here can give a load balancer an IPv6 address.
	NeedDualStackServices = newNeed(needPrefix+"dual-stack-services", upFront, func(f Features) string {
		if !f.DualStackServices {
			return "needs a cluster that makes dual-stack Services (kube-apiserver --service-cluster-ip-range of both families): this one's Services are of one family (a kind cluster's are of both with --dual-stack, DUAL_STACK=true)"
		}
		return unless(f.IPv6LoadBalancers, fmt.Sprintf("provider %s's cloud has no IPv6 load balancer range here: fakecloud routes one to this machine only as root (--lb-cidr-v6 --lb-route)", f.Provider))
	})
	// NeedMachines: the spec may stop, start and terminate a node's
	// machine: one the runtime adds, or one the user lent.
	NeedMachines = newNeed(needPrefix+"machines", upFront, func(f Features) string {
		return unless(f.Machines, fmt.Sprintf("would stop, start and terminate a machine: the harness cannot add nodes here (provider %s has no instance control here), and none was lent to it (--lifecycle-nodes, on a cluster it did not make, with a profile that reaches the cloud)", f.Provider))
	})
	// NeedInspector: the cloud can be asked what is true.
	NeedInspector = newNeed(needPrefix+"inspector", upFront, func(f Features) string {
		return unless(f.Inspector, fmt.Sprintf("provider %s has no cloud inspector here, so what the CCM set cannot be compared with the cloud", f.Provider))
	})
	// NeedDataPlane: nodes run pods and carry traffic.
	NeedDataPlane = newNeed(needPrefix+"data-plane", upFront, func(f Features) string {
		return unless(f.DataPlane, "needs real nodes: this runtime's nodes are simulated and run no pods")
	})
	// NeedRestart: the runtime can restart the CCM.
	NeedRestart = newNeed(needPrefix+"ccm-restart", upFront, func(f Features) string {
		return unless(f.Restart, "the runtime cannot restart the CCM")
	})
	// NeedCCMSeen: the harness can ask the CCM which controllers it runs:
	// one it started, or the leading CCM pod of a cluster it did not make.
	// A spec that checks the CCM still runs after what it did would pass
	// on a CCM it cannot see.
	NeedCCMSeen = newNeed(needPrefix+"ccm-seen", upFront, func(f Features) string {
		return unless(f.CCMSeen, "would check that the CCM still runs its controllers after, but the harness cannot ask it: no CCM pod of the cluster leads (it runs on a machine of its own)")
	})
	// NeedFaults: the cloud can be made to fail on purpose.
	NeedFaults = newNeed(needPrefix+"fault-injection", upFront, func(f Features) string {
		return unless(f.Faults, fmt.Sprintf("provider %s cannot inject cloud faults", f.Provider))
	})
	// NeedHA: the runtime can run an HA control plane of the spec's own,
	// and the provider has a release to start it from: a kube-controller-
	// manager with it in-tree, or an older CCM.
	NeedHA = newNeed(labels.NeedHA, upFront, func(f Features) string {
		if !f.InTreeKCM && !f.OlderCCM {
			return fmt.Sprintf("provider %s has no kube-controller-manager release with it in-tree to migrate from, nor an older CCM to upgrade from", f.Provider)
		}
		return unless(f.HA, "the runtime cannot run an HA control plane of its own")
	})
	// NeedInTreeKCM: the provider has a kube-controller-manager release
	// with it in-tree to migrate from.
	NeedInTreeKCM = newNeed(labels.NeedInTreeKCM, upFront, func(f Features) string {
		return unless(f.InTreeKCM, fmt.Sprintf("provider %s has no kube-controller-manager release with it in-tree to migrate from", f.Provider))
	})
	// NeedOlderCCM: the provider has an older CCM release to upgrade from.
	NeedOlderCCM = newNeed(labels.NeedOlderCCM, upFront, func(f Features) string {
		return unless(f.OlderCCM, fmt.Sprintf("provider %s has no older CCM release to upgrade from", f.Provider))
	})
	// LateLBInspector: the cloud's load balancers can be listed.
	LateLBInspector = newNeed(lateNeedPrefix+"load-balancers", late, func(f Features) string {
		return unless(f.LBInspector, lateLBReason(f.Provider))
	})
	// LateRouteInspector: the cloud's routes can be listed.
	LateRouteInspector = newNeed(lateNeedPrefix+"routes", late, func(f Features) string {
		return unless(f.RouteInspect, lateRouteReason(f.Provider))
	})
)

// claims are the needs of each capability and extended feature a
// profile may claim.
var claims = func() map[string]Need {
	out := map[string]Need{}
	for _, c := range specs.Capabilities {
		out[string(c)] = newNeed(needPrefix+"capability-"+string(c), claimed, func(f Features) string {
			return unless(f.Capabilities[c], fmt.Sprintf("provider %s does not claim %q (it claims %s)", f.Provider, c, f.Capabilities))
		})
	}
	for _, ft := range specs.FeatureList() {
		out[string(ft)] = newNeed(needPrefix+"feature-"+string(ft), claimed, func(f Features) string {
			return unless(f.Extended[ft], NotClaimedReason(f.Provider, ft, f.Extended))
		})
	}
	return out
}()

// Claims is the need of a capability or extended feature the profile
// must claim.
func Claims[T providers.Capability | providers.Feature](claim T) Need { return claims[string(claim)] }

// needOf is the need a label names; the labels package names the
// leader-migration specs' needs, so that a door reads them without the
// e2e framework.
func needOf(label string) Need {
	n, ok := needs[label]
	if !ok {
		panic("scenarios: no need labelled " + label)
	}
	return n
}

// Needs labels a spec with what it needs.
func Needs(ns ...Need) ginkgo.Labels {
	l := make(ginkgo.Labels, 0, len(ns))
	for _, n := range ns {
		l = append(l, n.label)
	}
	return l
}

// Features are what a cluster and its provider offer the specs.
type Features struct {
	Provider     string
	Capabilities providers.Capabilities
	// Extended are the extended features the profile claims.
	Extended     providers.Features
	NodePool     bool
	ChosenNodeIP bool
	Machines     bool
	Inspector    bool
	LBInspector  bool
	RouteInspect bool
	DataPlane    bool
	// IPv6Nodes: the runtime's nodes can have IPv6 addresses.
	IPv6Nodes bool
	// DualStackServices: the cluster makes dual-stack Services.
	DualStackServices bool
	// IPv6LoadBalancers: the cloud can give a load balancer an IPv6
	// address (providers.IPv6LoadBalancerCloud says where it cannot).
	IPv6LoadBalancers bool
	Restart           bool
	CCMSeen           bool
	Faults            bool
	InTreeKCM         bool
	HA                bool
	OlderCCM          bool
	// Differences are the CCM's known differences.
	Differences []providers.Difference
}

// FeaturesOf reads the features off a running cluster.
func FeaturesOf(e *Env) Features {
	c := e.Cluster
	p := c.Profile
	f := Features{
		Provider: p.Name, Capabilities: p.Capabilities, Extended: p.FeaturesOf(c.Cloud), Differences: p.Differences,
		NodePool: c.Nodes != nil, DataPlane: c.DataPlane, IPv6Nodes: !c.IPv4OnlyNodes,
		DualStackServices: c.DualStackServices, IPv6LoadBalancers: true,
		Machines:     c.Nodes != nil || (c.LentNodes != nil && len(c.LentNodes.Names()) > 0),
		ChosenNodeIP: c.Nodes != nil && !c.NodesByHook,
		Restart:      c.Manager(cluster.CloudControllerManager) != nil,
		CCMSeen:      c.Manager(cluster.CloudControllerManager) != nil || c.RunningCCM != nil,
		InTreeKCM:    p.InTreeKCM.Name != "", OlderCCM: p.OlderCCM.Name != "",
		HA: e.NewCluster != nil && c.ControlPlane != nil,
	}
	if c.Cloud != nil {
		_, f.Faults = c.Cloud.(providers.FaultInjector)
		if v6, ok := c.Cloud.(providers.IPv6LoadBalancerCloud); ok {
			f.IPv6LoadBalancers = v6.IPv6LoadBalancers()
		}
		if insp := c.Cloud.Inspector(); insp != nil {
			f.Inspector = true
			_, f.LBInspector = insp.(providers.LoadBalancerInspector)
			_, f.RouteInspect = insp.(providers.RouteInspector)
		}
	}
	return f
}

// Unmet is why the spec text, with these labels, cannot run on f, or "".
// With checkLate, needs checked at the cloud-side part count too: the
// spec would end skipped there. Needs are decided stage by stage.
//
// A known difference is not among the reasons: its spec runs, and the
// step it names must fail as it says.
func Unmet(text string, labels []string, f Features, checkLate bool) string {
	for when := range late + 1 {
		for _, l := range labels {
			n, ok := needs[l]
			if !ok || n.when != when || (when == late && !checkLate) {
				continue
			}
			if reason := n.unmet(f); reason != "" {
				return reason
			}
		}
	}
	return ""
}

// NotClaimed begins the reason of a spec of an extended feature the
// profile does not claim: reported as not claimed, not as a skip.
const NotClaimed = "not claimed: "

// NotClaimedReason is why a spec of feature ft does not run.
func NotClaimedReason(provider string, ft providers.Feature, claimed providers.Features) string {
	list := claimed.String()
	if list == "" {
		list = "none"
	}
	return fmt.Sprintf(NotClaimed+"provider %s does not claim the extended feature %q of %s (it claims %s)", provider, ft, specs.Features[ft], list)
}

// LateSkip begins the reason of a spec skipped at its cloud-side part:
// what Kubernetes shows was checked, and passed, before it.
const LateSkip = "cloud-side checks skipped: "

func lateLBReason(provider string) string {
	return fmt.Sprintf(LateSkip+"provider %s has no load balancer inspector (the Service's status was checked)", provider)
}

func lateRouteReason(provider string) string {
	return fmt.Sprintf(LateSkip+"provider %s has no route inspector (the nodes' conditions were checked)", provider)
}

// Differences are the known differences of the cluster's CCM, as its
// cloud's config makes them; nil before SetEnv.
func Differences() []providers.Difference {
	if current == nil {
		return nil
	}
	return current.Features.Differences
}

// idOf is the ID of the spec whose leaf text is leaf; the zero ID for a
// node that is not one of specs.All (a suite node).
func idOf(leaf string) specs.ID {
	s, _ := specs.ByText(specs.Untagged(leaf))
	return s.ID
}

// UnknownDifferences are the specs named by differences that are none of
// leaf texts: a spec of specs.All the suite does not declare would expect
// nothing and say nothing.
func UnknownDifferences(differences []providers.Difference, leaves []string) []string {
	texts := make([]string, 0, len(leaves))
	for _, l := range leaves {
		texts = append(texts, specs.Untagged(l))
	}
	var out []string
	for _, d := range differences {
		if !slices.Contains(texts, d.Spec.Text()) && !slices.Contains(out, d.Spec.String()) {
			out = append(out, d.Spec.String())
		}
	}
	slices.Sort(out)
	return out
}

// DryRunWouldRun is a dry run's skip message for a spec that would run.
const DryRunWouldRun = "dry run: would run"

// SkipUnmet skips the current spec if its needs are unmet; the suite calls
// it before every spec. In a dry run it skips every spec, with the reason a
// real run would skip it for, counting needs checked at the cloud-side
// part, or DryRunWouldRun.
func SkipUnmet() {
	if current == nil {
		return
	}
	spec := ginkgo.CurrentSpecReport()
	reason := Unmet(specs.Untagged(spec.LeafNodeText), spec.Labels(), *current.Features, current.DryRun)
	switch {
	case reason != "":
		ginkgo.Skip(reason)
	case current.DryRun:
		ginkgo.Skip(DryRunWouldRun + expectedSteps(idOf(spec.LeafNodeText)))
	}
}

// IsNeed reports whether a label is a need rather than a tag.
func IsNeed(label string) bool {
	return strings.HasPrefix(label, needPrefix) || strings.HasPrefix(label, lateNeedPrefix)
}
