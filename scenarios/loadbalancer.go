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
	"maps"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/test/e2e/framework"

	"sigs.k8s.io/ccm-harness/internal/nodewait"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/specs"
)

var _ = framework.Describe("LoadBalancer Services", Needs(Claims(providers.LoadBalancers)), func() {
	f := framework.NewDefaultFramework("loadbalancer")

	ginkgo.BeforeEach(func(ctx context.Context) {
		deferLeakCheck(f.ClientSet)
	})

	it(specs.LBProvision, Needs(LateLBInspector), func(ctx context.Context) {
		start := time.Now()
		s := createService(ctx, f.ClientSet, f.Namespace.Name, tcp(80))
		step(ctx, f, providers.StepProvision, func(ctx context.Context) error {
			s, err := WaitForService(ctx, f.ClientSet, s.Namespace, s.Name, env().Timeouts.LoadBalancer, "an ingress IP and the cleanup finalizer", ServiceChecks(HasIngress, HasFinalizer(true)))
			if err != nil {
				return err
			}
			ginkgo.AddReportEntry("load balancer ingress after creation", time.Since(start).Round(time.Millisecond).String())
			framework.Logf("Service %s/%s got ingress %v after %s", s.Namespace, s.Name, s.Status.LoadBalancer.Ingress, time.Since(start).Round(time.Millisecond))
			return cloudLoadBalancerMatches(ctx, f.ClientSet, s)
		})
	})

	it(specs.LBUDP, Needs(LateLBInspector), func(ctx context.Context) {
		provision(ctx, f, createService(ctx, f.ClientSet, f.Namespace.Name, udp(53)))
	})

	it(specs.LBMixedProtocol, Needs(LateLBInspector), func(ctx context.Context) {
		provision(ctx, f, createService(ctx, f.ClientSet, f.Namespace.Name, tcp(53), udp(53)))
	})

	it(specs.LBPortChange, Needs(LateLBInspector), func(ctx context.Context) {
		s, ok := provision(ctx, f, createService(ctx, f.ClientSet, f.Namespace.Name, tcp(80)))
		if !ok {
			return
		}
		ip := ingressOf(s)

		ginkgo.By("changing the port to 8080 and moving the node port")
		s = updateService(ctx, f.ClientSet, s, func(s *v1.Service) {
			s.Spec.Ports[0].Port = 8080
			s.Spec.Ports[0].NodePort = otherNodePort(s.Spec.Ports[0].NodePort)
		})
		expectCloudLoadBalancer(ctx, f.ClientSet, s)
		waitService(ctx, f.ClientSet, s, "the same ingress IP", func(s *v1.Service) error {
			if err := HasIngress(s); err != nil {
				return err
			}
			if got := ingressOf(s); got != ip {
				return fmt.Errorf("Service %s/%s: expected ingress %s kept across the port change, actual %s", s.Namespace, s.Name, ip, got)
			}
			return nil
		})
	})

	// Serial: each step must be followed for its own node change. Beside
	// other specs, their nodes' changes would make the service controller
	// sync anyway, and a CCM that misses this one would pass (OpenStack's
	// known difference, a joining node left out of the pools until the
	// next node change, was seen not to hold in parallel).
	it(specs.LBBackends, framework.WithSerial(), Needs(LateLBInspector, NeedNodePool), func(ctx context.Context) {
		pool := nodePool()
		s, ok := provision(ctx, f, createService(ctx, f.ClientSet, f.Namespace.Name, tcp(80)))
		if !ok {
			return
		}

		// Each step goes on from where the one before left the nodes,
		// whether or not the cloud followed: a known difference in one
		// step leaves the others asserting.
		name := "lb-" + rand.String(5)
		step(ctx, f, providers.StepJoin, func(ctx context.Context) error {
			addBackendNode(ctx, pool, name)
			if err := nodewait.For(ctx, f.ClientSet, env().Timeouts.NodeInit, "the CCM to initialize the node", []string{name}, nodewait.Initialized); err != nil {
				return err
			}
			return cloudLoadBalancerMatches(ctx, f.ClientSet, s)
		})

		step(ctx, f, providers.StepExclude, func(ctx context.Context) error {
			ginkgo.By("labelling node " + name + " " + v1.LabelNodeExcludeBalancers)
			_, err := f.ClientSet.CoreV1().Nodes().Patch(ctx, name, "application/merge-patch+json",
				[]byte(`{"metadata":{"labels":{"`+v1.LabelNodeExcludeBalancers+`":"true"}}}`), metav1.PatchOptions{})
			if err != nil {
				return err
			}
			if err := cloudLoadBalancerMatches(ctx, f.ClientSet, s); err != nil {
				return err
			}
			return cloudLoadBalancerHolds(ctx, f.ClientSet, s, exclusionHold)
		})

		step(ctx, f, providers.StepLeave, func(ctx context.Context) error {
			ginkgo.By("removing the label from node " + name)
			_, err := f.ClientSet.CoreV1().Nodes().Patch(ctx, name, "application/merge-patch+json",
				[]byte(`{"metadata":{"labels":{"`+v1.LabelNodeExcludeBalancers+`":null}}}`), metav1.PatchOptions{})
			if err != nil {
				return err
			}
			if err := cloudLoadBalancerMatches(ctx, f.ClientSet, s); err != nil {
				return err
			}
			ginkgo.By("deleting node " + name)
			if err := pool.Remove(ctx, name); err != nil {
				return err
			}
			return cloudLoadBalancerMatches(ctx, f.ClientSet, s)
		})
	})

	// The service controller hands the CCM every node of the cluster it
	// does not exclude by label or taint, a node of another owner too:
	// a CCM that fails on one (OpenStack's subnet autodetection and its
	// security groups read every provider ID as its own) fails every
	// load balancer of the cluster. The CCM's own nodes must all be
	// backends; the other owner's machine is not its cloud's. Serial: the
	// node would reach every load balancer of the specs beside it.
	it(specs.LBForeignNode, framework.WithSerial(), Needs(LateLBInspector), func(ctx context.Context) {
		name := "foreign-" + rand.String(5)
		providerID := foreignProviderID(name)
		ginkgo.By(fmt.Sprintf("registering node %s, with provider ID %s, as another owner's", name, providerID))
		registerForeignNode(ctx, f.ClientSet, name, providerID)
		provision(ctx, f, createService(ctx, f.ClientSet, f.Namespace.Name, tcp(80)))
	})

	it(specs.LBHealthCheckPort, Needs(LateLBInspector), func(ctx context.Context) {
		s := newService(f.Namespace.Name, tcp(80))
		s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
		s = create(ctx, f.ClientSet, s)
		if s.Spec.HealthCheckNodePort == 0 {
			framework.Failf("Service %s/%s: expected a healthCheckNodePort allocated for externalTrafficPolicy=Local, actual 0", s.Namespace, s.Name)
		}
		provision(ctx, f, s)
	})

	it(specs.LBSourceRanges, Needs(LateLBInspector), func(ctx context.Context) {
		s := newService(f.Namespace.Name, tcp(80))
		s.Spec.LoadBalancerSourceRanges = []string{"127.0.0.1/32", "127.0.100.0/24"}
		provision(ctx, f, create(ctx, f.ClientSet, s))
	})

	it(specs.LBSessionAffinity, Needs(LateLBInspector), func(ctx context.Context) {
		s := newService(f.Namespace.Name, tcp(80))
		s.Spec.SessionAffinity = v1.ServiceAffinityClientIP
		// Not the API server's default of three hours, so that a cloud
		// that keeps its own default is seen to.
		s.Spec.SessionAffinityConfig = &v1.SessionAffinityConfig{ClientIP: &v1.ClientIPConfig{TimeoutSeconds: new(int32(affinitySeconds))}}
		s, ok := provision(ctx, f, create(ctx, f.ClientSet, s))
		if !ok {
			return
		}
		// The service controller syncs a Service whose sessionAffinity
		// changed (k8s.io/cloud-provider's needsUpdate); a CCM that sets
		// affinity only when it creates the load balancer leaves it on.
		ginkgo.By("switching session affinity off")
		s = updateService(ctx, f.ClientSet, s, func(s *v1.Service) {
			s.Spec.SessionAffinity = v1.ServiceAffinityNone
			s.Spec.SessionAffinityConfig = nil
		})
		step(ctx, f, providers.StepSwitch, func(ctx context.Context) error { return cloudLoadBalancerMatches(ctx, f.ClientSet, s) })
	})

	it(specs.LBIPMode, Needs(LateLBInspector), func(ctx context.Context) { proxyProtocol(ctx, f) })

	it(specs.LBDualStack, Needs(NeedDualStackServices, LateLBInspector), func(ctx context.Context) {
		s := newService(f.Namespace.Name, tcp(80))
		s.Spec.IPFamilyPolicy = new(v1.IPFamilyPolicyRequireDualStack)
		s = create(ctx, f.ClientSet, s)
		if len(s.Spec.IPFamilies) != 2 {
			framework.Failf("Service %s/%s: expected ipFamilies of both families with ipFamilyPolicy RequireDualStack, actual %v", s.Namespace, s.Name, s.Spec.IPFamilies)
		}
		step(ctx, f, providers.StepProvision, func(ctx context.Context) error {
			got, err := WaitForService(ctx, f.ClientSet, s.Namespace, s.Name, env().Timeouts.LoadBalancer, "an ingress IP of each family", HasDualStackIngress)
			if err != nil {
				return err
			}
			return cloudLoadBalancerMatches(ctx, f.ClientSet, got)
		})
	})

	it(specs.LBNoNodePorts, Needs(LateLBInspector), func(ctx context.Context) {
		s := newService(f.Namespace.Name, tcp(80))
		s.Spec.AllocateLoadBalancerNodePorts = new(false)
		s = create(ctx, f.ClientSet, s)
		if np := s.Spec.Ports[0].NodePort; np != 0 {
			framework.Failf("Service %s/%s: expected no node port with allocateLoadBalancerNodePorts=false, actual %d", s.Namespace, s.Name, np)
		}
		provision(ctx, f, s)
	})

	it(specs.LBClass, Needs(LateLBInspector), func(ctx context.Context) {
		s := newService(f.Namespace.Name, tcp(80))
		s.Spec.LoadBalancerClass = new("example.com/not-this-ccm")
		s = create(ctx, f.ClientSet, s)
		// A Service without a class, made after it, gets its ingress only
		// once the CCM's service controller has come to it: by then the
		// one with the class has been seen too. Waiting a fixed time
		// instead would pass against a CCM that is only slow.
		ginkgo.By("provisioning a Service without a class after it, to know the CCM has seen both")
		waitService(ctx, f.ClientSet, createService(ctx, f.ClientSet, f.Namespace.Name, tcp(80)), "an ingress IP for the Service without a class", HasIngress)
		ginkgo.By("checking the CCM left the Service with the class alone")
		gomega.Consistently(ctx, func(ctx context.Context) error {
			cur, err := f.ClientSet.CoreV1().Services(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			return ServiceChecks(NoIngress, HasFinalizer(false))(cur)
		}).WithTimeout(env().Timeouts.Settle).WithPolling(time.Second).Should(gomega.Succeed())
		insp, ok := lbInspector()
		if !ok {
			ginkgo.Skip(lateLBReason(env().Cluster.Profile.Name))
		}
		lbs, err := insp.LoadBalancers(ctx)
		framework.ExpectNoError(err)
		if lb, err := LoadBalancerOf(lbs, s); err == nil {
			framework.Failf("Service %s/%s has loadBalancerClass %s: expected no cloud load balancer, actual %s (%s)", s.Namespace, s.Name, *s.Spec.LoadBalancerClass, lb.Name, lb.IP)
		}
	})

	it(specs.LBTypeChange, Needs(LateLBInspector), func(ctx context.Context) {
		s, ok := provision(ctx, f, createService(ctx, f.ClientSet, f.Namespace.Name, tcp(80)))
		if !ok {
			return
		}
		s = updateService(ctx, f.ClientSet, s, func(s *v1.Service) {
			s.Spec.Type = v1.ServiceTypeClusterIP
			for i := range s.Spec.Ports {
				s.Spec.Ports[i].NodePort = 0
			}
		})
		s = waitService(ctx, f.ClientSet, s, "no ingress and no finalizer", ServiceChecks(NoIngress, HasFinalizer(false)))
		expectNoCloudLoadBalancer(ctx, s)
	})

	// Serial: the fault fails every load balancer the cloud is asked
	// for, other specs' too.
	it(specs.LBFailedCreation, framework.WithSerial(), Needs(LateLBInspector, NeedFaults), func(ctx context.Context) {
		fi := env().Cluster.Cloud.(providers.FaultInjector)
		const msg = "injected by the harness: load balancer quota exceeded"
		clear, err := fi.Fail(ctx, providers.OpEnsureLoadBalancer, msg)
		framework.ExpectNoError(err)
		ginkgo.DeferCleanup(clear, ginkgo.NodeTimeout(TeardownTimeout))
		s := createService(ctx, f.ClientSet, f.Namespace.Name, tcp(80))
		ginkgo.By("waiting for a SyncLoadBalancerFailed event")
		framework.ExpectNoError(WaitForCloud(ctx, env().Timeouts.LoadBalancer, "a SyncLoadBalancerFailed event naming the cloud's error", func(ctx context.Context) error {
			return hasEvent(ctx, f.ClientSet, s, "SyncLoadBalancerFailed", msg)
		}))
		ginkgo.By("clearing the fault")
		framework.ExpectNoError(clear(ctx))
		s = waitService(ctx, f.ClientSet, s, "an ingress IP after the cloud recovered", HasIngress)
		expectCloudLoadBalancer(ctx, f.ClientSet, s)
	})

	it(specs.LBDeleted, Needs(LateLBInspector), func(ctx context.Context) {
		s, ok := provision(ctx, f, createService(ctx, f.ClientSet, f.Namespace.Name, tcp(80)))
		if !ok {
			return
		}
		framework.ExpectNoError(f.ClientSet.CoreV1().Services(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}))
		waitServiceGone(ctx, f.ClientSet, s)
		expectNoCloudLoadBalancer(ctx, s)
	})
})

// affinitySeconds is the session affinity timeout the affinity specs ask
// for.
const affinitySeconds = 60

func tcp(port int32) v1.ServicePort {
	return v1.ServicePort{Name: fmt.Sprintf("tcp-%d", port), Port: port, Protocol: v1.ProtocolTCP}
}

func udp(port int32) v1.ServicePort {
	return v1.ServicePort{Name: fmt.Sprintf("udp-%d", port), Port: port, Protocol: v1.ProtocolUDP}
}

func newService(ns string, ports ...v1.ServicePort) *v1.Service {
	name := "lb-" + rand.String(5)
	return &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: serviceAnnotations()},
		Spec: v1.ServiceSpec{
			Type:     v1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": name},
			Ports:    ports,
		},
	}
}

// serviceAnnotations are what the cloud's CCM needs on a LoadBalancer
// Service to make the kind of load balancer the cloud's config asks for.
func serviceAnnotations() map[string]string {
	if c := Cluster(); c != nil && c.Cloud != nil {
		if sa, ok := c.Cloud.(providers.ServiceAnnotator); ok {
			return maps.Clone(sa.ServiceAnnotations())
		}
	}
	return nil
}

// annotate is a service jig's tweak that adds serviceAnnotations.
func annotate(s *v1.Service) {
	for k, v := range serviceAnnotations() {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[k] = v
	}
}

func createService(ctx context.Context, cs kubernetes.Interface, ns string, ports ...v1.ServicePort) *v1.Service {
	return create(ctx, cs, newService(ns, ports...))
}

// create makes the Service and, after the spec, deletes it and waits until
// it is gone: its finalizer holds it until the CCM removed the cloud LB.
func create(ctx context.Context, cs kubernetes.Interface, s *v1.Service) *v1.Service {
	created, err := cs.CoreV1().Services(s.Namespace).Create(ctx, s, metav1.CreateOptions{})
	framework.ExpectNoError(err, "create Service %s/%s", s.Namespace, s.Name)
	ginkgo.DeferCleanup(func(ctx context.Context) {
		err := cs.CoreV1().Services(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		framework.ExpectNoError(err)
		waitServiceGone(ctx, cs, created)
	}, ginkgo.NodeTimeout(TeardownTimeout))
	return created
}

func updateService(ctx context.Context, cs kubernetes.Interface, s *v1.Service, change func(*v1.Service)) *v1.Service {
	var out *v1.Service
	err := WaitForCloud(ctx, 30*time.Second, "an update of Service "+s.Name, func(ctx context.Context) error {
		cur, err := cs.CoreV1().Services(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(cur)
		out, err = cs.CoreV1().Services(s.Namespace).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	framework.ExpectNoError(err)
	return out
}

func waitService(ctx context.Context, cs kubernetes.Interface, s *v1.Service, what string, check ServiceCheck) *v1.Service {
	got, err := WaitForService(ctx, cs, s.Namespace, s.Name, env().Timeouts.LoadBalancer, what, check)
	framework.ExpectNoError(err)
	return got
}

func waitServiceGone(ctx context.Context, cs kubernetes.Interface, s *v1.Service) {
	framework.ExpectNoError(WaitForCloud(ctx, env().Timeouts.LoadBalancer, fmt.Sprintf("Service %s/%s to be deleted (its finalizer waits for the CCM)", s.Namespace, s.Name),
		func(ctx context.Context) error {
			cur, err := cs.CoreV1().Services(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			return fmt.Errorf("Service %s/%s: expected deleted, actual: still present with finalizers %v", s.Namespace, s.Name, cur.Finalizers)
		}))
}

// otherNodePort picks a node port beside np. Another Service may hold it;
// the API server then refuses the update and updateService retries it until
// its timeout, so the spec fails saying the update could not be made.
func otherNodePort(np int32) int32 {
	if np >= 32767 {
		return 30000 + np%100
	}
	return np + 1
}

func lbInspector() (providers.LoadBalancerInspector, bool) {
	c := env().Cluster.Cloud
	if c == nil {
		return nil, false
	}
	insp, ok := c.Inspector().(providers.LoadBalancerInspector)
	return insp, ok && insp != nil
}

// provision is the step in which the Service gets an ingress and the
// cloud a load balancer that matches it: the Service as it then was, and
// whether the step passed (a known difference of the CCM's may fail it).
func provision(ctx context.Context, f *framework.Framework, s *v1.Service) (*v1.Service, bool) {
	ok := step(ctx, f, providers.StepProvision, func(ctx context.Context) error {
		got, err := WaitForService(ctx, f.ClientSet, s.Namespace, s.Name, env().Timeouts.LoadBalancer, "an ingress IP", HasIngress)
		if err != nil {
			return err
		}
		s = got
		return cloudLoadBalancerMatches(ctx, f.ClientSet, s)
	})
	return s, ok
}

// expectCloudLoadBalancer waits until the cloud's LB matches the Service.
func expectCloudLoadBalancer(ctx context.Context, cs kubernetes.Interface, s *v1.Service) {
	framework.ExpectNoError(cloudLoadBalancerMatches(ctx, cs, s))
}

// cloudLoadBalancerMatches waits until the cloud's LB matches the
// Service, or skips the cloud-side part, saying so, where the cloud
// cannot be asked.
func cloudLoadBalancerMatches(ctx context.Context, cs kubernetes.Interface, s *v1.Service) error {
	return WaitForCloud(ctx, env().Timeouts.LoadBalancer, "the cloud load balancer to match Service "+s.Namespace+"/"+s.Name,
		loadBalancerMatch(cs, s))
}

// exclusionHold is how long the exclude step keeps its label once the
// cloud matches, the cloud asked every second that it still does. The
// service controller coalesces node syncs: a label set and removed at
// once can reach it as no change at all. A CCM that left a joining node
// out of its pools (OpenStack's known difference at join) then matched
// the exclusion without a sync, and kept the node out through the leave
// step too (a cold CI run of e94c5b2, OCCM v1.35.0: one "Syncing backends"
// for both label changes, no update, 2 minutes without the node).
const exclusionHold = 5 * time.Second

// cloudLoadBalancerHolds checks that the cloud's load balancer keeps
// matching Service s for d, and fails at the first poll that it does not.
func cloudLoadBalancerHolds(ctx context.Context, cs kubernetes.Interface, s *v1.Service, d time.Duration) error {
	ginkgo.By(fmt.Sprintf("checking the cloud load balancer of Service %s/%s keeps matching it for %s", s.Namespace, s.Name, d))
	match := loadBalancerMatch(cs, s)
	for end := time.Now().Add(d); time.Now().Before(end); {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		if err := match(ctx); err != nil {
			return fmt.Errorf("the cloud load balancer matched Service %s/%s, then within %s no longer: %w", s.Namespace, s.Name, d, err)
		}
	}
	return nil
}

// loadBalancerMatch checks the cloud's load balancer against Service s as
// it is now, and the nodes eligible as its backends.
func loadBalancerMatch(cs kubernetes.Interface, s *v1.Service) func(context.Context) error {
	insp, ok := lbInspector()
	if !ok {
		ginkgo.Skip(lateLBReason(env().Cluster.Profile.Name))
	}
	return func(ctx context.Context) error {
		cur, err := cs.CoreV1().Services(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		lbs, err := insp.LoadBalancers(ctx)
		if err != nil {
			return err
		}
		lb, err := LoadBalancerOf(lbs, cur)
		if err != nil {
			return err
		}
		return LoadBalancerMatches(cur, EligibleNodes(nodes.Items, env().Cluster.Profile.ProviderIDScheme), lb)
	}
}

func expectNoCloudLoadBalancer(ctx context.Context, s *v1.Service) {
	insp, ok := lbInspector()
	if !ok {
		ginkgo.Skip(lateLBReason(env().Cluster.Profile.Name))
	}
	framework.ExpectNoError(WaitForCloud(ctx, env().Timeouts.LoadBalancer, "the cloud load balancer of Service "+s.Namespace+"/"+s.Name+" to be deleted",
		func(ctx context.Context) error {
			lbs, err := insp.LoadBalancers(ctx)
			if err != nil {
				return err
			}
			if lb, err := LoadBalancerOf(lbs, s); err == nil {
				return fmt.Errorf("Service %s/%s: expected its cloud load balancer deleted, actual: %s (%s) still there", s.Namespace, s.Name, lb.Name, lb.IP)
			}
			return nil
		}))
}

func hasEvent(ctx context.Context, cs kubernetes.Interface, s *v1.Service, reason, substr string) error {
	evs, err := cs.CoreV1().Events(s.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + s.Name})
	if err != nil {
		return err
	}
	var seen []string
	for _, e := range evs.Items {
		if e.Reason == reason && strings.Contains(e.Message, substr) {
			return nil
		}
		seen = append(seen, e.Reason+": "+e.Message)
	}
	return fmt.Errorf("Service %s/%s: expected event %s mentioning %q, actual events %v", s.Namespace, s.Name, reason, substr, seen)
}

// deferLeakCheck checks, after the spec and its cleanups, that the cloud
// holds nothing no Service or Node owns.
func deferLeakCheck(cs kubernetes.Interface) {
	ginkgo.DeferCleanup(func(ctx context.Context) {
		c := env().Cluster.Cloud
		if c == nil || c.Inspector() == nil {
			return
		}
		framework.ExpectNoError(CheckNoLeaks(ctx, cs, c.Inspector(), env().Timeouts.LoadBalancer))
	}, ginkgo.NodeTimeout(TeardownTimeout))
}
