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
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/test/e2e/framework"
	e2edaemonset "k8s.io/kubernetes/test/e2e/framework/daemonset"
	e2eservice "k8s.io/kubernetes/test/e2e/framework/service"
	imageutils "k8s.io/kubernetes/test/utils/image"
)

// Upstream's "should not have connectivity disruption during rolling
// update with externalTrafficPolicy=Cluster" and "…=Local" in one spec:
// one DaemonSet of backends behind two load balancers, one per policy,
// each asked at a steady rate while the DaemonSet rolls. A backend pod
// goes on serving for the drain time after it is told to stop (netexec's
// --delay-shutdown), so a load balancer that stops sending new
// connections to a node as its endpoints go loses none; under Local, one
// that keeps sending to a node with no endpoint left (no health check,
// or one it does not ask) loses those requests.
//
// Upstream rolls five times, each pod draining 60 s; here twice, draining
// Timeouts.Drain: fakecloud checks every second, and two rollouts of two
// nodes take about a minute rather than ten. The threshold is upstream's:
// at least 95 % of the requests of each rollout answered. Unlike
// upstream's, a new pod is ready only rolloutWarmUp after it starts, as an
// application that warms up is: kind starts a pod in about a second, and
// a node without an endpoint for that second alone cost a load balancer
// that never checks too few requests (13 of 171, 92.4 %) to tell it from
// one that does, surely. A load balancer that checks waits for the probe.
const (
	rollouts          = 2
	rolloutMinSuccess = 0.95
	rolloutWarmUp     = 3 // seconds
	// rolloutRequestEvery paces the requests: at a steady rate, not one
	// after another, so that a request that hangs until its timeout does
	// not stop the others being sent (and counted).
	rolloutRequestEvery = 50 * time.Millisecond
)

func rollingUpdate(ctx context.Context, f *framework.Framework) {
	cs, ns := f.ClientSet, f.Namespace.Name
	name := "datapath-rolling"
	labels := map[string]string{"name": name}
	delay := max(1, int(env().Timeouts.Drain.Round(time.Second).Seconds()))
	ds := e2edaemonset.NewDaemonSet(name, imageutils.GetE2EImage(imageutils.Agnhost), labels, nil, nil,
		[]v1.ContainerPort{{ContainerPort: 80}}, "netexec", "--http-port=80", fmt.Sprintf("--delay-shutdown=%d", delay))
	one := intstr.FromInt32(1)
	ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{
		Type: appsv1.RollingUpdateDaemonSetStrategyType, RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &one},
	}
	// Killed only after its drain, with time to spare.
	ds.Spec.Template.Spec.TerminationGracePeriodSeconds = new(int64(delay + 30))
	ds.Spec.Template.Spec.Containers[0].ReadinessProbe = &v1.Probe{
		ProbeHandler:        v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(80)}},
		InitialDelaySeconds: rolloutWarmUp, PeriodSeconds: 1,
	}
	// Only on the initial nodes (lent ones are not among them): the
	// lifecycle specs beside this one stop, terminate and add nodes, and a
	// DaemonSet pod on a node powered off never becomes available. A term
	// for each: a metadata.name field selector takes one value.
	var terms []v1.NodeSelectorTerm
	for _, n := range initialNodes() {
		terms = append(terms, v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{n}}}})
	}
	ds.Spec.Template.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms},
	}}
	nodeNames := twoNodesOrMore(ctx, f, func(ctx context.Context) []string { return e2edaemonset.SchedulableNodes(ctx, cs, ds) })
	if len(nodeNames) < 2 {
		framework.Failf("%d node runs pods after %v: with one, a rollout leaves no backend to serve: expected two at least", len(nodeNames), f.Timeouts.PodStart)
	}
	ds, err := cs.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{})
	framework.ExpectNoError(err, "create the DaemonSet of backend pods")
	// Starting pods is the kubelets' work, not the CCM's: the framework's
	// bound for it, not the load balancer's (at --wait-scale=0.5, a minute
	// was too little for a kind cluster beside two others in make controls).
	framework.ExpectNoError(wait.PollUntilContextTimeout(ctx, framework.Poll, f.Timeouts.PodStart, true,
		e2edaemonset.CheckDaemonPodOnNodes(f, ds, nodeNames)),
		"waiting %s for a backend pod available on each of %s", f.Timeouts.PodStart, strings.Join(nodeNames, ", "))

	var probes []*disruption
	for _, policy := range []v1.ServiceExternalTrafficPolicy{v1.ServiceExternalTrafficPolicyCluster, v1.ServiceExternalTrafficPolicyLocal} {
		jig := e2eservice.NewTestJig(cs, ns, name+"-"+strings.ToLower(string(policy)))
		jig.Labels = labels
		s, err := jig.CreateLoadBalancerService(ctx, env().Timeouts.LoadBalancer, func(s *v1.Service) {
			annotate(s)
			s.Spec.ExternalTrafficPolicy = policy
		})
		framework.ExpectNoError(err, "create the Service with externalTrafficPolicy %s", policy)
		ip := ingressIP(ctx, s)
		e2eservice.TestReachableHTTP(ctx, ip, 80, env().Timeouts.LoadBalancer)
		probes = append(probes, &disruption{service: s, policy: policy, ip: ip})
	}

	ginkgo.By(fmt.Sprintf("asking both load balancers every %s while the DaemonSet rolls %d times", rolloutRequestEvery, rollouts))
	probeCtx, stop := context.WithCancel(ctx)
	defer stop()
	for _, p := range probes {
		go p.run(probeCtx)
	}
	for i := 1; i <= rollouts; i++ {
		version := strconv.Itoa(i)
		patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":%q,"env":[{"name":"VERSION","value":%q}]}]}}}}`,
			ds.Spec.Template.Spec.Containers[0].Name, version)
		ds, err = cs.AppsV1().DaemonSets(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
		framework.ExpectNoError(err, "roll the DaemonSet (rollout %d of %d)", i, rollouts)
		framework.ExpectNoError(WaitForCloud(ctx, rolloutTimeout(len(nodeNames)),
			fmt.Sprintf("rollout %d of %d: a new backend pod available on each of %s", i, rollouts, strings.Join(nodeNames, ", ")),
			func(ctx context.Context) error { return rolledOut(ctx, f, ds, version, len(nodeNames)) }))
		var failures []string
		for _, p := range probes {
			if err := p.verdict(i); err != nil {
				failures = append(failures, err.Error())
			}
		}
		if len(failures) > 0 {
			framework.Fail(strings.Join(failures, "; "))
		}
	}
}

// rolloutTimeout bounds one rollout of a DaemonSet on n nodes. A rollout is
// the DaemonSet controller's and the kubelets' work, not the CCM's, and
// goes one node at a time: the old pod drains, then the new one starts and
// warms up. So each node has Timeouts.LoadBalancer (the bound of a
// reconcile) with its drain and warm-up on top; a bound of one
// Timeouts.LoadBalancer for the whole rollout failed a negative control
// on kind (--wait-scale=0.5: 1 minute) before the step it is about, with
// one of two nodes rolled, beside two other controls' clusters.
func rolloutTimeout(n int) time.Duration {
	return time.Duration(n) * (env().Timeouts.LoadBalancer + env().Timeouts.Drain + rolloutWarmUp*time.Second)
}

// rolledOut says whether want of ds's pods run its template of the given
// VERSION, available and not going.
func rolledOut(ctx context.Context, f *framework.Framework, ds *appsv1.DaemonSet, version string, want int) error {
	pods, err := f.ClientSet.CoreV1().Pods(ds.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	ready := 0
	for _, pod := range pods.Items {
		if !metav1.IsControlledBy(&pod, ds) || pod.DeletionTimestamp != nil {
			continue
		}
		for _, e := range pod.Spec.Containers[0].Env {
			if e.Name == "VERSION" && e.Value == version && podutil.IsPodAvailable(&pod, ds.Spec.MinReadySeconds, metav1.Now()) {
				ready++
			}
		}
	}
	if ready != want {
		return fmt.Errorf("DaemonSet %s/%s: expected %d pods of VERSION %s available, actual %d", ds.Namespace, ds.Name, want, version, ready)
	}
	return nil
}

// disruption asks one load balancer at a steady rate and counts the
// answers by the rollout a request was sent in.
type disruption struct {
	service *v1.Service
	policy  v1.ServiceExternalTrafficPolicy
	ip      string

	mu     sync.Mutex
	rounds []*round // the current one last
}

// round is the count of one rollout's requests.
type round struct {
	inFlight     sync.WaitGroup
	sent, failed int
	first        error
}

func (d *disruption) run(ctx context.Context) {
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	url := "http://" + net.JoinHostPort(d.ip, "80") + "/echo?msg=rolling"
	tick := time.NewTicker(rolloutRequestEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		d.mu.Lock()
		if len(d.rounds) == 0 {
			d.rounds = append(d.rounds, &round{})
		}
		r := d.rounds[len(d.rounds)-1]
		r.sent++
		r.inFlight.Add(1)
		d.mu.Unlock()
		go func() {
			defer r.inFlight.Done()
			body, err := get(ctx, client, url)
			if err == nil && body != "rolling" {
				err = fmt.Errorf("GET %s: answered %q", url, body)
			}
			if err == nil || ctx.Err() != nil {
				return
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			r.failed++
			if r.first == nil {
				r.first = err
			}
		}()
	}
}

// verdict ends rollout i's round (its requests still in flight are
// waited for) and says whether enough of them were answered.
func (d *disruption) verdict(i int) error {
	d.mu.Lock()
	if len(d.rounds) == 0 {
		d.rounds = append(d.rounds, &round{})
	}
	r := d.rounds[len(d.rounds)-1]
	d.rounds = append(d.rounds, &round{})
	d.mu.Unlock()
	r.inFlight.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.service
	if r.sent == 0 {
		return fmt.Errorf("Service %s/%s (externalTrafficPolicy %s): no request was sent through %s during rollout %d of %d, so there is nothing to judge", s.Namespace, s.Name, d.policy, d.ip, i, rollouts)
	}
	rate := float64(r.sent-r.failed) / float64(r.sent)
	framework.Logf("Service %s/%s (externalTrafficPolicy %s), rollout %d of %d: %d requests, %d failed", s.Namespace, s.Name, d.policy, i, rollouts, r.sent, r.failed)
	if rate < rolloutMinSuccess {
		return fmt.Errorf("Service %s/%s (externalTrafficPolicy %s): expected at least %.0f%% of the requests through %s answered while the backend pods rolled (rollout %d of %d), actual %.1f%%: %d of %d failed (first: %v)",
			s.Namespace, s.Name, d.policy, rolloutMinSuccess*100, d.ip, i, rollouts, rate*100, r.failed, r.sent, r.first)
	}
	return nil
}
