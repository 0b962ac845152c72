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

// Package cluster defines how a test cluster comes to exist. A Runtime
// (local processes, kind, or an existing cluster) turns a Spec into
// a running Cluster whose cloud is the Spec's provider; scenarios work on the
// Cluster alone.
package cluster

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"sigs.k8s.io/ccm-harness/cluster/audit"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/reports"
)

// Runtime brings clusters up and down.
type Runtime interface {
	// Up starts a cluster and returns once the API serves, the managers are
	// healthy and the initial nodes are registered. A failed Up leaves
	// nothing behind.
	Up(ctx context.Context, spec Spec) (*Cluster, error)
	// Down removes the cluster called name, processes, files and cloud
	// resources, and redacts the cluster's secrets from its logs. It works
	// from a fresh harness process; a name it holds no state for is
	// ErrNoCluster, and then it removes nothing.
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
	// Leased runs the managers with leader election even where there is
	// one of each, as deployed ones run: a suite judging the cluster as an
	// existing one sees by the CCM's lease that it runs.
	Leased bool
	// Managers are the control plane's controller-manager processes. Nil
	// means one kube-controller-manager with --cloud-provider=external and
	// the profile's CCM, without leader election. Given, they run with
	// leader election, as the members of an HA control plane.
	Managers []ManagerSpec
	// Logf reports progress; may be nil.
	Logf func(format string, args ...any)
	// KubernetesVersion is the release the runtime builds the control
	// plane (and kind's nodes) from, one of pins.KubernetesReleases;
	// "" for go.mod's.
	KubernetesVersion string
	// CoordinatedLeaderElection runs the API server's coordinated leader
	// election (KEP-4355, beta and off by default), with the
	// kube-controller-managers of the control plane's release as its
	// candidates, as a cluster that enables it does. The managers that
	// cannot take part are left out: a kube-controller-manager with a
	// cloud provider in-tree (v1.30 and older; the election begins at
	// v1.31) and every CCM (k8s.io/cloud-provider has no coordinated
	// election).
	CoordinatedLeaderElection bool
	// DualStack makes a kind cluster of both families (kind's ipFamily
	// dual): pod and Service ranges of each, kubelets given a dual-stack
	// --node-ip, instances with the node containers' IPv6 addresses as
	// well. The local runtime's clusters are dual-stack always.
	DualStack bool
}

// AtRelease is c, a component of Kubernetes, at the spec's release.
func (s Spec) AtRelease(c binaries.Component) binaries.Component {
	r, err := c.At(s.KubernetesVersion)
	if err != nil {
		return c // Validate refuses such a release first
	}
	return r
}

// Validate reports a spec a runtime cannot start, naming the fix.
func (s Spec) Validate() error {
	if err := CheckName(s.Name); err != nil {
		return err
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
	if v := s.KubernetesVersion; v != "" && !slices.Contains(pins.KubernetesReleases, v) {
		return fmt.Errorf("Kubernetes release %s is not one the harness builds (choose one of %s)", v, strings.Join(pins.KubernetesReleases, ", "))
	}
	seen := map[string]bool{}
	for _, m := range s.Managers {
		if CheckName(m.Name) != nil || seen[m.Name] {
			return fmt.Errorf("manager name %q is not valid or is given twice: use lower-case letters, digits and '-', a name per manager", m.Name)
		}
		seen[m.Name] = true
	}
	return nil
}

// StateDir is where the runtimes keep their clusters' state, each in a
// folder of its own: $CCM_HARNESS_STATE, else $XDG_STATE_HOME/ccm-harness,
// else ~/.local/state/ccm-harness.
func StateDir() string {
	if d := os.Getenv("CCM_HARNESS_STATE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "ccm-harness")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "ccm-harness")
	}
	return filepath.Join(os.TempDir(), "ccm-harness-state")
}

// LogDir is where a cluster's components log: logs/<cluster> under the
// artifacts directory. Every runtime and every door use this one layout.
func LogDir(artifactsDir, name string) string {
	return filepath.Join(artifactsDir, reports.LogsDir, name)
}

// LogDir is where the spec's cluster logs.
func (s Spec) LogDir() string { return LogDir(s.ArtifactsDir, s.Name) }

// ComponentLister is a Runtime that says which executables a cluster of
// spec runs on this machine, so that a door can build or stage them before
// bring-up; the runtime resolves the same list when it starts.
type ComponentLister interface {
	Components(spec Spec) []binaries.Component
}

// ControlPlaneRuntime is a Runtime whose clusters run managers of a
// spec's own beside theirs (Cluster.ControlPlane): the leader-migration
// specs' HA members. A door builds those managers only for such a runtime.
type ControlPlaneRuntime interface {
	// ControlPlanes reports that its clusters have a ControlPlane.
	ControlPlanes() bool
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
	// NodesByHook is true where Nodes makes nodes by a user's join hook
	// (a cluster someone else made): a node gets the labels a spec asks
	// for, and no other kubelet option.
	NodesByHook bool
	// LentNodes are nodes of a cluster someone else made that its user
	// lent the lifecycle specs (--lifecycle-nodes); nil where the runtime
	// makes nodes of its own (Nodes), or none were lent.
	LentNodes NodeLender
	// DataPlane is true when nodes run pods and carry traffic; simulated
	// nodes do not.
	DataPlane bool
	// IPv4OnlyNodes is true where the runtime's nodes are of IPv4 alone
	// (the kind runtime's clusters but dual-stack ones are of kind's
	// ipFamily ipv4, and their instances carry the node containers' IPv4
	// addresses only, even where Docker's kind network has an IPv6 range
	// too), so that their instances have no IPv6 address whatever the CCM
	// claims.
	IPv4OnlyNodes bool
	// DualStackServices is true where the API server gives Services
	// addresses of both families (--service-cluster-ip-range of both), so
	// that a RequireDualStack Service can be made.
	DualStackServices bool
	// Managers are the controller-manager processes scenarios may restart.
	Managers []Manager
	// RunningCCM is the CCM of a cluster the harness did not make, which
	// it can ask what it runs but not restart; nil where the CCM is among
	// Managers, or runs where the harness cannot ask it.
	RunningCCM RunningCCM
	// ControlPlane starts more manager processes; nil where the runtime
	// cannot.
	ControlPlane ControlPlane
	// LeaderElection is how the managers of an HA control plane elect
	// leaders; zero when they do not.
	LeaderElection LeaderElection
	// Steps are the bring-up steps with their durations.
	Steps []Step
	// Health reports components that died since bring-up; nil where the
	// runtime cannot tell.
	Health func() error
	// Refusals are the requests the API server refused the CCM's
	// ServiceAccount since a time (cluster/audit), and that account's
	// user name; nil where the CCM runs under no ServiceAccount or the
	// runtime keeps no audit log.
	Refusals func(since time.Time) (user string, refused []audit.Refusal, err error)
	// APIUses are the deprecated and unserved APIs the CCM called since
	// a time, and the user it runs as; nil where the runtime cannot tell
	// (an existing cluster).
	APIUses func(since time.Time) (user string, uses []audit.APIUse, err error)
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

// KwokNodeLabel is the label kwok selects the nodes whose kubelets it
// simulates by (the local runtime's): a node that carries it runs no pods.
const KwokNodeLabel = "kwok.x-k8s.io/node"

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

// RunningCCM is a CCM the harness can ask which controllers it runs.
type RunningCCM interface {
	// Log says where the CCM's log is.
	Log() string
	// Controllers are the controllers the CCM runs now, from its
	// /healthz?verbose: a standby that holds no lease runs none.
	Controllers(ctx context.Context) ([]string, error)
}

// Manager is a running controller-manager process.
type Manager interface {
	RunningCCM
	Name() string
	// Spec is what the manager was started as, defaults filled in.
	Spec() ManagerSpec
	// Restart stops the manager and starts it again, returning when healthy.
	Restart(ctx context.Context) error
	// Stop ends the manager, as a control-plane member being replaced.
	Stop(ctx context.Context) error
}

// LeaderElection are the managers' --leader-elect-* settings.
type LeaderElection struct {
	Lease, Renew, Retry time.Duration
}

// ControlPlane runs manager processes beside a cluster's, as members of
// an HA control plane are replaced one at a time.
type ControlPlane interface {
	// Start runs a manager and returns once it serves /healthz.
	Start(ctx context.Context, spec ManagerSpec) (Manager, error)
}

// ManagerSpec is a controller-manager process of a control-plane member.
type ManagerSpec struct {
	// Name names the process and its log; unique in the cluster.
	Name string
	// Kind is KubeControllerManager or CloudControllerManager.
	Kind string
	// Binary is what runs; zero means kube-controller-manager of the
	// control plane's release, or the profile's CCM.
	Binary binaries.Component
	// CloudProvider is a kube-controller-manager's --cloud-provider:
	// "external" (the default), or the name of a provider compiled into
	// Binary, which then runs the cloud controllers in-tree with the
	// cloud's config.
	CloudProvider string
	// LeaderMigration is the LeaderMigrationConfiguration the manager
	// runs with (--enable-leader-migration); nil leaves migration off.
	LeaderMigration []byte
	// LeaderMigrationDefault runs the manager with leader migration and no
	// configuration file (--enable-leader-migration alone): the default
	// its controller-manager library builds in.
	LeaderMigrationDefault bool
	// Args are added after the runtime's.
	Args []string
}

// Migrating reports whether the manager runs with leader migration.
func (s ManagerSpec) Migrating() bool { return s.LeaderMigration != nil || s.LeaderMigrationDefault }

// Attacher is a Runtime whose running clusters another process can use:
// the processes of a parallel suite beyond the first, which brought the
// cluster up. Attach returns the cluster spec names, as Up returned it
// to its owner less what only the owner holds: its Managers and
// ControlPlane (the processes are the owner's children) and its Steps.
// Its Health reads the owner's record of the processes afresh.
type Attacher interface {
	Attach(ctx context.Context, spec Spec) (*Cluster, error)
}

// ControllerLister is a Runtime that says, before it starts a manager,
// which controllers the manager's binary registers (what its --controllers
// flag lists): the names a LeaderMigrationConfiguration must use.
type ControllerLister interface {
	Controllers(ctx context.Context, spec Spec, m ManagerSpec) ([]string, error)
}

// InTree reports whether the spec is a kube-controller-manager running
// cloud controllers in-tree.
func (s ManagerSpec) InTree() bool {
	return s.Kind == KubeControllerManager && s.CloudProvider != "" && s.CloudProvider != "external"
}

// NodePool adds nodes and powers them. Each node has an instance in the
// profile's cloud made with it, as a real machine would.
type NodePool interface {
	// Add creates the instance, then registers the node as a kubelet
	// started with --cloud-provider=external does: tainted uninitialized.
	Add(ctx context.Context, name string, opts ...NodeOption) (*v1.Node, error)
	Powered
	// Remove terminates the instance and deletes the Node: cleanup.
	Remove(ctx context.Context, name string) error
}

// Powered stops, starts and terminates the machines behind nodes.
type Powered interface {
	// PowerOff stops the instance; its kubelet stops reporting.
	PowerOff(ctx context.Context, name string) error
	// PowerOn starts the instance; its kubelet reports again.
	PowerOn(ctx context.Context, name string) error
	// Terminate destroys the instance; the Node object stays for the CCM
	// to delete, as it would in a real cloud.
	Terminate(ctx context.Context, name string) error
}

// NodeLender lends the lifecycle specs nodes of a cluster someone else
// made, which its user named for them: their machines may be stopped,
// started and terminated, through the cloud's own API, and no other.
// It makes no node.
type NodeLender interface {
	// Names are the nodes lent, terminated ones included.
	Names() []string
	// Lend is a node no spec holds, until Return; an error naming why
	// when every one is held or terminated.
	Lend(ctx context.Context) (string, error)
	// Return gives the node back, its machine started again if the spec
	// left it stopped; a terminated one is not lent again.
	Return(ctx context.Context, name string) error
	// Powered powers only lent nodes.
	Powered
}

// NodeOptions shape a node at registration.
type NodeOptions struct {
	// ProvidedNodeIP picks the kubelet's --node-ip from the instance's
	// addresses; the node then carries alpha.kubernetes.io/provided-node-ip.
	ProvidedNodeIP func(addresses []v1.NodeAddress) string
	// InTreeCloud registers the node as a kubelet of a release with the
	// cloud provider in-tree did: initialized by itself from the cloud.
	InTreeCloud bool
	// Labels are the kubelet's --node-labels: on the Node from its
	// registration on.
	Labels map[string]string
}

// NodeOption sets a NodeOptions field.
type NodeOption func(*NodeOptions)

// WithInTreeCloud registers the node as a kubelet with an in-tree cloud
// provider (before the move to CCMs) does: it asks the cloud for its
// provider ID, addresses, instance type and zone itself, and sets no
// uninitialized taint.
func WithInTreeCloud() NodeOption { return func(o *NodeOptions) { o.InTreeCloud = true } }

// WithLabels registers the node with these labels, as a kubelet started
// with --node-labels does (node.kubernetes.io/ ones are a kubelet's to set).
func WithLabels(labels map[string]string) NodeOption {
	return func(o *NodeOptions) {
		if o.Labels == nil {
			o.Labels = map[string]string{}
		}
		maps.Copy(o.Labels, labels)
	}
}

// WithProvidedNodeIP registers the node as a kubelet started with --node-ip.
func WithProvidedNodeIP(pick func(addresses []v1.NodeAddress) string) NodeOption {
	return func(o *NodeOptions) { o.ProvidedNodeIP = pick }
}

// CCMFlags are the flags a CCM gets from every runtime for the profile's
// cloud: its provider and config, the name its cloud resources are tagged
// with, and the route controller switched on where the CCM claims routes.
// Kubeconfig, serving and leader-election flags are the runtime's.
func CCMFlags(p providers.Profile, cloudConfig, clusterName, clusterCIDR string) []string {
	args := []string{
		"--cloud-provider=" + p.CloudProvider,
		"--cloud-config=" + cloudConfig,
		// Names the cluster's resources in the cloud (LB tags, routes).
		"--cluster-name=" + clusterName,
		"--use-service-account-credentials=false",
		// The webhook server is off: nothing here calls it, and it would
		// take a fixed port.
		"--webhook-secure-port=0",
	}
	if p.Has(providers.Routes) {
		// The route controller runs only where the CCM believes it
		// allocates node CIDRs; kube-controller-manager's node-ipam does.
		return append(args, "--configure-cloud-routes=true", "--allocate-node-cidrs=true", "--cluster-cidr="+clusterCIDR)
	}
	return append(args, "--configure-cloud-routes=false")
}
