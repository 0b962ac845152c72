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

// Package providers describes the clouds the harness can test a CCM
// against. A Profile says which CCM runs, what it claims to support and how
// its cloud is started, shaped and inspected; scenarios see only this
// package's interfaces and never know which cloud is behind them.
package providers

import (
	"context"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"sort"
	"strings"

	"golang.org/x/mod/semver"
	v1 "k8s.io/api/core/v1"
	"k8s.io/cloud-provider/names"

	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/process"
	"sigs.k8s.io/ccm-harness/skew"
	"sigs.k8s.io/ccm-harness/specs"
)

// Capability is something a CCM claims to do: specs.Capability, where
// each spec names the one it checks.
type Capability = specs.Capability

// The capabilities, as specs declares them.
const (
	Instances     = specs.Instances
	Zones         = specs.Zones
	NodeLifecycle = specs.NodeLifecycle
	LoadBalancers = specs.LoadBalancers
	Routes        = specs.Routes
)

// Known are the capabilities a profile can claim.
var Known = specs.Capabilities

// ControllerOf is the CCM controller that serves c; "" where c is part of
// another's work (zones: the cloud-node controller's).
func ControllerOf(c Capability) string {
	return map[Capability]string{
		Instances:     names.CloudNodeController,
		NodeLifecycle: names.CloudNodeLifecycleController,
		LoadBalancers: names.ServiceLBController,
		Routes:        names.NodeRouteController,
	}[c]
}

// Set is a set of claims: capabilities or extended features.
type Set[T ~string] map[T]bool

// Capabilities is a set of Capability.
type Capabilities = Set[Capability]

// NewCapabilities builds a set.
func NewCapabilities(cs ...Capability) Capabilities { return newSet(cs) }

func newSet[T ~string](xs []T) Set[T] {
	out := Set[T]{}
	for _, x := range xs {
		out[x] = true
	}
	return out
}

// List is the set in a stable order.
func (s Set[T]) List() []T {
	var out []T
	for k, ok := range s {
		if ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// String lists the set in a stable order.
func (s Set[T]) String() string {
	var out []string
	for _, k := range s.List() {
		out = append(out, string(k))
	}
	return strings.Join(out, ",")
}

// Step is a part of a spec that a known difference can name: the spec
// checks it as one, and goes on past it.
type Step string

const (
	// StepProvision: the Service gets its ingress, and the cloud a load
	// balancer that matches it.
	StepProvision Step = "provision"
	// StepJoin: a joining node becomes a backend.
	StepJoin Step = "join"
	// StepExclude: a node labelled node.kubernetes.io/exclude-from-
	// external-load-balancers stops being one.
	StepExclude Step = "exclude"
	// StepLeave: a node without the label, and a deleted one, are
	// backends again, and no more; a deleted node's route is removed.
	StepLeave Step = "leave"
	// StepRestore: what the cloud lost behind the CCM's back (a route
	// deleted there) is made again.
	StepRestore Step = "restore"
	// StepKeep: a NotReady node whose provider ID is another owner's is
	// neither deleted nor tainted as shut down.
	StepKeep Step = "keep"
	// StepSurvive: the CCM still runs its node lifecycle controller after
	// meeting such a node.
	StepSurvive Step = "survive"
	// StepSwitch: a setting switched on or off on the Service (its
	// session affinity) is followed by its load balancer.
	StepSwitch Step = "switch"
)

// Feature is an extended feature a profile claims beside the capability
// it extends: specs.Feature.
type Feature = specs.Feature

// Features is a set of Feature.
type Features = Set[Feature]

// NewFeatures builds a set.
func NewFeatures(fs ...Feature) Features { return newSet(fs) }

// AllFeatures is every extended feature of the capabilities claimed.
func AllFeatures(claimed Capabilities) Features {
	out := Features{}
	for f, c := range specs.Features {
		if claimed[c] {
			out[f] = true
		}
	}
	return out
}

// Steps are every step a difference can name.
var Steps = []Step{StepProvision, StepJoin, StepExclude, StepLeave, StepRestore, StepKeep, StepSurvive, StepSwitch}

// Difference is a step of a spec that a CCM fails by its own design.
type Difference struct {
	// Spec is the spec's ID (specs.ID: a profile file names it so).
	Spec specs.ID `json:"spec"`
	// Step is the step that fails; the spec's other steps still assert.
	Step Step `json:"step"`
	// Shows is what the step's failure says (part of its message, or of
	// the CCM's warning event): a failure that says anything else is a
	// failure of the spec.
	Shows string `json:"shows"`
	// Evidence is what the CCM does instead, and where that is seen: its
	// source, its log, its cloud's answer.
	Evidence string `json:"evidence"`
	// Race, when set, says the failure depends on a race the CCM loses
	// most of the time but not always, and what it races: a run in which
	// the step passes is the CCM winning it, reported as the difference
	// not showing, not as a failure. A step that fails must still show
	// Shows. Without it, a step that passes fails the spec.
	Race string `json:"race,omitempty"`
}

// Validate says what is missing from d.
func (d Difference) Validate() error {
	switch {
	case d.Spec.IsZero():
		return fmt.Errorf("a difference names no spec")
	case !slices.Contains(Steps, d.Step):
		return fmt.Errorf("difference of spec %q: step %q is none of %v", d.Spec, d.Step, Steps)
	case d.Shows == "":
		return fmt.Errorf("difference of spec %q: shows is empty (the text its failure must contain, so that no other failure passes for it)", d.Spec)
	case d.Evidence == "":
		return fmt.Errorf("difference of spec %q: evidence is empty (what the CCM does instead, and where that is seen)", d.Spec)
	}
	return nil
}

// FeaturesOf are the extended features the profile claims for a cluster
// with cloud.
func (p Profile) FeaturesOf(cloud Cloud) Features {
	if w, ok := cloud.(interface{ Base() Cloud }); ok {
		cloud = w.Base()
	}
	if p.CloudFeatures != nil && cloud != nil {
		return p.CloudFeatures(cloud)
	}
	return p.Features
}

// Profile is one provider the harness can run.
type Profile struct {
	// Name is what users select (PROVIDER=fake) and what the e2e framework's
	// --provider flag carries.
	Name string
	// CloudProvider is the CCM's --cloud-provider value.
	CloudProvider string
	// ProviderIDScheme is the scheme of spec.providerID ("fakecloud" for
	// "fakecloud://i-123").
	ProviderIDScheme string
	// CCM is the cloud-controller-manager to build and run.
	CCM binaries.Component
	// CloudBinaries are what the cloud runs, if it runs anything here: a
	// runtime resolves them with the rest before it starts anything, so a
	// missing binary is reported at once.
	CloudBinaries []binaries.Component
	// CCMArgs are flags the CCM needs beyond the harness's common ones.
	CCMArgs []string
	// CCMConfigFile, if set, is the CCM's --cloud-config instead of the
	// one the cloud writes.
	CCMConfigFile string
	// Manifests are the Kubernetes objects the provider ships with its
	// CCM (manifests): its ServiceAccount, RBAC, ConfigMaps and
	// Secrets, as one YAML stream, applied before a CCM from an image
	// starts under that ServiceAccount. Nil applies upstream's
	// recommended RBAC instead.
	Manifests []byte
	// Capabilities are what the CCM claims to do.
	Capabilities Capabilities
	// Features are the extended features of those capabilities it claims
	// too (specs.Features); the specs of the others are reported as not
	// claimed.
	Features Features
	// CloudFeatures, where set, are the features as the cloud's config
	// makes them (AWS: classic or network load balancers), in place of
	// Features.
	CloudFeatures func(Cloud) Features
	// ProxyProtocolAnnotations are the annotations a LoadBalancer Service
	// carries to ask the CCM for a load balancer that speaks the PROXY
	// protocol to its backends: named wherever the profile claims
	// load-balancer-proxy-protocol.
	ProxyProtocolAnnotations map[string]string
	// Differences are the steps of specs of a claimed capability that
	// this CCM fails by its own design: strict expected failures, for
	// this CCM only, so no spec is loosened for everyone. The spec runs;
	// the step must fail as the difference says, and the rest of the
	// spec still asserts. A difference belongs to the CCM: a profile file
	// with a CCM of its own inherits none of its cloud's.
	Differences []Difference
	// InTreeKCM is kube-controller-manager of a release that runs the
	// cloud controllers with this provider compiled in, the starting point
	// of the leader-migration specs; zero if there is none.
	InTreeKCM binaries.Component
	// OlderCCM is the CCM of an older release, the one the leader-migration
	// specs migrate to first and then upgrade from; zero if there is none.
	// WithCCMVersion sets it to the provider's CCM of the minor before the
	// one under test where the provider pins one; a provider sets it here
	// only for a CCM of its own release N (fakecloud's, beside InTreeKCM).
	// A provider with an older CCM but no InTreeKCM starts the specs from
	// the older CCM, and runs only the CCM upgrade.
	OlderCCM binaries.Component
	// NewCloud returns the cloud to start for one cluster. config is the
	// content of the user's provider config file (--provider-config), or nil.
	NewCloud func(config []byte) (Cloud, error)
	// Config is a zero value of the type NewCloud reads config into: its
	// JSON fields are the file's keys, which the flags' help lists
	// (ConfigKeys). Nil for a provider that takes no config.
	Config any
}

// Has reports whether the profile claims c.
func (p Profile) Has(c Capability) bool { return p.Capabilities[c] }

// WithCCMImage is the profile with its CCM run from a container image
// (docker-archive:PATH, oci:DIR, or a registry reference), version being
// the image's release as its user names it ("" for unknown); "" keeps the
// built one.
func (p Profile) WithCCMImage(ref, version string) Profile {
	if ref != "" {
		p.CCM = p.CCM.WithImage(ref)
		p.CCM.Version = version
		// An image's release is its own, unknown here, and so is the CCM
		// a user upgrades to it from.
		p.OlderCCM = binaries.Component{}
	}
	return p
}

// WithCCMVersion is the profile with its CCM built from another pinned
// version; "" keeps the default.
//
// Where the provider pins its CCM at the minor before the one chosen, that
// CCM becomes the older CCM, the one the leader-migration specs' CCM roll
// starts from: the upgrade a user makes (v1.35 to v1.36, not the in-tree
// era's CCM to v1.36). Without such a pin (the oldest supported minor) the
// profile's own older CCM stays, if it has one.
func (p Profile) WithCCMVersion(version string) (Profile, error) {
	ccm, err := p.CCM.At(version)
	if err != nil {
		// A provider pins its CCM's versions in its own folder.
		return Profile{}, fmt.Errorf("provider %s: %w; pin another in providers/%s/", p.Name, err, p.Name)
	}
	if prev := previousMinor(p.CCM.Choices(), ccm.Release()); prev != "" {
		older, err := p.CCM.At(prev)
		if err != nil {
			return Profile{}, fmt.Errorf("provider %s: the CCM to upgrade from: %w", p.Name, err)
		}
		// Its own name: both run side by side.
		name := p.OlderCCM.Name
		if name == "" {
			name = p.CCM.Name + "-older"
		}
		p.OlderCCM = older.Renamed(name)
	}
	p.CCM = ccm
	return p, nil
}

// previousMinor is the newest of versions whose minor is one below
// release's, or "".
func previousMinor(versions []string, release string) string {
	m, err := skew.Minor(release)
	if err != nil {
		return ""
	}
	best := ""
	for _, v := range versions {
		if vm, err := skew.Minor(v); err == nil && vm == m-1 && (best == "" || semver.Compare(v, best) > 0) {
			best = v
		}
	}
	return best
}

// CloudEnv is what a runtime hands a cloud when it starts one.
type CloudEnv struct {
	// Dir is the cloud's private working directory, removed on down. A
	// CCM's container mounts it whole, and a CCM process can read it.
	Dir string
	// AdminDir is for the cloud's admin credentials, the harness's own:
	// apart from Dir, where the CCM under test cannot read
	// (cluster.MakeAdminDir).
	AdminDir string
	// LogDir receives component logs and audit logs (under $ARTIFACTS).
	LogDir string
	// Processes is the cluster's process group: anything the cloud runs as
	// a process starts through it, so down and Ctrl-C stop it too.
	Processes *process.Group
	// Binaries builds or finds executables.
	Binaries *binaries.Source
	// Kubeconfig is the cluster's admin kubeconfig, for objects a CCM's
	// installer creates beside it (a Secret with the cloud's credentials).
	Kubeconfig string
	// NodeNetworks are the networks the nodes have their addresses in,
	// where they are real hosts (kind's containers); a cloud whose load
	// balancers carry traffic may send it there. Empty where nodes are
	// simulated and their addresses only data.
	NodeNetworks []netip.Prefix
	// KwokLabel, where kwok simulates the nodes' kubelets, is the label it
	// manages a node by ("key=value"): a cloud the harness runs takes it
	// off the node of an instance that stops or is terminated and puts it
	// back when the instance starts, as a real machine's kubelet stops and
	// starts with it, whoever stopped it (a spec through the cloud's own
	// API, judging the cluster as someone else's). Empty elsewhere.
	KwokLabel string
	// HostAddress is this machine's address on the nodes' network, where
	// a CCM that runs on a node (a pod) reaches a cloud running here;
	// empty where the CCM runs on this machine.
	HostAddress string
	// NodesHost is this machine's address on the nodes' network wherever
	// the nodes are real hosts (kind's containers), whatever runs the CCM:
	// a cloud's DNS answers there too (NameServer), where the cluster's
	// DNS forwards to it. Empty where nodes are simulated.
	NodesHost string
}

// Cloud is the cloud behind one cluster: a simulator the harness runs, or
// a real cloud it only talks to.
type Cloud interface {
	// Start brings the cloud up; it returns when the cloud serves.
	Start(ctx context.Context, env CloudEnv) error
	// CCMConfig is the content of the CCM's --cloud-config file.
	CCMConfig() ([]byte, error)
	// Instances is nil when the harness cannot make instances in this cloud.
	Instances() InstanceControl
	// Inspector is nil when the cloud cannot be asked what it holds.
	Inspector() Inspector
}

// Attacher is a Cloud that a process which did not start it can join:
// the processes of a parallel suite beyond the first, which share the
// first's cluster. Attach reads what Start left in env.Dir and
// env.AdminDir, and returns once the cloud answers; Start is not called.
type Attacher interface {
	Attach(ctx context.Context, env CloudEnv) error
}

// Reached is a Cloud the harness does not start: a real cloud, or one
// someone else runs, asked with credentials from the environment as the
// cloud's own tools take them. Its Start and Attach only connect, and say
// in one line why they cannot; nothing of it is the harness's to remove.
// The runtime of a cluster someone else made judges its CCM against it.
type Reached interface {
	// Where names the cloud reached and as whom, for the bring-up line.
	Where() string
}

// ReachedOf is cloud's Reached, seen through a plugin that answers for
// it, or nil where the harness runs cloud itself.
func ReachedOf(cloud Cloud) Reached {
	if w, ok := cloud.(interface{ Base() Cloud }); ok {
		cloud = w.Base()
	}
	r, _ := cloud.(Reached)
	return r
}

// SecretKeeper is a Cloud that knows credentials it made or was given;
// the suite removes them from every artifact it leaves.
type SecretKeeper interface {
	Secrets() []string
}

// ServiceAnnotator is a cloud whose CCM makes the kind of load balancer
// the cloud's config asks for only when a LoadBalancer Service says so in
// annotations (AWS's Network Load Balancers): the specs' Services carry
// them.
type ServiceAnnotator interface {
	ServiceAnnotations() map[string]string
}

// CCMEnvironment is a cloud whose CCM needs environment variables besides
// its cloud config, such as a feature switch the config relies on.
type CCMEnvironment interface {
	CCMEnv() []string
}

// Diagnoser is a cloud that can tell why its CCM might be stuck: it tries
// what the CCM must do first (reach the cloud's API, log in with the
// credentials the CCM was given) and says what failed. Nil means the cloud
// found nothing wrong.
type Diagnoser interface {
	Diagnose(ctx context.Context) error
}

// Instance is what a cloud says about the machine behind a node.
type Instance struct {
	Name         string
	ProviderID   string
	InstanceType string
	Zone         string
	Region       string
	Addresses    []v1.NodeAddress
	// Running is false for stopped instances.
	Running bool
	// SystemUUID is the machine's SMBIOS UUID, which its kubelet reports
	// as status.nodeInfo.systemUUID; "" where the cloud has none.
	SystemUUID string
}

// InstanceControl makes and changes the machines behind nodes.
type InstanceControl interface {
	Create(ctx context.Context, name string) (Instance, error)
	MachinePower
}

// MachinePower stops, starts and terminates the machine behind the node
// called name.
type MachinePower interface {
	Stop(ctx context.Context, name string) error
	Start(ctx context.Context, name string) error
	Terminate(ctx context.Context, name string) error
}

// Powerer is a cloud that makes no machine but can power those it has
// through its own API (a reached cloud: AWS's StopInstances, Nova's
// os-stop): the lifecycle specs' power over nodes a user lent them
// (--lifecycle-nodes). Power is nil where it cannot.
type Powerer interface {
	Power() MachinePower
}

// PowerOf is what stops, starts and terminates cloud's machines: its
// InstanceControl, or a Powerer's power; nil where nothing can.
func PowerOf(cloud Cloud) MachinePower {
	if cloud == nil {
		return nil
	}
	if ic := cloud.Instances(); ic != nil {
		return ic
	}
	if p, ok := cloud.(Powerer); ok {
		return p.Power()
	}
	return nil
}

// InstanceAdopter is an InstanceControl that can also record a machine
// made outside the cloud, such as a kind node's container, as an instance
// with the addresses it really has.
type InstanceAdopter interface {
	Adopt(ctx context.Context, name string, addresses []v1.NodeAddress) (Instance, error)
}

// Inspector asks the cloud, not Kubernetes, what is true.
type Inspector interface {
	// Instance is the live instance behind the node called name.
	Instance(ctx context.Context, name string) (Instance, error)
}

// ConfigKeys are the top-level keys of a provider config of v's type
// (Profile.Config): its JSON fields, those of embedded structs inlined as
// encoding/json (and sigs.k8s.io/yaml) inline them.
func ConfigKeys(v any) []string {
	if v == nil {
		return nil
	}
	var keys []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case name == "-" || (!f.IsExported() && !f.Anonymous):
			case f.Anonymous && name == "":
				walk(f.Type)
			case name != "":
				keys = append(keys, name)
			default:
				keys = append(keys, f.Name)
			}
		}
	}
	walk(reflect.TypeOf(v))
	return keys
}

var registry = map[string]Profile{}

// Lookup returns the profile called name, if one is registered.
func Lookup(name string) (Profile, bool) {
	p, ok := registry[name]
	return p, ok
}

// Register makes a profile selectable by name; providers call it from init.
func Register(p Profile) {
	if _, dup := registry[p.Name]; dup {
		panic(fmt.Sprintf("provider %q registered twice", p.Name))
	}
	registry[p.Name] = p
}

// Get returns the profile called name.
func Get(name string) (Profile, error) {
	p, ok := registry[name]
	if !ok {
		return Profile{}, fmt.Errorf("unknown provider %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return p, nil
}

// Names lists the registered profiles.
func Names() []string {
	var n []string
	for k := range registry {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
