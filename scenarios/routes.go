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
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/test/e2e/framework"
	e2enode "k8s.io/kubernetes/test/e2e/framework/node"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"
	e2eskipper "k8s.io/kubernetes/test/e2e/framework/skipper"
	imageutils "k8s.io/kubernetes/test/utils/image"
	admissionapi "k8s.io/pod-security-admission/api"

	"sigs.k8s.io/ccm-harness/internal/nodewait"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/specs"
)

var _ = framework.Describe("Routes", Needs(Claims(providers.Routes)), func() {
	f := framework.NewDefaultFramework("routes")

	ginkgo.BeforeEach(func(ctx context.Context) {
		deferLeakCheck(f.ClientSet)
	})

	it(specs.RoutesCreated, startEarly, Needs(LateRouteInspector), func(ctx context.Context) {
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, env().Timeouts.LoadBalancer, "NetworkUnavailable=False (RouteCreated) on every node with a pod CIDR", initialNodes(), RouteCreated))
		// The nodes it was given: another spec's node, whose route that
		// spec deletes behind the CCM's back, is that spec's to check.
		framework.ExpectNoError(routesMatch(ctx, f.ClientSet, initialNodes()))
	})

	// Each step goes on from where the one before left the cloud, whether
	// or not the CCM followed: a known difference in one step (the watch-
	// based route controller restoring a route only on a node event) leaves
	// the others asserting.
	it(specs.RoutesReconciled, startEarly, Needs(NeedNodePool, LateRouteInspector), func(ctx context.Context) {
		pool := nodePool()
		name := "route-" + rand.String(5)
		step(ctx, f, providers.StepJoin, func(ctx context.Context) error {
			start := time.Now()
			addNode(ctx, pool, name)
			if err := nodewait.For(ctx, f.ClientSet, env().Timeouts.LoadBalancer, "the new node's route", []string{name}, RouteCreated); err != nil {
				return err
			}
			ginkgo.AddReportEntry("joining node's route created after it was added", time.Since(start).Round(time.Millisecond).String())
			return routesMatch(ctx, f.ClientSet, nil)
		})
		insp := routeInspector()

		if t, ok := env().Cluster.Cloud.Inspector().(providers.RouteTamperer); ok {
			step(ctx, f, providers.StepRestore, func(ctx context.Context) error {
				routes, err := insp.Routes(ctx)
				if err != nil {
					return err
				}
				for _, r := range routes {
					if r.TargetNode == name {
						ginkgo.By("deleting route " + r.Name + " in the cloud, behind the CCM's back")
						if err := t.DeleteRoute(ctx, r.Name); err != nil {
							return err
						}
					}
				}
				return routesMatch(ctx, f.ClientSet, nil)
			})
		} else {
			framework.Logf("provider %s cannot delete routes behind the CCM's back; that part is not checked", env().Cluster.Profile.Name)
		}

		step(ctx, f, providers.StepLeave, func(ctx context.Context) error {
			ginkgo.By("deleting node " + name)
			if err := pool.Remove(ctx, name); err != nil {
				return err
			}
			return routesMatch(ctx, f.ClientSet, nil)
		})
	})

	// The route controller asks the CCM for a route to every node with a
	// pod CIDR, a node of another owner too (k8s.io/cloud-provider
	// controllers/route: no provider-ID check). The CCM cannot route to a
	// machine not in its cloud and says so for that node alone; a CCM
	// that fails its whole route table on it (a listing that takes every
	// route's target for its own instance) leaves every node that joins
	// after it without a route. Serial: the node would reach the routes
	// and load balancers of the specs beside it.
	it(specs.RoutesForeignNode, framework.WithSerial(), Needs(NeedNodePool, LateRouteInspector), func(ctx context.Context) {
		e := env()
		pool := nodePool()
		foreign := "foreign-" + rand.String(5)
		providerID := foreignProviderID(foreign)
		ginkgo.By(fmt.Sprintf("registering node %s, with provider ID %s, as another owner's", foreign, providerID))
		registerForeignNode(ctx, f.ClientSet, foreign, providerID)
		// Until the route controller has asked for the node's route, a
		// node that joins could be routed in the same pass, before the
		// CCM saw the other owner's: it writes the node's network
		// condition once it has asked, whatever the answer.
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, e.Timeouts.LoadBalancer, "the route controller to ask the CCM for a route to the node of another owner (a pod CIDR, then a NetworkUnavailable condition)",
			[]string{foreign}, All(HasPodCIDR, NetworkConditionSet)))
		name := "route-" + rand.String(5)
		addNode(ctx, pool, name)
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, e.Timeouts.LoadBalancer, "the route of node "+name+", which joined after the node of another owner",
			[]string{name}, All(HasPodCIDR, RouteCreated)))
		framework.ExpectNoError(routesMatch(ctx, f.ClientSet, nil))
	})
})

// The pod traffic spec runs where nodes are real and their network is the
// cloud's (kind, whose fabric copies the cloud's routes into the nodes):
// with no route for a node's pod CIDR, nothing reaches its pods from
// another node, so the spec fails when the route controller did not do
// its job, whatever the cloud's route table claims.
var _ = framework.Describe("Routes", Needs(Claims(providers.Routes), NeedDataPlane), func() {
	f := framework.NewDefaultFramework("route-traffic")
	f.NamespacePodSecurityLevel = admissionapi.LevelBaseline

	it(specs.RoutesDatapath, framework.WithLabel(specs.TagDatapath), func(ctx context.Context) {
		nodes, err := e2enode.GetReadySchedulableNodes(ctx, f.ClientSet)
		framework.ExpectNoError(err)
		if len(nodes.Items) < 2 {
			e2eskipper.Skipf("needs two schedulable nodes, the cluster has %d", len(nodes.Items))
		}
		client := netexecPod(ctx, f, "client", nodes.Items[0].Name)
		server := netexecPod(ctx, f, "server", nodes.Items[1].Name)
		// Each of the pod's addresses: a dual-stack cluster's pods have one
		// of each family, each carried by the route of its node's pod CIDR
		// of that family.
		for _, ip := range server.Status.PodIPs {
			target := net.JoinHostPort(ip.IP, "8080")
			what := fmt.Sprintf("pod %s on node %s to reach pod %s (%s) on node %s", client.Name, client.Spec.NodeName, server.Name, target, server.Spec.NodeName)
			framework.ExpectNoError(WaitForCloud(ctx, env().Timeouts.LoadBalancer, what, func(ctx context.Context) error {
				stdout, stderr, err := e2epod.ExecCommandInContainerWithFullOutput(f, client.Name, "netexec", "/agnhost", "connect", target, "--timeout=3s")
				if err != nil {
					return fmt.Errorf("node %s: expected a TCP connection from pod %s to %s on node %s, actual: %v (%s)", client.Spec.NodeName, client.Name, target, server.Spec.NodeName, err, strings.TrimSpace(stdout+" "+stderr))
				}
				return nil
			}))
		}
	})
})

// netexecPod runs agnhost netexec on node and returns the running pod.
func netexecPod(ctx context.Context, f *framework.Framework, name, node string) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{
			NodeName: node,
			Containers: []v1.Container{{
				Name:  "netexec",
				Image: imageutils.GetE2EImage(imageutils.Agnhost),
				Args:  []string{"netexec", "--http-port=8080"},
			}},
		},
	}
	pod = e2epod.NewPodClient(f).CreateSync(ctx, pod)
	return pod
}

// RouteCreated passes when a node with a pod CIDR has the condition the
// route controller sets once its route exists.
func RouteCreated(n *v1.Node) error {
	if n.Spec.PodCIDR == "" {
		return nil
	}
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeNetworkUnavailable {
			if c.Status == v1.ConditionFalse && c.Reason == "RouteCreated" {
				return nil
			}
			return fmt.Errorf("node %s: expected condition NetworkUnavailable=False reason RouteCreated, actual %s reason %s", n.Name, c.Status, c.Reason)
		}
	}
	return fmt.Errorf("node %s: expected condition NetworkUnavailable=False reason RouteCreated, actual: no such condition", n.Name)
}

// HasPodCIDR passes when the node has a pod CIDR: until it has one, the
// route controller has nothing to route to it.
func HasPodCIDR(n *v1.Node) error {
	if n.Spec.PodCIDR == "" {
		return fmt.Errorf("node %s: expected a pod CIDR, actual: none", n.Name)
	}
	return nil
}

// NetworkConditionSet passes when the node has a NetworkUnavailable
// condition, which the route controller writes once it has asked the CCM
// for the node's routes, True or False by the answer.
func NetworkConditionSet(n *v1.Node) error {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeNetworkUnavailable {
			return nil
		}
	}
	return fmt.Errorf("node %s: expected a NetworkUnavailable condition, the route controller's, actual: none", n.Name)
}

// RoutesMatch passes when the cloud holds exactly one route per pod CIDR
// of every node, to that node, and no other.
func RoutesMatch(nodes []v1.Node, routes []providers.Route) error {
	return RoutesMatchOf(nodes, routes, nil)
}

// RoutesMatchOf is RoutesMatch that asks a route only of the nodes named
// in of (nil: every node); a route no node's pod CIDR explains is wrong
// whichever node it targets.
func RoutesMatchOf(nodes []v1.Node, routes []providers.Route, of []string) error {
	want := map[string]string{} // CIDR -> node
	owned := map[string]bool{}  // every node's CIDRs
	for _, n := range nodes {
		for _, c := range n.Spec.PodCIDRs {
			owned[c] = true
			if of == nil || slices.Contains(of, n.Name) {
				want[c] = n.Name
			}
		}
	}
	got := map[string]string{}
	var problems []string
	for _, r := range routes {
		if r.Blackhole {
			problems = append(problems, fmt.Sprintf("route %s to %s is a blackhole", r.Name, r.DestinationCIDR))
		}
		if prev, dup := got[r.DestinationCIDR]; dup {
			problems = append(problems, fmt.Sprintf("two routes for %s (to %s and %s)", r.DestinationCIDR, prev, r.TargetNode))
		}
		got[r.DestinationCIDR] = r.TargetNode
	}
	for cidr, node := range want {
		switch g, ok := got[cidr]; {
		case !ok:
			problems = append(problems, fmt.Sprintf("node %s: expected a route for its pod CIDR %s, actual: none", node, cidr))
		case g != node:
			problems = append(problems, fmt.Sprintf("node %s: expected the route for %s to target it, actual target %s", node, cidr, g))
		}
	}
	for cidr, node := range got {
		if !owned[cidr] {
			problems = append(problems, fmt.Sprintf("route for %s to node %s: expected none (no node has that pod CIDR), actual: present", cidr, node))
		}
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// OwnNodes are the nodes a CCM of the provider ID scheme can route to:
// every node but those whose provider ID is set with another scheme (a
// machine of another owner, which is not in its cloud). A node the CCM has
// not initialized yet is its own.
func OwnNodes(nodes []v1.Node, scheme string) []string {
	out := []string{}
	for _, n := range nodes {
		if got, _, ok := strings.Cut(n.Spec.ProviderID, "://"); scheme != "" && ok && got != scheme {
			continue
		}
		out = append(out, n.Name)
	}
	return out
}

func routeInspector() providers.RouteInspector {
	c := env().Cluster.Cloud
	if c != nil {
		if insp, ok := c.Inspector().(providers.RouteInspector); ok && insp != nil {
			return insp
		}
	}
	ginkgo.Skip(lateRouteReason(env().Cluster.Profile.Name))
	return nil
}

// routesMatch waits for the cloud's routes to match the nodes' pod CIDRs
// (RoutesMatch): of the nodes named in of, or of every node if nil.
func routesMatch(ctx context.Context, cs kubernetes.Interface, of []string) error {
	insp := routeInspector()
	return WaitForCloud(ctx, env().Timeouts.LoadBalancer, "the cloud's routes to match the nodes' pod CIDRs", func(ctx context.Context) error {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		routes, err := insp.Routes(ctx)
		if err != nil {
			return err
		}
		if of == nil {
			of = OwnNodes(nodes.Items, env().Cluster.Profile.ProviderIDScheme)
		}
		return RoutesMatchOf(nodes.Items, routes, of)
	})
}
