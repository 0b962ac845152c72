// Package existing is the runtime for a cluster someone else made, such as
// one in a real cloud: Up only connects to it, and Down removes nothing,
// since the specs delete what they create (their namespaces and the objects
// in them). The cloud is not the harness's to start or to shape: there is
// no node pool, and checks that need to ask the cloud are skipped.
package existing

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/ccm-harness/cluster"
)

// Runtime connects to the cluster of a kubeconfig.
type Runtime struct {
	kubeconfig string
}

var (
	_ cluster.Runtime  = (*Runtime)(nil)
	_ cluster.Attacher = (*Runtime)(nil)
)

// New returns a runtime for the cluster kubeconfig names.
func New(kubeconfig string) *Runtime { return &Runtime{kubeconfig: kubeconfig} }

// reachTimeout bounds the first request: an unreachable cluster is said at
// once.
const reachTimeout = 15 * time.Second

// Up checks the cluster answers and returns it.
func (r *Runtime) Up(ctx context.Context, spec cluster.Spec) (*cluster.Cluster, error) {
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
	return &cluster.Cluster{
		Name:              spec.Name,
		Kubeconfig:        r.kubeconfig,
		KubernetesVersion: v.GitVersion,
		Profile:           spec.Profile,
	}, nil
}

// Attach is Up: of an existing cluster the harness holds nothing but its
// kubeconfig, which every process of a parallel suite is given.
func (r *Runtime) Attach(ctx context.Context, spec cluster.Spec) (*cluster.Cluster, error) {
	return r.Up(ctx, spec)
}

// Down leaves the cluster as it was found.
func (r *Runtime) Down(context.Context, string) error { return nil }
