package scenarios

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/test/e2e/framework"

	"sigs.k8s.io/ccm-harness/cluster/nodewait"
	"sigs.k8s.io/ccm-harness/providers"
)

var _ = framework.Describe("Routes", Needs(providers.Routes), func() {
	f := framework.NewDefaultFramework("routes")
	route := framework.WithLabel("route")

	ginkgo.BeforeEach(func(ctx context.Context) {
		deferLeakCheck(f.ClientSet)
	})

	framework.It("creates a route to every node's pod CIDR and marks the node's network available", route, Needs(LateRouteInspector), func(ctx context.Context) {
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, env().Timeouts.LoadBalancer, "NetworkUnavailable=False (RouteCreated) on every node with a pod CIDR", nil, RouteCreated))
		expectRoutes(ctx, f.ClientSet)
	})

	framework.It("removes a deleted node's route and recreates one deleted behind the CCM's back", route, Needs(NeedNodePool, LateRouteInspector), func(ctx context.Context) {
		pool := nodePool()
		name := "route-" + rand.String(5)
		addNode(ctx, pool, name)
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, env().Timeouts.LoadBalancer, "the new node's route", []string{name}, RouteCreated))
		expectRoutes(ctx, f.ClientSet)
		insp := routeInspector()

		if t, ok := env().Cluster.Cloud.Inspector().(providers.RouteTamperer); ok {
			routes, err := insp.Routes(ctx)
			framework.ExpectNoError(err)
			for _, r := range routes {
				if r.TargetNode == name {
					ginkgo.By("deleting route " + r.Name + " in the cloud, behind the CCM's back")
					framework.ExpectNoError(t.DeleteRoute(ctx, r.Name))
				}
			}
			expectRoutes(ctx, f.ClientSet)
		} else {
			framework.Logf("provider %s cannot delete routes behind the CCM's back; that part is not checked", env().Cluster.Profile.Name)
		}

		ginkgo.By("deleting node " + name)
		framework.ExpectNoError(pool.Remove(ctx, name))
		expectRoutes(ctx, f.ClientSet)
	})
})

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

// RoutesMatch passes when the cloud holds exactly one route per pod CIDR
// of every node, to that node, and no other.
func RoutesMatch(nodes []v1.Node, routes []providers.Route) error {
	want := map[string]string{} // CIDR -> node
	for _, n := range nodes {
		for _, c := range n.Spec.PodCIDRs {
			want[c] = n.Name
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
		if _, ok := want[cidr]; !ok {
			problems = append(problems, fmt.Sprintf("route for %s to node %s: expected none (no node has that pod CIDR), actual: present", cidr, node))
		}
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
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

func expectRoutes(ctx context.Context, cs kubernetes.Interface) {
	insp := routeInspector()
	framework.ExpectNoError(WaitForCloud(ctx, env().Timeouts.LoadBalancer, "the cloud's routes to match the nodes' pod CIDRs", func(ctx context.Context) error {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		routes, err := insp.Routes(ctx)
		if err != nil {
			return err
		}
		return RoutesMatch(nodes.Items, routes)
	}))
}
