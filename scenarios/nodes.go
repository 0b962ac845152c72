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
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/cloud-provider/names"
	"k8s.io/kubernetes/test/e2e/framework"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/internal/nodewait"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/specs"
)

var _ = framework.Describe("Nodes", func() {
	f := framework.NewDefaultFramework("nodes")

	it(specs.InitTaintRemoved, func(ctx context.Context) {
		e := env()
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, e.Timeouts.NodeInit, "the CCM to initialize every node", initialNodes(), nodewait.Initialized))
		if e.InitialNodesInitialized > 0 {
			ginkgo.AddReportEntry("initial nodes initialized after registration", e.InitialNodesInitialized.Round(time.Millisecond).String())
		}
	})

	it(specs.InitJoiningNode, Needs(NeedNodePool), func(ctx context.Context) {
		pool := nodePool()
		name := "join-" + rand.String(5)
		start := time.Now()
		addNode(ctx, pool, name)
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, env().Timeouts.NodeInit, "the CCM to initialize a joining node", []string{name}, nodewait.Initialized))
		latency := time.Since(start)
		framework.Logf("node %s initialized %s after registration", name, latency.Round(time.Millisecond))
		ginkgo.AddReportEntry("joining node initialized after registration", latency.Round(time.Millisecond).String())
	})

	it(specs.ProviderIDSet, func(ctx context.Context) {
		e := env()
		cloud := cloudInstances(ctx, f.ClientSet, false)
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, e.Timeouts.NodeInit, "spec.providerID on every node",
			initialNodes(), ProviderIDFromCloud(e.Cluster.Profile.ProviderIDScheme, cloud)))
	})

	// Serial: while the CCM restarts, no other spec's node or Service
	// would be served, and its wait would measure the restart.
	it(specs.ProviderIDKept, framework.WithSerial(), Needs(NeedRestart), func(ctx context.Context) {
		e := env()
		ccm := e.Cluster.Manager(cluster.CloudControllerManager)
		scheme := e.Cluster.Profile.ProviderIDScheme
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, e.Timeouts.NodeInit, "spec.providerID on every node", initialNodes(), ProviderIDFromCloud(scheme, nil)))
		before := providerIDs(ctx, f.ClientSet)

		ginkgo.By("restarting the CCM")
		framework.ExpectNoError(ccm.Restart(ctx), "restart the CCM")

		ginkgo.By("checking every node keeps its providerID and stays initialized")
		gomega.Consistently(ctx, func() map[string]string { return providerIDs(ctx, f.ClientSet) }).
			WithTimeout(e.Timeouts.Settle).WithPolling(time.Second).
			Should(gomega.Equal(before), "spec.providerID of the nodes changed after a CCM restart")

		if e.Cluster.Nodes != nil {
			ginkgo.By("checking the restarted CCM initializes a joining node")
			name := "restart-" + rand.String(5)
			addNode(ctx, e.Cluster.Nodes, name)
			framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, e.Timeouts.NodeInit, "the restarted CCM to initialize a joining node",
				[]string{name}, ProviderIDFromCloud(scheme, cloudInstancesOf(ctx, name))))
		}
	})

	it(specs.NodeAddresses, Needs(NeedInspector), func(ctx context.Context) {
		cloud := cloudInstances(ctx, f.ClientSet, true)
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, env().Timeouts.NodeInit, "node addresses to match the cloud", initialNodes(), AddressesFromCloud(cloud)))
	})

	it(specs.ProvidedNodeIP, Needs(NeedNodePool, NeedChosenNodeIP, NeedInspector), func(ctx context.Context) {
		pool := nodePool()
		insp := inspector()
		name := "nodeip-" + rand.String(5)
		var provided string
		internal := 0
		addNode(ctx, pool, name, cluster.WithProvidedNodeIP(func(addrs []v1.NodeAddress) string {
			// The last InternalIP: with several, the CCM must drop the
			// others rather than keep its own first choice.
			for _, a := range addrs {
				if a.Type == v1.NodeInternalIP {
					provided = a.Address
					internal++
				}
			}
			return provided
		}))
		gomega.Expect(provided).NotTo(gomega.BeEmpty(), "the cloud gave instance %s no InternalIP to provide", name)
		if internal == 1 {
			// Still worth checking: the CCM must accept the annotation and
			// keep the cloud's other addresses.
			ginkgo.AddReportEntry("provided-node-ip", fmt.Sprintf("the cloud reports one InternalIP for %s, so honouring the annotation cannot be told from the CCM's own choice", name))
		}
		inst, err := insp.Instance(ctx, name)
		framework.ExpectNoError(err, "ask the cloud about instance %s", name)
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, env().Timeouts.NodeInit, "the provided node IP to be honoured",
			[]string{name}, ProvidedNodeIPHonoured(provided, inst)))
	})

	it(specs.DualStackNodeIP, Needs(NeedNodePool, NeedChosenNodeIP, NeedIPv6Nodes, NeedInspector), func(ctx context.Context) {
		pool := nodePool()
		insp := inspector()
		name := "nodeip6-" + rand.String(5)
		var v4, v6 string
		var cloudAddrs []v1.NodeAddress
		addNode(ctx, pool, name, cluster.WithProvidedNodeIP(func(addrs []v1.NodeAddress) string {
			// The last InternalIP of each family, as a kubelet given
			// --node-ip=<IPv4>,<IPv6> (KEP-3705): the CCM must keep
			// both and drop the family's others.
			cloudAddrs = addrs
			for _, a := range addrs {
				if ip, err := netip.ParseAddr(a.Address); err == nil && a.Type == v1.NodeInternalIP {
					if ip.Is4() || ip.Is4In6() {
						v4 = a.Address
					} else {
						v6 = a.Address
					}
				}
			}
			// Without both, registered with what there is; the spec
			// fails below, naming the family missing.
			return strings.Join(slices.DeleteFunc([]string{v4, v6}, func(ip string) bool { return ip == "" }), ",")
		}))
		gomega.Expect(v4).NotTo(gomega.BeEmpty(), "the cloud gave instance %s no IPv4 InternalIP (its addresses: %s)", name, formatAddresses(cloudAddrs))
		gomega.Expect(v6).NotTo(gomega.BeEmpty(), "the cloud gave instance %s no IPv6 InternalIP (its addresses: %s): a profile that claims %s needs a cloud whose instances have addresses of both families", name, formatAddresses(cloudAddrs), specs.NodeDualStack)
		inst, err := insp.Instance(ctx, name)
		framework.ExpectNoError(err, "ask the cloud about instance %s", name)
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, env().Timeouts.NodeInit, "the dual-stack node IP to be honoured",
			[]string{name}, ProvidedNodeIPHonoured(v4+","+v6, inst)))
	})

	it(specs.InstanceTypeLabel, Needs(NeedInspector), func(ctx context.Context) {
		cloud := cloudInstances(ctx, f.ClientSet, true)
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, env().Timeouts.NodeInit, "instance-type labels to match the cloud", initialNodes(),
			LabelsFromCloud(cloud, "instance type", func(i providers.Instance) string { return i.InstanceType },
				v1.LabelInstanceTypeStable, v1.LabelInstanceType)))
	})

	it(specs.ZoneRegionLabels, Needs(NeedInspector), func(ctx context.Context) {
		cloud := cloudInstances(ctx, f.ClientSet, true)
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, env().Timeouts.NodeInit, "zone and region labels to match the cloud", initialNodes(),
			All(
				LabelsFromCloud(cloud, "zone", func(i providers.Instance) string { return i.Zone }, v1.LabelTopologyZone, v1.LabelFailureDomainBetaZone),
				LabelsFromCloud(cloud, "region", func(i providers.Instance) string { return i.Region }, v1.LabelTopologyRegion, v1.LabelFailureDomainBetaRegion),
			)))
	})

	it(specs.LifecycleShutdown, startEarly, Needs(NeedMachines), func(ctx context.Context) {
		e := env()
		name, pool := machineNode(ctx, "stop-")
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, e.Timeouts.NodeInit, "the CCM to initialize the node", []string{name}, nodewait.Initialized))

		ginkgo.By("powering the instance off")
		framework.ExpectNoError(pool.PowerOff(ctx, name))
		framework.ExpectNoError(machineFollowed(ctx, name, "stopped", nodewait.For(ctx, f.ClientSet, e.Timeouts.NodeLifecycle, "the stopped node to go NotReady and get the shutdown taint",
			[]string{name}, All(ReadyIs(false), Tainted(ShutdownTaint, true)))))

		ginkgo.By("powering the instance on")
		framework.ExpectNoError(pool.PowerOn(ctx, name))
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, e.Timeouts.NodeLifecycle, "the running node to go Ready and lose the shutdown taint",
			[]string{name}, All(ReadyIs(true), Tainted(ShutdownTaint, false))))
	})

	it(specs.LifecycleTerminate, startEarly, Needs(NeedMachines), func(ctx context.Context) {
		e := env()
		name, pool := machineNode(ctx, "term-")
		framework.ExpectNoError(nodewait.For(ctx, f.ClientSet, e.Timeouts.NodeInit, "the CCM to initialize the node", []string{name}, nodewait.Initialized))

		ginkgo.By("terminating the instance")
		framework.ExpectNoError(pool.Terminate(ctx, name))
		framework.ExpectNoError(machineFollowed(ctx, name, "terminated", nodewait.Gone(ctx, f.ClientSet, e.Timeouts.NodeLifecycle, name, "its instance was terminated")))
	})

	// A node another owner runs (bare metal, another cloud, another CCM)
	// is not the CCM's to delete or taint: a CCM that takes every NotReady
	// node for its own deletes it (vSphere CCM 677), and one that parses
	// every provider ID as its own may crash on it (cloud-provider-aws
	// 1210). Serial: a crashing CCM takes the specs beside it down, and a
	// node of another owner would reach every load balancer of the specs
	// beside it.
	it(specs.LifecycleForeign, framework.WithSerial(), Needs(NeedCCMSeen), func(ctx context.Context) {
		e := env()
		name := "foreign-" + rand.String(5)
		providerID := foreignProviderID(name)
		ginkgo.By(fmt.Sprintf("registering node %s, NotReady, with provider ID %s and no uninitialized taint, as another owner's", name, providerID))
		registerForeignNode(ctx, f.ClientSet, name, providerID)

		ginkgo.By(fmt.Sprintf("watching it for %s: the CCM's node lifecycle controller looks at every NotReady node each --node-monitor-period", foreignWatch))
		step(ctx, f, providers.StepKeep, func(ctx context.Context) error {
			return nodewait.Holds(ctx, f.ClientSet, foreignWatch, "the CCM to leave the node of another owner alone", name, Tainted(ShutdownTaint, false))
		})
		step(ctx, f, providers.StepSurvive, func(ctx context.Context) error { return ccmServing(ctx, e.Cluster) })
	})
})

// foreignScheme is the provider ID scheme of the foreign-node spec's node:
// a static node's, as clusters with machines of no cloud give them.
const foreignScheme = "static"

// foreignProviderID is the provider ID of a node of another owner
// called name: a static node's, or another cloud's where the CCM's own
// scheme is static.
func foreignProviderID(name string) string {
	if env().Cluster.Profile.ProviderIDScheme == foreignScheme {
		return "other-cloud://" + name
	}
	return foreignScheme + "://" + name
}

// foreignWatch is how long the foreign-node spec watches its node: three
// of the cloud node lifecycle controller's periods at their default (5 s,
// a CCM deployed by its own manifests), fifteen of the CCMs the harness
// runs (--node-monitor-period=1s).
const foreignWatch = 15 * time.Second

// registerForeignNode makes a Node no kubelet runs, as another owner's:
// initialized (no uninitialized taint), with its provider ID, and NotReady,
// which is what makes the CCM's node lifecycle controller ask its cloud
// about it. It is deleted after the spec, and a CCM that crashed on it is
// started again, so that the specs after it have one.
func registerForeignNode(ctx context.Context, cs kubernetes.Interface, name, providerID string) {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{ProviderID: providerID}}
	created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	framework.ExpectNoError(err, "create node %s", name)
	ginkgo.DeferCleanup(func(ctx context.Context) error {
		if err := cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete node %s: %w", name, err)
		}
		c := env().Cluster
		if c.Health == nil || c.Health() == nil {
			return nil
		}
		if ccm := c.Manager(cluster.CloudControllerManager); ccm != nil {
			ginkgo.By("starting the CCM again, which the node of another owner stopped")
			return ccm.Restart(ctx)
		}
		return nil
	}, ginkgo.NodeTimeout(TeardownTimeout))
	// A patch, not an update: the controllers write the new node at once
	// (its pod CIDR), and an update would race them.
	now := metav1.Now()
	status, err := json.Marshal(map[string]any{"status": v1.NodeStatus{Conditions: []v1.NodeCondition{{
		Type: v1.NodeReady, Status: v1.ConditionFalse, Reason: "KubeletNotReady",
		Message: "no kubelet: a node of another owner, registered by the harness", LastHeartbeatTime: now, LastTransitionTime: now}}}})
	framework.ExpectNoError(err)
	_, err = cs.CoreV1().Nodes().PatchStatus(ctx, created.Name, status)
	if apierrors.IsNotFound(err) {
		// A node lifecycle controller may delete the node before it is
		// marked (a node without a Ready condition is not ready): what
		// the spec checks next, that the node is kept, says so.
		return
	}
	framework.ExpectNoError(err, "make node %s NotReady", name)
}

// ccmServing says whether the CCM still runs its node lifecycle
// controller: a CCM that crashed on a node is gone, or answers from a
// restart that no longer runs it. A CCM the harness cannot ask is not
// taken for one that runs (NeedCCMSeen skips the spec before).
func ccmServing(ctx context.Context, c *cluster.Cluster) error {
	if c.Health != nil {
		if err := c.Health(); err != nil {
			return fmt.Errorf("expected the CCM running, actual: %w", err)
		}
	}
	var ccm cluster.RunningCCM = c.RunningCCM
	if m := c.Manager(cluster.CloudControllerManager); m != nil {
		ccm = m
	}
	if ccm == nil {
		return errors.New("expected the CCM running, actual: the harness has no CCM to ask which controllers it runs")
	}
	controllers, err := ccm.Controllers(ctx)
	if err != nil {
		return fmt.Errorf("expected the CCM serving its /healthz, actual: %w", err)
	}
	if !slices.Contains(controllers, names.CloudNodeLifecycleController) {
		return fmt.Errorf("expected the CCM running its %s, actual: it runs %v", names.CloudNodeLifecycleController, controllers)
	}
	return nil
}

// addNode adds a node of the spec's own and removes it (and its instance)
// after the spec. It registers excluded from load balancers: beside the
// specs in parallel, another spec's node changing the backends of every
// load balancer is a race, not a check. The OpenStack CCM's one node-sync
// worker, updating a load balancer that its Service's deletion removes
// meanwhile, waits about five minutes for it to become ACTIVE again
// (WaitActiveAndGetLoadBalancer retries the 404), and no node change
// reaches any load balancer until then. The load-balancer spec about
// node changes adds its own node with addBackendNode, alone ([Serial]).
func addNode(ctx context.Context, pool cluster.NodePool, name string, opts ...cluster.NodeOption) {
	opts = append([]cluster.NodeOption{cluster.WithLabels(map[string]string{v1.LabelNodeExcludeBalancers: "true"})}, opts...)
	registerNode(ctx, pool, name, opts...)
}

// machineNode is a node whose machine the spec may stop, start and
// terminate, and what powers it: on a cluster the harness did not make,
// one its user lent (--lifecycle-nodes), given back after the spec;
// otherwise one of the spec's own, added as addNode adds one (a join
// hook's, on a cluster the harness did not make).
func machineNode(ctx context.Context, prefix string) (string, cluster.Powered) {
	e := env()
	lender := e.Cluster.LentNodes
	if lender == nil && e.Cluster.Nodes != nil {
		name := prefix + rand.String(5)
		addNode(ctx, e.Cluster.Nodes, name)
		return name, e.Cluster.Nodes
	}
	if lender == nil {
		ginkgo.Skip(NeedMachines.unmet(*e.Features))
	}
	name, err := lender.Lend(ctx)
	framework.ExpectNoError(err, "borrow a node")
	ginkgo.By("borrowing node " + name + ", lent to the lifecycle specs")
	ginkgo.DeferCleanup(func(ctx context.Context) error { return lender.Return(ctx, name) }, ginkgo.NodeTimeout(TeardownTimeout))
	return name, lender
}

// machineFollowed is waited, the error of a lifecycle spec's wait after
// it stopped or terminated node name's machine, with what the cloud says
// of that machine added: a stop or terminate the cloud took but did not
// carry out (a cloud plugin whose verb failed quietly; a machine that did
// not power off) leaves the node Ready, and must not read as the CCM's
// failure. The cloud is asked through the inspector, when there is one;
// an instance it no longer reports (an error) is taken as gone.
func machineFollowed(ctx context.Context, name, did string, waited error) error {
	e := env()
	if waited == nil || e.Cluster.Cloud == nil || e.Cluster.Cloud.Inspector() == nil {
		return waited
	}
	inst, err := e.Cluster.Cloud.Inspector().Instance(ctx, name)
	if err != nil || !inst.Running {
		return fmt.Errorf("%w; the cloud reports its instance not running (%s)", waited, cloudView(inst, err))
	}
	return fmt.Errorf("%w; the machine did not follow: the cloud still reports the instance of node %s (%s) running after it was %s, so this is not the CCM's failure: check the cloud's or its plugin's logs", waited, name, inst.ProviderID, did)
}

// cloudView is what the inspector answered of an instance, in a few words.
func cloudView(inst providers.Instance, err error) string {
	if err != nil {
		return "asked, it answered: " + err.Error()
	}
	return fmt.Sprintf("%s, running=%t", inst.ProviderID, inst.Running)
}

// addBackendNode adds a node every load balancer should send to, removed
// after the spec.
func addBackendNode(ctx context.Context, pool cluster.NodePool, name string) {
	registerNode(ctx, pool, name)
}

func registerNode(ctx context.Context, pool cluster.NodePool, name string, opts ...cluster.NodeOption) {
	ginkgo.By("adding node " + name)
	_, err := pool.Add(ctx, name, opts...)
	ginkgo.DeferCleanup(func(ctx context.Context) error { return pool.Remove(ctx, name) }, ginkgo.NodeTimeout(TeardownTimeout))
	framework.ExpectNoError(err, "add node %s", name)
}

// cloudInstances asks the cloud about every initial node. With required, a
// provider without an inspector skips the spec; without, the result is nil
// and checks compare only what Kubernetes shows.
func cloudInstances(ctx context.Context, cs kubernetes.Interface, required bool) map[string]providers.Instance {
	e := env()
	if e.Cluster.Cloud == nil || e.Cluster.Cloud.Inspector() == nil {
		if required {
			inspector()
		}
		return nil
	}
	names := initialNodes()
	if names == nil {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		framework.ExpectNoError(err, "list nodes")
		for _, n := range nodes.Items {
			names = append(names, n.Name)
		}
	}
	return cloudInstancesOf(ctx, names...)
}

// initialNodes are the nodes a spec about "every node" checks: those the
// cluster had when the specs began; nil (every node) if it had none.
func initialNodes() []string { return env().InitialNodes }

// twoNodesOrMore asks list for the nodes that can run a spec's pods until
// it names two or more, within the framework's bound for starting pods,
// and returns its last answer. Asked once, it could say none: a node keeps
// its not-ready taint until kube-controller-manager's node lifecycle
// controller removes it, and a manager that restarts on a loaded machine
// removes none meanwhile (on empty caches, make controls' kind cluster
// began the rolling-update spec with every node so tainted, its
// kube-controller-manager down for 38 s after a lost lease). Whether pods
// can run is the kubelets' and the control plane's, not the CCM's.
func twoNodesOrMore(ctx context.Context, f *framework.Framework, list func(context.Context) []string) []string {
	var names []string
	_ = wait.PollUntilContextTimeout(ctx, framework.Poll, f.Timeouts.PodStart, true, func(ctx context.Context) (bool, error) {
		names = list(ctx)
		return len(names) >= 2, nil
	})
	return names
}

func cloudInstancesOf(ctx context.Context, names ...string) map[string]providers.Instance {
	e := env()
	if e.Cluster.Cloud == nil || e.Cluster.Cloud.Inspector() == nil {
		return nil
	}
	out := map[string]providers.Instance{}
	for _, name := range names {
		inst, err := e.Cluster.Cloud.Inspector().Instance(ctx, name)
		framework.ExpectNoError(err, "ask the cloud about the instance of node %s", name)
		out[name] = inst
	}
	return out
}

func providerIDs(ctx context.Context, cs kubernetes.Interface) map[string]string {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err, "list nodes")
	out := map[string]string{}
	for _, n := range nodes.Items {
		if err := nodewait.Initialized(&n); err != nil {
			out[n.Name] = fmt.Sprintf("<uninitialized: %v>", err)
			continue
		}
		out[n.Name] = n.Spec.ProviderID
	}
	return out
}
