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

// Package options is the one path from a user's flags to a running
// cluster, shared by every door: the e2e suite, the ccm-harness CLI and the
// kubetest2 deployer. It binds the flags and their environment variables
// once, resolves the provider profile (built-in or a profile file), picks
// the runtime, lists the components a cluster runs, and brings the cluster
// up, waits for the CCM to initialize its nodes, and takes it down again
// when that fails.
//
//	o := options.New()
//	o.Bind(flagSet)
//	s, err := o.Resolve()
//	started, err := s.Up(ctx, "name")
package options

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/semver"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/cluster/existing"
	"sigs.k8s.io/ccm-harness/cluster/kind"
	"sigs.k8s.io/ccm-harness/cluster/local"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/skew"
)

// Flag names, the same on every door.
const (
	FlagProvider       = "provider"
	FlagProviderConfig = "provider-config"
	FlagCCMVersion     = "ccm-version"
	FlagCCMImage       = "ccm-image"
	FlagCluster        = "cluster"
	FlagKubeconfig     = "kubeconfig"
	FlagBinDir         = "bin-dir"
	FlagNodes          = "nodes"
	FlagArtifacts      = "artifacts"
	FlagWait           = "wait"
	FlagAPIServerPort  = "apiserver-port"
	FlagKubernetes     = "kubernetes-version"
	FlagAllowNewerCCM  = "allow-newer-ccm"

	FlagCoordinatedLeaderElection = "coordinated-leader-election"
	FlagDualStack                 = "dual-stack"
	FlagLifecycleNodes            = "lifecycle-nodes"
	FlagJoinHook                  = "join-hook"
)

// Runtimes are the values of --cluster.
const (
	Local    = "local"
	Kind     = "kind"
	Existing = "existing"
)

// runtimes are the runtimes --cluster chooses among: what each makes (the
// flag's help and its errors read it), and how the options make it. A
// runtime is one entry here.
var runtimes = []struct {
	name, about string
	make        func(o Options) cluster.Runtime
}{
	{Local, "simulated nodes, no Docker", func(o Options) cluster.Runtime {
		var opts []local.Option
		if o.APIServerPort != 0 {
			opts = append(opts, local.WithAPIServerPort(o.APIServerPort))
		}
		return local.New(opts...)
	}},
	{Kind, "real nodes in Docker", func(Options) cluster.Runtime { return kind.New() }},
	{Existing, "the cluster of --kubeconfig, which is neither made nor removed", func(o Options) cluster.Runtime {
		return existing.New(o.Kubeconfig, existing.WithLifecycleNodes(lifecycleNodes(o.LifecycleNodes)...), existing.WithJoinHook(o.JoinHook))
	}},
}

// RuntimeNames are the values of --cluster a door takes: o.Runtimes, or
// every runtime.
func (o *Options) RuntimeNames() []string {
	if len(o.Runtimes) > 0 {
		return o.Runtimes
	}
	var out []string
	for _, r := range runtimes {
		out = append(out, r.name)
	}
	return out
}

func (o *Options) runtimeHelp() string {
	var parts []string
	for _, r := range runtimes {
		if slices.Contains(o.RuntimeNames(), r.name) {
			parts = append(parts, r.name+" ("+r.about+")")
		}
	}
	return strings.Join(parts, ", ")
}

// ccmVersionHelp lists each built-in provider's pinned CCM versions, the
// default first, read from its profile.
func ccmVersionHelp() string {
	var parts []string
	for _, name := range ProviderNames() {
		if p, ok := providers.Lookup(name); ok {
			if vs := p.CCM.Choices(); len(vs) > 0 {
				parts = append(parts, name+": "+strings.Join(vs, ", "))
			}
		}
	}
	return strings.Join(parts, "; ")
}

// providerConfigHelp lists each built-in provider's --provider-config
// keys, read from its profile's Config type.
func providerConfigHelp() string {
	var parts []string
	for _, name := range ProviderNames() {
		p, ok := providers.Lookup(name)
		if !ok {
			continue
		}
		if keys := providers.ConfigKeys(p.Config); len(keys) > 0 {
			parts = append(parts, name+": "+strings.Join(keys, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// Options are a user's choices, from flags and environment variables.
type Options struct {
	// Provider is a registered profile's name, or providers.External for
	// a profile file.
	Provider string
	// ProviderConfig is the provider config file; for External, the
	// profile file.
	ProviderConfig string
	// CCMVersion is another pinned version of the provider's CCM.
	CCMVersion string
	// CCMImage runs the CCM from this container image instead.
	CCMImage string
	// Cluster is the runtime: Local, Kind or Existing.
	Cluster string
	// Runtimes, if set, are the only runtimes the door offers (the
	// kubetest2 deployer: local); its --cluster help lists those alone.
	Runtimes []string
	// Kubeconfig is the existing cluster's.
	Kubeconfig string
	// BinDir holds ready-made binaries; "" builds them into the cache.
	BinDir string
	// Nodes are the nodes registered at start.
	Nodes int
	// Artifacts is where logs, JUnit and reports go.
	Artifacts string
	// Wait is how long the CCM may take to initialize the initial nodes;
	// 0 returns once they are registered.
	Wait time.Duration
	// APIServerPort serves a local cluster's API on a fixed port; 0 picks
	// a free one.
	APIServerPort int
	// KubernetesVersion is the release of the cluster the harness makes,
	// one of pins.KubernetesReleases or its minor ("v1.35"); "" for
	// the default.
	KubernetesVersion string
	// AllowNewerCCM runs a CCM newer than the kube-apiserver, which the
	// version skew policy forbids, instead of refusing it.
	AllowNewerCCM bool
	// LifecycleNodes are nodes of an existing cluster whose machines the
	// node-lifecycle specs may stop, start and terminate through the
	// cloud's API (comma-separated); none, and they skip.
	LifecycleNodes string
	// JoinHook makes the specs' new nodes on an existing cluster: a shell
	// command run as `hook NODE` (existing.WithJoinHook); none, and the
	// specs that add nodes skip.
	JoinHook string
	// CoordinatedLeaderElection makes a local cluster run coordinated
	// leader election (cluster.Spec.CoordinatedLeaderElection).
	CoordinatedLeaderElection bool
	// DualStack makes a kind cluster of both families
	// (cluster.Spec.DualStack).
	DualStack bool
}

// New returns the defaults, taken from the environment where it sets
// them: PROVIDER, PROVIDER_CONFIG, CCM_VERSION, CCM_IMAGE, CLUSTER,
// KUBECONFIG, BIN_DIR, NODES, ARTIFACTS, K8S_VERSION, ALLOW_NEWER_CCM,
// LIFECYCLE_NODES, JOIN_HOOK, COORDINATED_LEADER_ELECTION and DUAL_STACK,
// as `make e2e` passes them.
func New() *Options {
	nodes := 3
	if n, err := strconv.Atoi(os.Getenv("NODES")); err == nil {
		nodes = n
	}
	return &Options{
		Provider:       envOr("PROVIDER", "fake"),
		ProviderConfig: os.Getenv("PROVIDER_CONFIG"),
		CCMVersion:     os.Getenv("CCM_VERSION"),
		CCMImage:       os.Getenv("CCM_IMAGE"),
		Cluster:        envOr("CLUSTER", Local),
		Kubeconfig:     os.Getenv("KUBECONFIG"),
		BinDir:         os.Getenv("BIN_DIR"),
		Nodes:          nodes,
		Artifacts:      envOr("ARTIFACTS", "_artifacts"),
		Wait:           2 * time.Minute,

		KubernetesVersion: os.Getenv("K8S_VERSION"),
		AllowNewerCCM:     os.Getenv("ALLOW_NEWER_CCM") == "true",
		LifecycleNodes:    os.Getenv("LIFECYCLE_NODES"),
		JoinHook:          os.Getenv("JOIN_HOOK"),

		CoordinatedLeaderElection: os.Getenv("COORDINATED_LEADER_ELECTION") == "true",
		DualStack:                 os.Getenv("DUAL_STACK") == "true",
	}
}

// FlagSet is what both the standard library's and pflag's flag sets are,
// so that each door binds the same flags to its own parser.
type FlagSet interface {
	StringVar(p *string, name, value, usage string)
	IntVar(p *int, name string, value int, usage string)
	DurationVar(p *time.Duration, name string, value time.Duration, usage string)
	BoolVar(p *bool, name string, value bool, usage string)
}

// Bind defines every option's flag on fs, with o's values as defaults,
// except those named: a door leaves out a flag its host defines already
// (the e2e framework's --provider and --kubeconfig, kubetest2's
// --artifacts) or one that has no meaning there.
func (o *Options) Bind(fs FlagSet, except ...string) {
	str := func(p *string, name, usage string) {
		if !slices.Contains(except, name) {
			fs.StringVar(p, name, *p, usage)
		}
	}
	str(&o.Provider, FlagProvider, ProviderHelp+" ($PROVIDER)")
	str(&o.ProviderConfig, FlagProviderConfig, "provider config file, YAML ("+providerConfigHelp()+"); for --provider=external, the profile file ($PROVIDER_CONFIG)")
	str(&o.CCMVersion, FlagCCMVersion, "CCM version, one of those pinned for the provider, the default first ("+ccmVersionHelp()+"); beside --ccm-image, the image's release (vMAJOR.MINOR.PATCH), for the report, testgrid's column and the skew verdict ($CCM_VERSION)")
	str(&o.CCMImage, FlagCCMImage, "run the CCM from this container image instead (docker-archive:PATH, oci:DIR, or a registry reference) ($CCM_IMAGE)")
	str(&o.Cluster, FlagCluster, "cluster runtime: "+o.runtimeHelp()+" ($CLUSTER)")
	str(&o.Kubeconfig, FlagKubeconfig, "the existing cluster's kubeconfig, for --cluster=existing ($KUBECONFIG)")
	str(&o.JoinHook, FlagJoinHook, "for --cluster=existing with a reached cloud: a shell command run as `hook NODE` that makes a machine whose kubelet (--cloud-provider=external) registers as NODE with the labels in $CCM_HARNESS_NODE_LABELS; its machines are powered and terminated through the cloud's API; none, and the specs that add nodes skip ($JOIN_HOOK)")
	str(&o.LifecycleNodes, FlagLifecycleNodes, "for --cluster=existing with a reached cloud: comma-separated nodes whose machines the node-lifecycle specs may stop, start and terminate through the cloud's API (a terminated one is gone for good); none, and those specs skip ($LIFECYCLE_NODES)")
	str(&o.BinDir, FlagBinDir, "directory of ready-made etcd, kube-apiserver, kube-controller-manager, kwok, CCM and cloud binaries (default: build them into the cache) ($BIN_DIR)")
	str(&o.Artifacts, FlagArtifacts, "where logs, JUnit and reports go ($ARTIFACTS)")
	str(&o.KubernetesVersion, FlagKubernetes, "Kubernetes release of the cluster the harness makes (etcd aside, its control plane and kind's nodes): one of "+strings.Join(pins.KubernetesReleases, ", ")+", or a minor such as v1.35 (default "+pins.ModuleVersion(pins.Kubernetes)+"); without --ccm-version the CCM of that minor, else one older ($K8S_VERSION)")
	if !slices.Contains(except, FlagAllowNewerCCM) {
		fs.BoolVar(&o.AllowNewerCCM, FlagAllowNewerCCM, o.AllowNewerCCM, "run a CCM newer than the kube-apiserver, outside the version skew policy, instead of refusing it ($ALLOW_NEWER_CCM=true)")
	}
	if !slices.Contains(except, FlagCoordinatedLeaderElection) {
		fs.BoolVar(&o.CoordinatedLeaderElection, FlagCoordinatedLeaderElection, o.CoordinatedLeaderElection, "run the local cluster's API server with coordinated leader election (KEP-4355) and its kube-controller-managers as candidates, as a cluster that enables it does ($COORDINATED_LEADER_ELECTION=true)")
	}
	if !slices.Contains(except, FlagDualStack) {
		fs.BoolVar(&o.DualStack, FlagDualStack, o.DualStack, "make the kind cluster of both families: pod and Service ranges of each, kubelets given a dual-stack --node-ip (KEP-3705), the node containers' IPv6 addresses on their instances ($DUAL_STACK=true)")
	}
	if !slices.Contains(except, FlagNodes) {
		fs.IntVar(&o.Nodes, FlagNodes, o.Nodes, "nodes to register at start ($NODES)")
	}
	if !slices.Contains(except, FlagWait) {
		fs.DurationVar(&o.Wait, FlagWait, o.Wait, "how long the CCM may take to initialize the nodes; 0 returns once they are registered")
	}
	if !slices.Contains(except, FlagAPIServerPort) {
		fs.IntVar(&o.APIServerPort, FlagAPIServerPort, o.APIServerPort, "serve a local cluster's API on this port (default: a free one)")
	}
}

// Args are the flags that make another door (the e2e suite a matrix
// runs) take the same options: those every door binds, and --kubeconfig
// for an existing cluster.
func (o Options) Args() []string {
	args := []string{
		"--" + FlagProvider + "=" + o.Provider,
		"--" + FlagProviderConfig + "=" + o.ProviderConfig,
		"--" + FlagCCMVersion + "=" + o.CCMVersion,
		"--" + FlagCCMImage + "=" + o.CCMImage,
		"--" + FlagCluster + "=" + o.Cluster,
		"--" + FlagBinDir + "=" + o.BinDir,
		"--" + FlagArtifacts + "=" + o.Artifacts,
		"--" + FlagKubernetes + "=" + o.KubernetesVersion,
		"--" + FlagNodes + "=" + strconv.Itoa(o.Nodes),
		"--" + FlagAllowNewerCCM + "=" + strconv.FormatBool(o.AllowNewerCCM),
		"--" + FlagCoordinatedLeaderElection + "=" + strconv.FormatBool(o.CoordinatedLeaderElection),
		"--" + FlagDualStack + "=" + strconv.FormatBool(o.DualStack),
	}
	if o.Cluster == Existing {
		args = append(args, "--"+FlagKubeconfig+"="+o.Kubeconfig, "--"+FlagLifecycleNodes+"="+o.LifecycleNodes, "--"+FlagJoinHook+"="+o.JoinHook)
	}
	return args
}

// ProviderNames are the values --provider takes.
func ProviderNames() []string { return append(providers.Names(), providers.External) }

// ProviderHelp is --provider's help, on every door.
var ProviderHelp = "provider profile (" + strings.Join(ProviderNames(), ", ") + "; external takes a profile file as --provider-config)"

// Resolve checks the options and returns the setup they name; an error
// is one line naming the bad option and the fix. logf reports progress
// (builds, bring-up steps); nil is quiet.
func (o Options) Resolve(logf func(format string, args ...any)) (*Setup, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s := &Setup{Options: o, Logf: logf}
	var cfg []byte
	dir := ""
	if o.ProviderConfig != "" {
		var err error
		if cfg, err = os.ReadFile(o.ProviderConfig); err != nil {
			return nil, fmt.Errorf("--%s: %w (name a readable provider config file, or leave it unset)", FlagProviderConfig, err)
		}
		if dir, err = filepath.Abs(filepath.Dir(o.ProviderConfig)); err != nil {
			return nil, err
		}
	}
	if !slices.Contains(ProviderNames(), o.Provider) {
		return nil, fmt.Errorf("--%s %q is not a provider (known: %s; %s takes a profile file as --%s)", FlagProvider, o.Provider, strings.Join(ProviderNames(), ", "), providers.External, FlagProviderConfig)
	}
	p, cfg, err := providers.Resolve(o.Provider, cfg, dir)
	if err != nil {
		return nil, err
	}
	// Beside an image, --ccm-version is the image's release, not one to
	// build.
	if o.CCMImage != "" && o.CCMVersion != "" && !semver.IsValid(o.CCMVersion) {
		return nil, fmt.Errorf("--%s %q beside --%s names the image's release: give it as vMAJOR.MINOR.PATCH", FlagCCMVersion, o.CCMVersion, FlagCCMImage)
	}
	if s.Release, err = o.KubernetesRelease(); err != nil {
		return nil, err
	}
	if o.CoordinatedLeaderElection && o.Cluster != Local {
		return nil, fmt.Errorf("--%s is for a cluster the harness makes with --%s=%s; a kind or existing cluster enables it in its own control plane's configuration", FlagCoordinatedLeaderElection, FlagCluster, Local)
	}
	if o.DualStack && o.Cluster != Kind {
		return nil, fmt.Errorf("--%s is for a kind cluster the harness makes (--%s=%s): a local cluster is dual-stack already, and an existing one is as it was made", FlagDualStack, FlagCluster, Kind)
	}
	if p.CCM.Name == "" {
		// A profile file with no ccm: the cluster's own runs already.
		if o.Cluster != Existing {
			return nil, fmt.Errorf("the profile file names no ccm, so the harness would run none: give its ccm (image, binary or builtin), or judge a cluster whose CCM runs already with --%s=%s", FlagCluster, Existing)
		}
		if o.CCMImage != "" || o.CCMVersion != "" {
			return nil, fmt.Errorf("--%s and --%s choose the CCM the harness runs; with a profile file that names none, leave them unset", FlagCCMImage, FlagCCMVersion)
		}
	} else {
		if o.CCMImage != "" {
			p = p.WithCCMImage(o.CCMImage, o.CCMVersion)
		} else {
			ccmVersion := o.CCMVersion
			if ccmVersion == "" && o.KubernetesVersion != "" {
				ccmVersion = CCMFor(p.CCM, s.Release)
			}
			if p, err = p.WithCCMVersion(ccmVersion); err != nil {
				return nil, err
			}
		}
	}
	s.Profile, s.CloudConfig = p, cfg
	if s.Skew, err = skew.Of(s.Release, s.Profile.CCM.Release()); err != nil {
		// An image's or binary's release as its maker names it may
		// follow no Kubernetes minor (v2.3.0): no verdict.
		if s.Profile.CCM.Image == "" && s.Profile.CCM.Path == "" {
			return nil, err
		}
		s.Skew = skew.Unknown
	}
	if s.Skew == skew.Newer && !o.AllowNewerCCM {
		return nil, fmt.Errorf("%s is newer than the cluster's kube-apiserver %s, and %s; choose --%s %s or older, or --%s to run it anyway (outside the policy)",
			s.Profile.CCM, s.Release, skew.Policy, FlagCCMVersion, ccmOfMinor(s.Release), FlagAllowNewerCCM)
	}
	// The node specs check every node, and a check of none proves
	// nothing; the claims check needs a CCM with nodes to serve.
	if o.Nodes < 1 && o.Cluster != Existing {
		return nil, fmt.Errorf("--%s %d: the node specs need nodes to check (give 1 or more)", FlagNodes, o.Nodes)
	}
	for _, r := range runtimes {
		if r.name == o.Cluster {
			s.Runtime = r.make(o)
		}
	}
	if s.Runtime == nil {
		return nil, fmt.Errorf("--%s %q is not a runtime (known: %s)", FlagCluster, o.Cluster, strings.Join(o.RuntimeNames(), ", "))
	}
	if o.LifecycleNodes != "" && o.Cluster != Existing {
		return nil, fmt.Errorf("--%s names nodes of a cluster someone else made; with --%s=%s the harness makes its own nodes for the lifecycle specs (leave it unset)", FlagLifecycleNodes, FlagCluster, o.Cluster)
	}
	if o.JoinHook != "" && o.Cluster != Existing {
		return nil, fmt.Errorf("--%s makes nodes of a cluster someone else made; with --%s=%s the harness makes its own (leave it unset)", FlagJoinHook, FlagCluster, o.Cluster)
	}
	if o.Cluster == Existing {
		if o.KubernetesVersion != "" {
			return nil, fmt.Errorf("--%s %s picks the release of a cluster the harness makes; the existing cluster runs its own (leave it unset)", FlagKubernetes, o.KubernetesVersion)
		}
		s.Release, s.Skew = "", skew.Unknown
	}
	if s.ArtifactsDir, err = filepath.Abs(o.Artifacts); err != nil {
		return nil, err
	}
	s.Binaries = &binaries.Source{Dir: o.BinDir, Logf: logf}
	return s, nil
}

// KubernetesRelease is the Kubernetes release the options choose: a
// release the harness builds, or the newest of a minor.
func (o Options) KubernetesRelease() (string, error) {
	v := o.KubernetesVersion
	if v == "" {
		return pins.ModuleVersion(pins.Kubernetes), nil
	}
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	for _, r := range pins.KubernetesReleases {
		if r == v || strings.HasPrefix(r, v+".") {
			return r, nil
		}
	}
	return "", fmt.Errorf("--%s %s is not a Kubernetes release the harness builds (choose one of %s, or its minor, e.g. v1.35; default %s)",
		FlagKubernetes, o.KubernetesVersion, strings.Join(pins.KubernetesReleases, ", "), pins.ModuleVersion(pins.Kubernetes))
}

// CCMFor is the version of ccm a cluster of release runs when the user
// chose none: the newest pinned one of its minor, else one minor older,
// as the skew policy prefers; else the default, which the policy check
// then judges.
func CCMFor(ccm binaries.Component, release string) string {
	for _, want := range []skew.Verdict{skew.Same, skew.OneOlder} {
		for _, v := range ccm.Choices() {
			if got, err := skew.Of(release, v); err == nil && got == want {
				return v
			}
		}
	}
	return ""
}

// ccmOfMinor names the newest CCM the policy allows with release, for an
// error message: "v1.35.x".
func ccmOfMinor(release string) string {
	m, err := skew.Minor(release)
	if err != nil {
		return release
	}
	return fmt.Sprintf("v1.%d.x", m)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// lifecycleNodes splits --lifecycle-nodes.
func lifecycleNodes(v string) []string {
	var out []string
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}
