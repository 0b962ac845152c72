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

package existing

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/internal/filelock"
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
// each, powered through the cloud's own API, and no other node ever. The
// suite's parallel processes each have a lent of their own over the same
// nodes: a node is one process's while it holds the node's file lock in
// dir (the run's artifacts, which they share), and a terminated one is
// marked there for all of them.
type lent struct {
	guarded
	names []string
	// dir holds the nodes' locks and marks; "" lends within the process
	// only.
	dir string

	mu     sync.Mutex
	held   map[string]bool
	gone   map[string]bool
	unlock map[string]func()
}

// lendPoll is how often a spec asks again for a node other processes hold.
const lendPoll = time.Second

var _ cluster.NodeLender = (*lent)(nil)

// newLent checks that the cloud can power machines and that every named
// node is in the cluster, and says in one line what to fix.
//
// dir is where the suite's processes share the loans; the first process
// (not attach) starts it empty, the others (attach) join it.
func newLent(ctx context.Context, cs kubernetes.Interface, cloud providers.Cloud, names []string, dir string, attach bool) (*lent, error) {
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
	if dir != "" {
		if !attach {
			if err := os.RemoveAll(dir); err != nil {
				return nil, fmt.Errorf("existing cluster: the lent nodes' locks: %w", err)
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("existing cluster: the lent nodes' locks: %w", err)
		}
	}
	l := &lent{names: names, dir: dir, held: map[string]bool{}, gone: map[string]bool{}, unlock: map[string]func(){}}
	l.guarded = guarded{machines: power, allow: l.check, ended: l.ended}
	return l, nil
}

func (l *lent) Names() []string { return slices.Clone(l.names) }

// Lend gives the spec a node no spec holds and none terminated, waiting
// while other processes' specs hold every other one.
func (l *lent) Lend(ctx context.Context) (string, error) {
	for {
		name, busy, err := l.tryLend()
		if err != nil || name != "" {
			return name, err
		}
		if !busy {
			return "", fmt.Errorf("every node lent to the lifecycle specs (--lifecycle-nodes %s) is in use or was terminated: lend more", strings.Join(l.names, ","))
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("every node lent to the lifecycle specs (--lifecycle-nodes %s) is held by the suite's other processes' specs: %w", strings.Join(l.names, ","), context.Cause(ctx))
		case <-time.After(lendPoll):
		}
	}
}

// tryLend takes a free node, if there is one; busy says another process
// holds one that may come free.
func (l *lent) tryLend() (name string, busy bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.names {
		if l.held[n] || l.isGone(n) {
			continue
		}
		if l.dir == "" {
			l.held[n] = true
			return n, false, nil
		}
		unlock, err := filelock.TryLock(filepath.Join(l.dir, n+".lock"))
		if err != nil {
			return "", false, fmt.Errorf("lend node %s: %w", n, err)
		}
		if unlock == nil {
			busy = true
			continue
		}
		// Terminated by the process that held it last?
		if l.isGone(n) {
			unlock()
			continue
		}
		l.held[n], l.unlock[n] = true, unlock
		return n, false, nil
	}
	return "", busy, nil
}

// isGone tells whether the node's machine was terminated, by this process
// or, as its mark in dir says, another. l.mu is held.
func (l *lent) isGone(name string) bool {
	if !l.gone[name] && l.dir != "" {
		if _, err := os.Stat(filepath.Join(l.dir, name+".terminated")); err == nil {
			l.gone[name] = true
		}
	}
	return l.gone[name]
}

func (l *lent) Return(ctx context.Context, name string) error {
	l.mu.Lock()
	gone := l.gone[name]
	delete(l.held, name)
	unlock := l.unlock[name]
	delete(l.unlock, name)
	l.mu.Unlock()
	if unlock != nil {
		// Only once the machine is started again may another take it.
		defer unlock()
	}
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

// ended marks a terminated node's machine gone: never lent again, by any
// process.
func (l *lent) ended(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gone[name] = true
	if l.dir != "" {
		_ = os.WriteFile(filepath.Join(l.dir, name+".terminated"), nil, 0o644)
	}
}
