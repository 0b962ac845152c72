// Package scenarios holds the provider-neutral Ginkgo specs. Each asserts
// through the Kubernetes API and, where the provider has one, through the
// cloud's inspector; none knows which provider or runtime is behind it. A
// capability the provider does not claim skips the spec with the reason.
package scenarios

import (
	"fmt"
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
}

// DefaultTimeouts suit a healthy CCM on a loaded 2-core machine, with the
// local runtime noticing silent nodes in 16 s.
var DefaultTimeouts = Timeouts{NodeInit: 2 * time.Minute, NodeLifecycle: 3 * time.Minute, LoadBalancer: 2 * time.Minute, Settle: 5 * time.Second}

var current *Env

// SetEnv hands the specs their cluster.
func SetEnv(e *Env) { current = e }

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

// requireCapability skips the spec unless the provider claims c.
func requireCapability(c providers.Capability) {
	p := env().Cluster.Profile
	if !p.Has(c) {
		ginkgo.Skip(fmt.Sprintf("provider %s does not claim %q (it claims %s)", p.Name, c, p.Capabilities))
	}
}

// nodePool returns the pool or skips: some runtimes cannot add nodes.
func nodePool() cluster.NodePool {
	e := env()
	if e.Cluster.Nodes == nil {
		ginkgo.Skip(fmt.Sprintf("the cluster cannot add or power nodes (provider %s has no instance control here)", e.Cluster.Profile.Name))
	}
	return e.Cluster.Nodes
}

// inspector returns the cloud's inspector or skips, naming what could not
// be checked.
func inspector(what string) providers.Inspector {
	e := env()
	var insp providers.Inspector
	if e.Cluster.Cloud != nil {
		insp = e.Cluster.Cloud.Inspector()
	}
	if insp == nil {
		ginkgo.Skip(fmt.Sprintf("provider %s has no cloud inspector, so %s cannot be compared with the cloud", e.Cluster.Profile.Name, what))
	}
	return insp
}
