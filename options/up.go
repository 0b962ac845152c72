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

package options

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/providers"
)

// ClaimsTimeout is how long a CCM may take, once it has initialized the
// nodes, to show every controller its profile claims.
const ClaimsTimeout = 30 * time.Second

// Started is a cluster brought up by Up.
type Started struct {
	*cluster.Cluster
	// Initialized is how long the CCM took, after registration, to
	// initialize the initial nodes; zero if it was not waited for.
	Initialized time.Duration
	// NodeLatencies are how long after registration the wait saw each
	// initial node initialized.
	NodeLatencies []time.Duration
	// InitErr is why the CCM did not initialize them, where the caller
	// keeps such a cluster (KeepUninitialized).
	InitErr error
}

// UpOption changes how Up brings a cluster up.
type UpOption func(*upOptions)

type upOptions struct {
	detached          bool
	leased            bool
	keepUninitialized bool
	managers          []cluster.ManagerSpec
	nodes             *int
	onFailure         func(context.Context, *cluster.Cluster)
}

// Detached leaves the cluster running after this process exits, for a
// later `down` (ccm-harness up, kubetest2 --up alone).
func Detached() UpOption { return func(o *upOptions) { o.detached = true } }

// Leased runs the managers leading by a lease, as deployed ones do, for a
// cluster that another process judges as an existing one (which sees by
// the lease that a CCM runs); a detached cluster is leased too.
func Leased() UpOption { return func(o *upOptions) { o.leased = true } }

// KeepUninitialized keeps a cluster whose CCM does not initialize its
// nodes in time, with the reason in Started.InitErr: the suite's
// [node-init] spec then fails naming the nodes. Without it, such a
// cluster is taken down and Up fails.
func KeepUninitialized() UpOption { return func(o *upOptions) { o.keepUninitialized = true } }

// WithManagers brings up an HA control plane of these managers instead
// of one kube-controller-manager and the CCM, with no nodes.
func WithManagers(m []cluster.ManagerSpec) UpOption {
	return func(o *upOptions) {
		o.managers = m
		zero := 0
		o.nodes = &zero
	}
}

// OnFailure is called with a cluster that came up but failed its wait or
// its claims, before it is taken down: to keep its state in the artifacts.
func OnFailure(fn func(context.Context, *cluster.Cluster)) UpOption {
	return func(o *upOptions) { o.onFailure = fn }
}

// Up brings the cluster called name up, waits up to Wait for the CCM to
// initialize the initial nodes, and checks that the CCM runs a controller
// for each capability its profile claims. A bring-up that fails leaves
// nothing behind: the runtime cleans up a failed Up itself, and a cluster
// that fails its wait or its claims is taken down here.
func (s *Setup) Up(ctx context.Context, name string, opts ...UpOption) (*Started, error) {
	var o upOptions
	for _, opt := range opts {
		opt(&o)
	}
	spec := s.Spec(name)
	spec.Detached = o.detached
	spec.Leased = o.leased || o.detached
	spec.Managers = o.managers
	if o.nodes != nil {
		spec.Nodes = *o.nodes
	}
	c, err := s.Runtime.Up(ctx, spec)
	if err != nil {
		return nil, err
	}
	s.keepSecrets(cluster.SecretsOf(c.Cloud))
	st := &Started{Cluster: c}
	fail := func(err error) (*Started, error) {
		if o.onFailure != nil {
			o.onFailure(context.WithoutCancel(ctx), c)
		}
		// A cluster whose CCM cannot do its job is no cluster to leave.
		if derr := s.Runtime.Down(context.WithoutCancel(ctx), name); derr != nil {
			s.Logf("cluster %s: take down: %v", name, derr)
		}
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	// A CCM that claims no instances initializes no node. The claims
	// check below runs whatever the wait: a run with nodes uninitialized
	// still asks what the CCM serves.
	if s.Wait > 0 && spec.Nodes > 0 && s.Profile.Has(providers.Instances) {
		start := time.Now()
		passed := map[string]time.Time{}
		if err := c.WaitInitializedTimed(ctx, s.Wait, passed); err != nil {
			if !o.keepUninitialized || ctx.Err() != nil {
				return fail(err)
			}
			st.InitErr = err
		} else {
			st.Initialized = time.Since(start)
			for _, t := range passed {
				st.NodeLatencies = append(st.NodeLatencies, t.Sub(start))
			}
			// Every node of the cluster, which an existing one has as many
			// of as it has, not --nodes.
			s.Logf("%-28s %6.2fs", fmt.Sprintf("%d nodes initialized", len(passed)), st.Initialized.Seconds())
		}
	}
	if err := c.CheckClaims(ctx, ClaimsTimeout); err != nil {
		return fail(err)
	}
	// A cloud config can log in and still name what the cloud lacks (an
	// OpenStack subnet for load balancers): that would show only at the
	// first Service, as every load-balancer spec failing alike.
	if diag, ok := c.Cloud.(providers.Diagnoser); ok {
		if err := diag.Diagnose(ctx); err != nil {
			return fail(err)
		}
	}
	return st, nil
}

// Down removes the cluster called name; see cluster.Runtime.
func (s *Setup) Down(ctx context.Context, name string) error { return s.Runtime.Down(ctx, name) }

// Attach joins the running cluster called name, which another process
// brought up with the same options (a parallel suite's first process);
// see cluster.Attacher.
func (s *Setup) Attach(ctx context.Context, name string) (*cluster.Cluster, error) {
	a, ok := s.Runtime.(cluster.Attacher)
	if !ok {
		return nil, fmt.Errorf("a %s cluster cannot be shared by the processes of a parallel suite: run the suite in one process (PROCS=1)", s.Cluster)
	}
	c, err := a.Attach(ctx, s.Spec(name))
	if err != nil {
		return nil, err
	}
	s.keepSecrets(cluster.SecretsOf(c.Cloud))
	return c, nil
}
