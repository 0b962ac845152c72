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

// Package scenarios holds the provider-neutral Ginkgo specs. Each asserts
// through the Kubernetes API and, where the provider has one, through the
// cloud's inspector; none knows which provider or runtime is behind it. A
// capability the provider does not claim skips the spec with the reason.
package scenarios

import (
	"context"
	"time"

	"github.com/onsi/ginkgo/v2"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/providers"
)

// Env is what the specs run against. The suite sets it before any spec.
type Env struct {
	Cluster  *cluster.Cluster
	Timeouts Timeouts
	// InitialNodesInitialized is how long after registration the CCM had
	// initialized the cluster's first nodes; 0 if it was not measured.
	InitialNodesInitialized time.Duration
	// InitialNodes are the nodes the cluster had when the specs began:
	// what a spec about "every node" checks. Nodes other specs add and
	// remove meanwhile (in parallel) are theirs to check.
	InitialNodes []string
	// Features are what the specs may count on, read off the cluster
	// (FeaturesOf) by SetEnv when nil. A parallel suite's processes beyond
	// the first are given the first's: every process decides every skip
	// alike, although only the first holds the cluster's managers.
	Features *Features
	// ArtifactsDir is where specs leave files for people ($ARTIFACTS).
	ArtifactsDir string
	// DryRun skips every spec with the reason it would be skipped, or
	// DryRunWouldRun.
	DryRun bool
	// NewCluster brings up another cluster of the same runtime and
	// profile, with the given managers, for specs that need a control
	// plane of their own; down removes it. Nil where the suite cannot.
	NewCluster func(ctx context.Context, managers []cluster.ManagerSpec) (c *cluster.Cluster, down func(context.Context) error, err error)
	// Controllers lists, before it starts, the controllers a manager of
	// NewCluster's would register; nil where the suite cannot tell.
	Controllers func(ctx context.Context, m cluster.ManagerSpec) ([]string, error)
	// LeaderMigration is the user's LeaderMigrationConfiguration file for
	// the leader-migration specs, CCMLeaderMigration one for the CCMs
	// alone, and RollbackLeaderMigration one for release N's managers the
	// downgrade brings back (a rollback's own); "" means the harness's own,
	// or LeaderMigration's.
	LeaderMigration, CCMLeaderMigration, RollbackLeaderMigration string
	// LeaderMigrationDefault runs the managers of the leader-migration
	// specs with leader migration and no configuration file, each with the
	// default its library builds in.
	LeaderMigrationDefault bool
}

// Timeouts bound the waits of the specs.
type Timeouts struct {
	// NodeInit is how long the CCM may take to initialize a node.
	NodeInit time.Duration
	// NodeLifecycle is how long a node may take to be noticed NotReady and
	// then tainted or deleted by the CCM.
	NodeLifecycle time.Duration
	// LoadBalancer is how long the CCM may take to reconcile a Service's
	// load balancer or a route.
	LoadBalancer time.Duration
	// Settle is how long a state must hold to count as stable.
	Settle time.Duration
	// Drain is how long a load balancer may take to stop sending new
	// connections to a node whose endpoints are going: the rolling-update
	// spec's backend pods go on serving this long after they are told to
	// stop. fakecloud checks its backends every second, but kube-proxy's
	// health check answers only once it has synced the endpoints, which
	// on a loaded machine took over 5 s (a rollout at 95.0 %, 20 of 399
	// reset, in make test's e2e-aws-lb): 10 s. Upstream's spec gives real
	// clouds' checks, of 5 to 30 seconds, 60 (--wait-scale=6).
	Drain time.Duration
}

// DefaultTimeouts suit a healthy CCM on a loaded 2-core machine, with the
// local runtime noticing silent nodes in 16 s.
var DefaultTimeouts = Timeouts{NodeInit: 2 * time.Minute, NodeLifecycle: 3 * time.Minute, LoadBalancer: 2 * time.Minute, Settle: 5 * time.Second, Drain: 10 * time.Second}

var current *Env

// SetEnv hands the specs their cluster.
func SetEnv(e *Env) {
	if e.Features == nil {
		f := FeaturesOf(e)
		e.Features = &f
	}
	current = e
}

// Cluster is the cluster the specs run against, or nil before SetEnv.
func Cluster() *cluster.Cluster {
	if current == nil {
		return nil
	}
	return current.Cluster
}

func env() *Env {
	if current == nil {
		ginkgo.Fail("scenarios: no environment: the suite must call scenarios.SetEnv in its BeforeSuite")
	}
	return current
}

// nodePool returns the pool; a spec that uses it says Needs(NeedNodePool).
func nodePool() cluster.NodePool {
	e := env()
	if e.Cluster.Nodes == nil {
		ginkgo.Skip(NeedNodePool.unmet(*e.Features))
	}
	return e.Cluster.Nodes
}

// inspector returns the cloud's inspector; a spec that uses it says
// Needs(NeedInspector).
func inspector() providers.Inspector {
	e := env()
	var insp providers.Inspector
	if e.Cluster.Cloud != nil {
		insp = e.Cluster.Cloud.Inspector()
	}
	if insp == nil {
		ginkgo.Skip(NeedInspector.unmet(*e.Features))
	}
	return insp
}
