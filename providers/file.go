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

package providers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/semver"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/manifests"
	"sigs.k8s.io/ccm-harness/specs"
)

// External selects a profile described by a file: PROVIDER=external with
// the file as the provider config.
const External = "external"

// File is a provider profile as a file, for a CCM the harness has no Go
// code for: which CCM (an image or a binary), its flags and cloud config,
// what it claims, and which cloud the harness runs and inspects for it.
// The built-in profiles can be written the same way (FileOf).
type File struct {
	// Name reports the provider; default "external".
	Name string `json:"name,omitempty"`
	// Cloud is the built-in profile whose cloud the harness starts,
	// inspects and makes instances in, or "none": the CCM talks to a cloud
	// of its own, and specs that need to ask the cloud or add nodes are
	// skipped.
	Cloud string `json:"cloud"`
	// CloudConfig is that cloud's provider config, as --provider-config
	// would be for that provider (its Profile.Config).
	CloudConfig any `json:"cloudConfig,omitempty"`
	// CCM is the cloud-controller-manager under test; none for a cluster
	// whose CCM runs already (--cluster=existing).
	CCM FileCCM `json:"ccm"`
	// Capabilities are what the CCM claims, at least one (specs.Capabilities).
	Capabilities []Capability `json:"capabilities"`
	// Features are the extended features of those capabilities it claims
	// too (load-balancer-udp, load-balancer-source-ip, ...: specs.Features);
	// the specs of the others are reported as not claimed, not run.
	Features []Feature `json:"features,omitempty"`
	// ProxyProtocolAnnotations are the annotations a LoadBalancer Service
	// carries to ask the CCM for a load balancer that speaks the PROXY
	// protocol to its backends; required with the feature
	// load-balancer-proxy-protocol, the CCM's own as its features are.
	ProxyProtocolAnnotations map[string]string `json:"proxyProtocolAnnotations,omitempty"`
	// Differences are the steps of specs the CCM fails by its own
	// design, each with what its failure shows and the evidence. The
	// spec still runs: the step must fail so, and the rest of the spec
	// asserts. A CCM of the file's own inherits none of its cloud's
	// built-in CCM's differences.
	Differences []Difference `json:"differences,omitempty"`
	// ProviderIDScheme is spec.providerID's scheme; default the cloud's.
	ProviderIDScheme string `json:"providerIDScheme,omitempty"`
	// Inspector, when set, is a cloud plugin that answers for the cloud in
	// place of the harness's inspector: what the machines, load balancers
	// and routes are, and stopping, starting, terminating and making
	// machines, each as far as it says it can (docs/cloud-plugin.md).
	// With cloud: none it is all the harness knows of the CCM's cloud.
	Inspector *FileInspector `json:"inspector,omitempty"`
	// Manifests are the CCM's Kubernetes objects (ServiceAccount, RBAC,
	// ConfigMaps, Secrets): a file, a folder of files or a kustomization.
	// Without them a CCM from an image runs under upstream's recommended
	// RBAC; builtin keeps the cloud's own.
	Manifests string `json:"manifests,omitempty"`
}

// FileCCM is the CCM of a profile file: exactly one of Image, Binary and
// Builtin.
type FileCCM struct {
	// Image is a container image: docker-archive:PATH, oci:DIR or a
	// registry reference.
	Image string `json:"image,omitempty"`
	// Binary is a ready-made executable.
	Binary string `json:"binary,omitempty"`
	// Builtin is the cloud's own CCM, as the harness builds it, at
	// Version.
	Builtin bool `json:"builtin,omitempty"`
	// Version, with Builtin, is the pinned version to build (default: the
	// first pinned); with Image or Binary, their release (vMAJOR.MINOR.PATCH),
	// for the report, testgrid's column and the skew verdict; unknown
	// without it.
	Version string `json:"version,omitempty"`
	// CloudProvider is its --cloud-provider; default the cloud's.
	CloudProvider string `json:"cloudProvider,omitempty"`
	// Args are flags beyond the harness's own.
	Args []string `json:"args,omitempty"`
	// CloudConfig is a --cloud-config file to use instead of the one the
	// harness writes for its cloud.
	CloudConfig string `json:"cloudConfig,omitempty"`
}

// Resolve returns the profile a user selected and the provider config its
// cloud gets: for External, read from the profile file, whose relative
// paths (a binary, a docker-archive: or oci: image, a cloud config) are
// taken from dir, the file's folder; otherwise the registered profile and
// config as given.
func Resolve(name string, config []byte, dir string) (Profile, []byte, error) {
	if name != External {
		p, err := Get(name)
		return p, config, err
	}
	if len(config) == 0 {
		return Profile{}, nil, fmt.Errorf("provider external: no profile file given (pass it as the provider config, e.g. PROVIDER_CONFIG=my-ccm.yaml)")
	}
	var f File
	if err := yaml.UnmarshalStrict(config, &f); err != nil {
		return Profile{}, nil, fmt.Errorf("provider external: profile file: %w", err)
	}
	return f.Profile(dir)
}

// Profile is the profile the file describes, and its cloud's config;
// relative paths in it are taken from dir.
func (f File) Profile(dir string) (Profile, []byte, error) {
	fail := func(format string, args ...any) (Profile, []byte, error) {
		return Profile{}, nil, fmt.Errorf("provider external: profile file: "+format, args...)
	}
	var p Profile
	switch f.Cloud {
	case "":
		return fail("cloud: not set (name a built-in cloud: %s, or none)", strings.Join(Names(), ", "))
	case "none":
		p = Profile{NewCloud: func([]byte) (Cloud, error) { return noCloud{}, nil }}
	default:
		base, err := Get(f.Cloud)
		if err != nil {
			return fail("cloud: %v", err)
		}
		p = base
	}
	var cloudConfig []byte
	if f.CloudConfig != nil {
		data, err := yaml.Marshal(f.CloudConfig)
		if err != nil {
			return fail("cloudConfig: %v", err)
		}
		cloudConfig = data
	}
	p.Name = f.Name
	if p.Name == "" {
		p.Name = External
	}
	// The name reports the provider and names files of the run.
	if errs := validation.IsDNS1123Label(p.Name); len(errs) > 0 {
		return fail("name %q is not valid: %s", p.Name, strings.Join(errs, "; "))
	}
	switch n := btoi(f.CCM.Image != "") + btoi(f.CCM.Binary != "") + btoi(f.CCM.Builtin); {
	case n == 0 && (f.CCM.Version != "" || f.CCM.CloudProvider != "" || len(f.CCM.Args) > 0 || f.CCM.CloudConfig != ""):
		return fail("ccm: give one of image, binary and builtin with the rest, or no ccm at all (a cluster whose CCM runs already)")
	case n == 0:
		// The CCM of an existing cluster runs there already: the
		// harness runs none (options refuses the runtimes that would).
		p.CCM = binaries.Component{}
	case n != 1:
		return fail("ccm: give exactly one of image, binary and builtin")
	case f.CCM.Builtin && f.Cloud == "none":
		return fail("ccm: builtin needs a built-in cloud, not none")
	case f.CCM.Image != "":
		p.CCM = binaries.Component{Name: "cloud-controller-manager", Image: imageIn(dir, f.CCM.Image)}
	case f.CCM.Binary != "":
		path, err := filepath.Abs(pathIn(dir, f.CCM.Binary))
		if err != nil {
			return fail("ccm: binary: %v", err)
		}
		if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return fail("ccm: binary %s is not an executable file", path)
		}
		p.CCM = binaries.Component{Name: "cloud-controller-manager", Path: path}
	default:
		var err error
		if p, err = p.WithCCMVersion(f.CCM.Version); err != nil {
			return fail("ccm: %v", err)
		}
	}
	if v := f.CCM.Version; v != "" && !f.CCM.Builtin {
		// An image's or a binary's release, as its maker names it: for
		// the report, testgrid's column and the skew verdict.
		if !semver.IsValid(v) {
			return fail("ccm: version %q is not a release (give the image's or binary's as vMAJOR.MINOR.PATCH)", v)
		}
		p.CCM.Version = v
	}
	if f.CCM.CloudProvider != "" {
		p.CloudProvider = f.CCM.CloudProvider
	}
	if p.CloudProvider == "" && p.CCM.Name != "" {
		return fail("ccm: cloudProvider: not set (the CCM's --cloud-provider)")
	}
	p.CCMArgs = append(slices.Clone(p.CCMArgs), f.CCM.Args...)
	if f.CCM.CloudConfig != "" {
		p.CCMConfigFile = pathIn(dir, f.CCM.CloudConfig)
	}
	if f.ProviderIDScheme != "" {
		p.ProviderIDScheme = f.ProviderIDScheme
	}
	p.Capabilities = Capabilities{}
	for _, c := range f.Capabilities {
		if _, ok := specs.Features[Feature(c)]; ok {
			return fail("capabilities: %s is an extended feature of %s: claim it under features", c, specs.Features[Feature(c)])
		}
		if !slices.Contains(Known, c) {
			return fail("capabilities: %q is none of %v", c, Known)
		}
		p.Capabilities[c] = true
	}
	// A profile that claims nothing has every spec skipped: a run of it
	// would pass having checked nothing.
	if len(p.Capabilities) == 0 {
		return fail("capabilities: none claimed; claim what the CCM does, at least one of %v", Known)
	}
	// The file's claims are its own, as its capabilities are.
	p.Features, p.CloudFeatures = Features{}, nil
	for _, ft := range f.Features {
		c, ok := specs.Features[ft]
		switch {
		case !ok:
			return fail("features: %q is none of %v", ft, specs.FeatureList())
		case !p.Has(c):
			return fail("features: %s without %s, the capability it extends", ft, c)
		}
		p.Features[ft] = true
	}
	p.ProxyProtocolAnnotations = f.ProxyProtocolAnnotations
	if p.Features[specs.LoadBalancerProxyProtocol] && len(p.ProxyProtocolAnnotations) == 0 {
		return fail("features: %s without proxyProtocolAnnotations: name the annotations a Service carries to ask the CCM for a load balancer that speaks the PROXY protocol", specs.LoadBalancerProxyProtocol)
	}
	// Only a CCM that claims instances sets spec.providerID.
	if p.ProviderIDScheme == "" && p.Has(Instances) {
		return fail("providerIDScheme: not set (the scheme of the spec.providerID the CCM sets, e.g. aws)")
	}
	if f.Cloud == "none" && p.Has(Instances) && f.Inspector == nil {
		return fail("capabilities: instances with cloud: none: the harness cannot ask a cloud it does not know about the instances behind nodes; drop the claim, name a built-in cloud, or give an inspector plugin")
	}
	if f.Inspector != nil {
		plugin, err := f.Inspector.plugin(dir)
		if err != nil {
			return fail("%v", err)
		}
		if st, err := os.Stat(plugin.Command); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return fail("inspector: plugin %s is not an executable file", plugin.Command)
		}
		newCloud := p.NewCloud
		p.NewCloud = func(config []byte) (Cloud, error) {
			c, err := newCloud(config)
			if err != nil {
				return nil, err
			}
			// Each cloud its own: the plugin's environment is its cloud's.
			own := *plugin
			return withPlugin(c, &own), nil
		}
	}
	// The migration specs need the provider's in-tree release: a CCM of
	// the user's has none the harness knows, nor its manifests.
	if !f.CCM.Builtin {
		p.InTreeKCM, p.OlderCCM = binaries.Component{}, binaries.Component{}
		p.Manifests = nil
	}
	// The built-in CCM's differences are its own, not the cloud's: a CCM
	// of the file's own inherits none. Where the file names no CCM, the
	// cluster's is taken to be the cloud's own, differences and all
	// (differences: below replaces them).
	if f.CCM.Image != "" || f.CCM.Binary != "" {
		p.Differences = nil
	}
	if len(f.Differences) > 0 {
		for _, d := range f.Differences {
			if err := d.Validate(); err != nil {
				return fail("differences: %v", err)
			}
		}
		p.Differences = f.Differences
	}
	if f.Manifests != "" {
		data, err := manifests.Read(pathIn(dir, f.Manifests))
		if err != nil {
			return fail("%v", err)
		}
		objs, err := manifests.Parse(data)
		var w *manifests.Workload
		if err == nil {
			w, objs, err = manifests.SplitWorkload(objs)
		}
		if err == nil && w == nil {
			_, _, err = manifests.ServiceAccount(objs)
		}
		if err != nil {
			return fail("manifests %s: %s", pathIn(dir, f.Manifests), strings.TrimPrefix(err.Error(), "manifests: "))
		}
		p.Manifests = data
	}
	return p, cloudConfig, nil
}

// pathIn is p taken from dir when it is relative.
func pathIn(dir, p string) string {
	if filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}

// imageIn is an image reference with a relative docker-archive: or oci:
// path taken from dir; a registry reference is left as it is.
func imageIn(dir, ref string) string {
	for _, scheme := range []string{"docker-archive:", "oci:"} {
		if p, ok := strings.CutPrefix(ref, scheme); ok {
			return scheme + pathIn(dir, p)
		}
	}
	return ref
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// noCloud is the cloud of a profile whose CCM talks to a cloud the harness
// does not run: nothing to start, nothing to inspect.
type noCloud struct{}

func (noCloud) Start(context.Context, CloudEnv) error  { return nil }
func (noCloud) Attach(context.Context, CloudEnv) error { return nil }
func (noCloud) CCMConfig() ([]byte, error)             { return nil, nil }
func (noCloud) Instances() InstanceControl             { return nil }
func (noCloud) Inspector() Inspector                   { return nil }

// Where: the CCM's cloud is its own; only a plugin, if given, asks it.
func (noCloud) Where() string { return "the CCM's own cloud, which the harness does not know" }

var _ Reached = noCloud{}
