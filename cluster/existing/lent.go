package existing

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/providers"
)

// Option configures the runtime.
type Option func(*Runtime)

// WithLifecycleNodes lends the node-lifecycle specs these nodes: their
// machines may be stopped, started and terminated through the cloud's own
// API (a terminated one is gone for good). Without it those specs skip:
// on a cluster the harness did not make, they would destroy a machine no
// one gave them.
func WithLifecycleNodes(names ...string) Option {
	return func(r *Runtime) { r.lifecycleNodes = names }
}

// lent are the nodes a user lent the lifecycle specs: one spec at a time
// each, powered through the cloud's own API, and no other node ever.
type lent struct {
	guarded
	names []string

	mu   sync.Mutex
	held map[string]bool
	gone map[string]bool
}

var _ cluster.NodeLender = (*lent)(nil)

// newLent checks that the cloud can power machines and that every named
// node is in the cluster, and says in one line what to fix.
func newLent(ctx context.Context, cs kubernetes.Interface, cloud providers.Cloud, names []string) (*lent, error) {
	power := providers.PowerOf(cloud)
	if power == nil {
		return nil, fmt.Errorf("existing cluster: --lifecycle-nodes %s: the harness has no way to power those machines: give a profile that reaches the cluster's cloud (reach:, or an inspector plugin that answers stop, start and terminate)", strings.Join(names, ","))
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("existing cluster: list the nodes for --lifecycle-nodes: %w", err)
	}
	var have []string
	for _, n := range nodes.Items {
		have = append(have, n.Name)
	}
	for _, n := range names {
		if !slices.Contains(have, n) {
			return nil, fmt.Errorf("existing cluster: --lifecycle-nodes names node %s, which the cluster does not have (it has %s)", n, strings.Join(have, ", "))
		}
	}
	if len(names) == len(have) {
		return nil, fmt.Errorf("existing cluster: --lifecycle-nodes lends every node of the cluster (%s): keep at least one for the CCM and the other specs", strings.Join(names, ", "))
	}
	l := &lent{names: names, held: map[string]bool{}, gone: map[string]bool{}}
	l.guarded = guarded{machines: power, allow: l.check, ended: l.ended}
	return l, nil
}

func (l *lent) Names() []string { return slices.Clone(l.names) }

func (l *lent) Lend(context.Context) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.names {
		if !l.held[n] && !l.gone[n] {
			l.held[n] = true
			return n, nil
		}
	}
	return "", fmt.Errorf("every node lent to the lifecycle specs (--lifecycle-nodes %s) is in use or was terminated: lend more", strings.Join(l.names, ","))
}

func (l *lent) Return(ctx context.Context, name string) error {
	l.mu.Lock()
	gone := l.gone[name]
	delete(l.held, name)
	l.mu.Unlock()
	if gone {
		return nil
	}
	// Start is a no-op on a running machine: a spec that failed with it
	// stopped does not leave the user's machine down.
	return l.PowerOn(ctx, name)
}

// check refuses a node that was not lent, or not to this spec.
func (l *lent) check(name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Contains(l.names, name) {
		return fmt.Errorf("node %s was not lent to the lifecycle specs (--lifecycle-nodes %s): its machine is not the harness's to power", name, strings.Join(l.names, ","))
	}
	if l.gone[name] {
		return fmt.Errorf("node %s: its machine was terminated", name)
	}
	return nil
}

// ended marks a terminated node's machine gone: never lent again.
func (l *lent) ended(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gone[name] = true
}
