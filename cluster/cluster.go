// Package cluster defines how a test cluster comes to exist. A Runtime
// (local processes, and later kind or an existing cluster) turns a Spec into
// a running Cluster whose cloud is the Spec's provider; scenarios work on the
// Cluster alone.
package cluster

import (
	"context"
	"fmt"
	"regexp"
	"time"

	v1 "k8s.io/api/core/v1"

	"sigs.k8s.io/ccm-harness/cluster/binaries"
	"sigs.k8s.io/ccm-harness/providers"
)

// Runtime brings clusters up and down.
type Runtime interface {
	// Up starts a cluster and returns once the API serves, the managers are
	// healthy and the initial nodes are registered. A failed Up leaves
	// nothing behind.
	Up(ctx context.Context, spec Spec) (*Cluster, error)
	// Down removes the cluster called name, processes, files and cloud
	// resources. It is idempotent and works from a fresh harness process.
	Down(ctx context.Context, name string) error
}

// Spec is what to bring up.
type Spec struct {
	// Name is DNS-1123; it names state and log folders.
	Name string
	// Profile is the provider whose cloud and CCM the cluster gets.
	Profile providers.Profile
	// ProviderConfig is the user's provider config file content, or nil.
	ProviderConfig []byte
	// Nodes is how many nodes to register at start.
	Nodes int
	// ArtifactsDir receives component logs.
	ArtifactsDir string
	// Binaries finds or builds executables.
	Binaries *binaries.Source
	// Detached leaves the cluster running after the harness exits (`up`).
	Detached bool
	// Logf reports progress; may be nil.
	Logf func(format string, args ...any)
}

var dns1123 = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$`)

// Validate reports a spec a runtime cannot start, naming the fix.
func (s Spec) Validate() error {
	if !dns1123.MatchString(s.Name) {
		return fmt.Errorf("cluster name %q is not valid: use lower-case letters, digits and '-', at most 42 characters", s.Name)
	}
	if s.Profile.Name == "" {
		return fmt.Errorf("no provider profile given")
	}
	if s.Nodes < 0 {
		return fmt.Errorf("node count %d is negative", s.Nodes)
	}
	if s.ArtifactsDir == "" {
		return fmt.Errorf("no artifacts directory given")
	}
	return nil
}

// Logfn is s.Logf, or a no-op.
func (s Spec) Logfn() func(string, ...any) {
	if s.Logf != nil {
		return s.Logf
	}
	return func(string, ...any) {}
}

// Cluster is a running cluster.
type Cluster struct {
	Name       string
	Kubeconfig string
	// KubernetesVersion is the control plane's version.
	KubernetesVersion string
	Profile           providers.Profile
	// Cloud is the running cloud behind the cluster.
	Cloud providers.Cloud
	// Nodes is nil where the runtime cannot add or power nodes.
	Nodes NodePool
	// DataPlane is true when nodes run pods and carry traffic; simulated
	// nodes do not.
	DataPlane bool
	// Managers are the controller-manager processes scenarios may restart.
	Managers []Manager
	// Steps are the bring-up steps with their durations.
	Steps []Step
	// Health reports components that died since bring-up; nil where the
	// runtime cannot tell.
	Health func() error
}

// Manager returns the manager called name, or nil.
func (c *Cluster) Manager(name string) Manager {
	for _, m := range c.Managers {
		if m.Name() == name {
			return m
		}
	}
	return nil
}

// Step is one timed part of a bring-up.
type Step struct {
	Name     string
	Duration time.Duration
}

// Manager names for Cluster.Manager.
const (
	KubeControllerManager  = "kube-controller-manager"
	CloudControllerManager = "cloud-controller-manager"
)

// Manager is a controller manager that can be restarted.
type Manager interface {
	Name() string
	// Log is the path of the manager's log.
	Log() string
	// Restart stops the manager and starts it again, returning when healthy.
	Restart(ctx context.Context) error
}

// NodePool adds nodes and powers them. Each node has an instance in the
// profile's cloud made with it, as a real machine would.
type NodePool interface {
	// Add creates the instance, then registers the node as a kubelet
	// started with --cloud-provider=external does: tainted uninitialized.
	Add(ctx context.Context, name string, opts ...NodeOption) (*v1.Node, error)
	// PowerOff stops the instance; its kubelet stops reporting.
	PowerOff(ctx context.Context, name string) error
	// PowerOn starts the instance; its kubelet reports again.
	PowerOn(ctx context.Context, name string) error
	// Terminate destroys the instance; the Node object stays for the CCM
	// to delete, as it would in a real cloud.
	Terminate(ctx context.Context, name string) error
	// Remove terminates the instance and deletes the Node: cleanup.
	Remove(ctx context.Context, name string) error
}

// NodeOptions shape a node at registration.
type NodeOptions struct {
	// ProvidedNodeIP picks the kubelet's --node-ip from the instance's
	// addresses; the node then carries alpha.kubernetes.io/provided-node-ip.
	ProvidedNodeIP func(addresses []v1.NodeAddress) string
}

// NodeOption sets a NodeOptions field.
type NodeOption func(*NodeOptions)

// WithProvidedNodeIP registers the node as a kubelet started with --node-ip.
func WithProvidedNodeIP(pick func(addresses []v1.NodeAddress) string) NodeOption {
	return func(o *NodeOptions) { o.ProvidedNodeIP = pick }
}
