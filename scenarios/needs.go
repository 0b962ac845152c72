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

// A spec says what it needs of the provider and runtime as Ginkgo labels,
// so that one function, Unmet, decides whether it runs: before its first
// step in a real run (SkipUnmet), and without running it in a dry run.
const (
	needPrefix = "needs-"
	// NeedNodePool: the runtime adds nodes and powers their instances.
	NeedNodePool = needPrefix + "node-pool"
	// NeedChosenNodeIP: the runtime registers a node with a kubelet
	// --node-ip the spec chooses from its instance's addresses (a join
	// hook takes labels only).
	NeedChosenNodeIP = needPrefix + "chosen-node-ip"
	// NeedMachines: the spec may stop, start and terminate a node's
	// machine: one the runtime adds, or one the user lent.
	NeedMachines = needPrefix + "machines"
	// NeedInspector: the cloud can be asked what is true.
	NeedInspector = needPrefix + "inspector"
	// NeedDataPlane: nodes run pods and carry traffic.
	NeedDataPlane = needPrefix + "data-plane"
	// NeedRestart: the runtime can restart the CCM.
	NeedRestart = needPrefix + "ccm-restart"
	// NeedFaults: the cloud can be made to fail on purpose.
	NeedFaults = needPrefix + "fault-injection"
	// NeedHA: the runtime can run an HA control plane of the spec's own,
	// and the provider has a release to start it from: a kube-controller-
	// manager with it in-tree, or an older CCM.
	NeedHA = labels.NeedHA
	// NeedInTreeKCM: the provider has a kube-controller-manager release
	// with it in-tree to migrate from.
	NeedInTreeKCM = labels.NeedInTreeKCM
	// NeedOlderCCM: the provider has an older CCM release to upgrade from.
	NeedOlderCCM = labels.NeedOlderCCM

	// Checked late: the spec checks what Kubernetes shows first, and is
	// skipped at its cloud-side part.
	lateNeedPrefix = "cloud-checks-"
	// LateLBInspector: the cloud's load balancers can be listed.
	LateLBInspector = lateNeedPrefix + "load-balancers"
	// LateRouteInspector: the cloud's routes can be listed.
	LateRouteInspector = lateNeedPrefix + "routes"
)

// Needs labels a spec with what it needs: Needs* constants and provider
// capabilities.
func Needs(needs ...any) ginkgo.Labels {
	var l ginkgo.Labels
	for _, n := range needs {
		switch n := n.(type) {
		case providers.Capability:
			l = append(l, needPrefix+"capability-"+string(n))
		case string:
			l = append(l, n)
		default:
			panic(fmt.Sprintf("Needs: %T is neither a capability nor a need", n))
		}
	}
	return l
}

// Features are what a cluster and its provider offer the specs.
type Features struct {
	Provider     string
	Capabilities providers.Capabilities
	NodePool     bool
	ChosenNodeIP bool
	Machines     bool
	Inspector    bool
	LBInspector  bool
	RouteInspect bool
	DataPlane    bool
	Restart      bool
	Faults       bool
	InTreeKCM    bool
	HA           bool
	OlderCCM     bool
	// Differences are the CCM's known differences.
	Differences []providers.Difference
}

// FeaturesOf reads the features off a running cluster.
func FeaturesOf(e *Env) Features {
	c := e.Cluster
	p := c.Profile
	f := Features{
		Provider: p.Name, Capabilities: p.Capabilities, Differences: p.DifferencesOf(c.Cloud),
		NodePool: c.Nodes != nil, DataPlane: c.DataPlane,
		Machines:     c.Nodes != nil || (c.LentNodes != nil && len(c.LentNodes.Names()) > 0),
		ChosenNodeIP: c.Nodes != nil && !c.NodesByHook,
		Restart:      c.Manager(cluster.CloudControllerManager) != nil,
		InTreeKCM:    p.InTreeKCM.Name != "", OlderCCM: p.OlderCCM.Name != "",
		HA: e.NewCluster != nil && c.ControlPlane != nil,
	}
	if c.Cloud != nil {
		_, f.Faults = c.Cloud.(providers.FaultInjector)
		if insp := c.Cloud.Inspector(); insp != nil {
			f.Inspector = true
			_, f.LBInspector = insp.(providers.LoadBalancerInspector)
			_, f.RouteInspect = insp.(providers.RouteInspector)
		}
	}
	return f
}

// Unmet is why the spec text, with these labels, cannot run on f, or "".
// With late, needs checked at the cloud-side part count too: the spec
// would end skipped there.
//
// A known difference is not among the reasons: its spec runs, and the
// step it names must fail as it says.
func Unmet(text string, labels []string, f Features, late bool) string {
	// Needs checked up front win over those checked at the cloud-side
	// part.
	for _, pass := range []bool{false, true} {
		for _, l := range labels {
			if strings.HasPrefix(l, lateNeedPrefix) != pass {
				continue
			}
			if reason := unmet(l, f, late); reason != "" {
				return reason
			}
		}
	}
	return ""
}

func unmet(label string, f Features, late bool) string {
	if c, ok := strings.CutPrefix(label, needPrefix+"capability-"); ok {
		if !f.Capabilities[providers.Capability(c)] {
			return fmt.Sprintf("provider %s does not claim %q (it claims %s)", f.Provider, c, f.Capabilities)
		}
		return ""
	}
	switch {
	case label == NeedNodePool && !f.NodePool:
		return fmt.Sprintf("the harness cannot add nodes to this cluster (provider %s has no instance control here, and no --join-hook was given)", f.Provider)
	case label == NeedChosenNodeIP && f.NodePool && !f.ChosenNodeIP:
		return "needs a node registered with a kubelet --node-ip of the spec's choosing: the join hook is given labels only"
	case label == NeedMachines && !f.Machines:
		return fmt.Sprintf("would stop, start and terminate a machine: the harness cannot add nodes here (provider %s has no instance control here), and none was lent to it (--lifecycle-nodes, on a cluster it did not make, with a profile that reaches the cloud)", f.Provider)
	case label == NeedInspector && !f.Inspector:
		return fmt.Sprintf("provider %s has no cloud inspector here, so what the CCM set cannot be compared with the cloud", f.Provider)
	case label == NeedDataPlane && !f.DataPlane:
		return "needs real nodes: this runtime's nodes are simulated and run no pods"
	case label == NeedRestart && !f.Restart:
		return "the runtime cannot restart the CCM"
	case label == NeedFaults && !f.Faults:
		return fmt.Sprintf("provider %s cannot inject cloud faults", f.Provider)
	case label == NeedHA && !f.InTreeKCM && !f.OlderCCM:
		return fmt.Sprintf("provider %s has no kube-controller-manager release with it in-tree to migrate from, nor an older CCM to upgrade from", f.Provider)
	case label == NeedInTreeKCM && !f.InTreeKCM:
		return fmt.Sprintf("provider %s has no kube-controller-manager release with it in-tree to migrate from", f.Provider)
	case label == NeedHA && !f.HA:
		return "the runtime cannot run an HA control plane of its own"
	case label == NeedOlderCCM && !f.OlderCCM:
		return fmt.Sprintf("provider %s has no older CCM release to upgrade from", f.Provider)
	case late && label == LateLBInspector && !f.LBInspector:
		return lateLBReason(f.Provider)
	case late && label == LateRouteInspector && !f.RouteInspect:
		return lateRouteReason(f.Provider)
	}
	return ""
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
