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

// Package existing is the runtime for a cluster someone else made, such as
// one in a real cloud: Up only connects to it, and Down removes nothing,
// since the specs delete what they create (their namespaces and the objects
// in them). The cloud is not the harness's to start or to shape: there is
// no node pool. Where the profile reaches its cloud (providers.Reached: a
// real cloud, or one someone else runs, asked with the environment's
// credentials) the specs ask it what is true, and the leak check lists
// what the specs left there; otherwise checks that need to ask the cloud
// are skipped. The lifecycle specs stop, start and terminate only the
// machines of nodes the user lends them (WithLifecycleNodes), through the
// cloud's own API, and the specs that add nodes make them only through
// the user's join hook (WithJoinHook).
package existing

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/reports"
)

// Runtime connects to the cluster of a kubeconfig.
type Runtime struct {
	kubeconfig     string
	lifecycleNodes []string
	joinHook       string
}

var (
	_ cluster.Runtime  = (*Runtime)(nil)
	_ cluster.Attacher = (*Runtime)(nil)
)

// New returns a runtime for the cluster kubeconfig names.
func New(kubeconfig string, opts ...Option) *Runtime {
	r := &Runtime{kubeconfig: kubeconfig}
	for _, o := range opts {
		o(r)
	}
	return r
}

// reachTimeout bounds the first request: an unreachable cluster is said at
// once.
const reachTimeout = 15 * time.Second

func (r *Runtime) connect(ctx context.Context, spec cluster.Spec, attach bool) (*cluster.Cluster, error) {
	if r.kubeconfig == "" {
		return nil, fmt.Errorf("existing cluster: no kubeconfig given (set --kubeconfig or $KUBECONFIG to the cluster's)")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", r.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("existing cluster: kubeconfig %s: %w", r.kubeconfig, err)
	}
	cfg.Timeout = reachTimeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("existing cluster: kubeconfig %s: %w", r.kubeconfig, err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("existing cluster at %s (kubeconfig %s) does not answer: %v; check that it is up and the kubeconfig is its", cfg.Host, r.kubeconfig, err)
	}
	holder, err := ccmRuns(ctx, cs, time.Now())
	if err != nil {
		return nil, err
	}
	ccm, err := leaderPod(ctx, cs, holder)
	if err != nil {
		return nil, err
	}
	cloud, err := reach(ctx, spec, attach)
	if err != nil {
		return nil, err
	}
	c := &cluster.Cluster{
		Name:              spec.Name,
		Kubeconfig:        r.kubeconfig,
		KubernetesVersion: v.GitVersion,
		Profile:           spec.Profile,
		Cloud:             cloud,
	}
	if c.DataPlane, err = dataPlane(ctx, cs); err != nil {
		return nil, err
	}
	c.DualStackServices = dualStackServices(ctx, cs)
	if c.DataPlane {
		logf(spec, "  data path: the nodes run pods")
	} else {
		logf(spec, "  data path: none, the nodes are kwok's (%s): the data path specs skip", cluster.KwokNodeLabel)
	}
	if r.joinHook != "" {
		j, err := newJoined(cs, cloud, r.joinHook)
		if err != nil {
			return nil, err
		}
		c.Nodes, c.NodesByHook = j, true
		logf(spec, "  new nodes: made by the join hook %q", r.joinHook)
	}
	if len(r.lifecycleNodes) > 0 {
		l, err := newLent(ctx, cs, cloud, r.lifecycleNodes, filepath.Join(spec.ArtifactsDir, reports.LentNodesDir), attach)
		if err != nil {
			return nil, err
		}
		c.LentNodes = l
		logf(spec, "  lifecycle specs: may stop, start and terminate the machines of %s", strings.Join(r.lifecycleNodes, ", "))
	}
	switch {
	case ccm != nil:
		c.RunningCCM = ccm
		logf(spec, "  CCM: pod %s leads", ccm)
	default:
		// A CCM on a machine of its own (as `ccm-harness up` runs one)
		// can be asked nothing through the cluster.
		logf(spec, "  CCM: %s leads, in no pod of the cluster: which controllers it runs is not checked", holder)
	}
	return c, nil
}

// dataPlane tells whether the cluster's nodes run pods and carry traffic:
// they do unless kwok plays their kubelets (a cluster `ccm-harness up`
// made), which it does for every node of such a cluster.
func dataPlane(ctx context.Context, cs kubernetes.Interface) (bool, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, fmt.Errorf("existing cluster: list its nodes: %w", err)
	}
	for _, n := range nodes.Items {
		if _, kwok := n.Labels[cluster.KwokNodeLabel]; kwok {
			return false, nil
		}
	}
	return len(nodes.Items) > 0, nil
}

// dualStackServices says whether the cluster's API server gives Services
// addresses of both families: its default ServiceCIDR (networking.k8s.io/v1,
// GA in v1.33), named kubernetes, has a range of each. A cluster that
// cannot say counts as single-stack, and the dual-stack specs skip.
func dualStackServices(ctx context.Context, cs kubernetes.Interface) bool {
	sc, err := cs.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
	return err == nil && len(sc.Spec.CIDRs) > 1
}

func logf(spec cluster.Spec, format string, args ...any) {
	if spec.Logf != nil {
		spec.Logf(format, args...)
	}
}

// Up checks the cluster answers, and connects to the profile's cloud if
// it reaches one.
func (r *Runtime) Up(ctx context.Context, spec cluster.Spec) (*cluster.Cluster, error) {
	return r.connect(ctx, spec, false)
}

// Attach is Up: of an existing cluster the harness holds nothing but its
// kubeconfig and the environment, which every process of a parallel suite
// is given.
func (r *Runtime) Attach(ctx context.Context, spec cluster.Spec) (*cluster.Cluster, error) {
	return r.connect(ctx, spec, true)
}

// reach is the profile's cloud, connected, where the profile reaches one;
// nil where its cloud is a simulator that only the runtime which made the
// cluster runs.
func reach(ctx context.Context, spec cluster.Spec, attach bool) (providers.Cloud, error) {
	cloud, err := spec.Profile.NewCloud(spec.ProviderConfig)
	if err != nil {
		return nil, err
	}
	r := providers.ReachedOf(cloud)
	if r == nil {
		return nil, nil
	}
	env := providers.CloudEnv{LogDir: filepath.Join(spec.ArtifactsDir, reports.LogsDir)}
	if a, ok := cloud.(providers.Attacher); ok && attach {
		err = a.Attach(ctx, env)
	} else {
		err = cloud.Start(ctx, env)
	}
	if err != nil {
		return nil, err
	}
	logf(spec, "  cloud: %s", r.Where())
	return cloud, nil
}

// Down leaves the cluster as it was found.
func (r *Runtime) Down(context.Context, string) error { return nil }
