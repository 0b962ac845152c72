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

package binaries

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
)

// Component is an executable the harness can build.
type Component struct {
	Name string
	// Module is the Go module whose pinned version names the build. It is
	// pins.ModulePath for the harness's own components.
	Module string
	// Package is the main package to build.
	Package string
	// VersionLDFlags, if set, maps the module version to -X flags so the
	// binary reports the version it was built from.
	VersionLDFlags func(version string) []string
	// Version is the module version to build; empty for the pinned
	// default. Set it with At.
	Version string
	// Versions pins the versions of Module a component built in a module
	// generated for it may be built from, the default first; empty for one
	// built with this repository's go.mod at its version (pins.Versions).
	// The component's owner pins them where it defines it: a provider's
	// CCM in its provider's folder.
	Versions []string
	// Sources, set for a component of this repository built against an
	// older release of Module (one of Versions), or for a main package of
	// this repository that builds Module's packages (CoreDNS with the
	// plugins it picks), are the directories of this repository copied
	// into the module generated for its build.
	Sources []string
	// Aligned are the Versions built with this repository's dependency
	// versions wherever they are at least the component's own (Go's
	// minimal version selection takes the higher of the two), Kubernetes'
	// staging modules included: the packages it shares with the harness
	// then come from the Go build cache instead of being compiled again
	// (minutes on 2 cores). The component's own code is unchanged, but on
	// an older Kubernetes minor the libraries it links, the controllers
	// of k8s.io/cloud-provider among them, are this repository's release
	// rather than its own: its owner says so where it lists one. Such a
	// binary is cached under the Kubernetes version too.
	Aligned []string
	// Own are the modules (a path, or a prefix ending in "/") an Aligned
	// build keeps at the component's own versions: its cloud's SDK, whose
	// requests are what the harness judges, so that they are the ones the
	// released CCM sends. The rest may be lifted.
	Own []string
	// Releases, for a component of this repository, are the other
	// Kubernetes releases it may be built on (At): each in a module
	// generated for it, with Sources copied in, as an older release's
	// managers are.
	Releases []string
	// Withheld are the modules the component's go.mod replaces with a fork
	// the module proxy refuses, each with the version of the module itself
	// to require instead: the generated module leaves such a replace out.
	Withheld map[string]string
	// Image, if set, is a container image whose entrypoint is the
	// executable (see internal/oci): nothing is built, the image is
	// unpacked.
	Image string
	// Path, if set, is a ready-made executable: nothing is built.
	Path string
	// Tags are the build tags of a component built in a module generated
	// for it: providerless, for a Kubernetes release that still compiles
	// the legacy cloud providers in, leaves out what a build that brings
	// its own cloud provider never calls (the GCE provider and its
	// compute API: a third of kube-controller-manager v1.30's source).
	Tags []string
	// Floored builds of a version that is not Aligned take the floor of
	// its Kubernetes minor (pins.Floors), if it has one, so that the CCMs
	// built on that minor share their compiled packages. For CCMs, whose
	// versions follow Kubernetes' minors; never for the release's own
	// binaries, which are built as released.
	Floored bool
	// Test builds Package's test binary (go test -c) instead of a main
	// package: Kubernetes' own e2e.test. Only in a module generated for it
	// (Versions), whose go.sum takes the suite's test dependencies.
	Test bool

	// builtAs is the name the component is built and cached under where
	// it runs under another (Renamed): one binary, one build.
	builtAs string
}

// Renamed is c under another name, for a second copy of it to run beside
// one of the same name (the CCM an upgrade starts from, beside the CCM):
// it is still built and cached as c.
func (c Component) Renamed(name string) Component {
	if c.builtAs == "" {
		c.builtAs = c.Name
	}
	c.Name = name
	return c
}

// buildName is the name c is built and cached under.
func (c Component) buildName() string {
	if c.builtAs != "" {
		return c.builtAs
	}
	return c.Name
}

// String names the component and the version it is built from.
func (c Component) String() string { return describe([]Component{c}) }

// WithImage is c run from a container image instead.
func (c Component) WithImage(ref string) Component {
	return Component{Name: c.Name, Image: ref}
}

// version is the module version c is built from.
func (c Component) version() string {
	if c.Version != "" {
		return c.Version
	}
	if vs := c.pinned(); len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// pinned are the versions of c's module c may be built from, the default
// first.
func (c Component) pinned() []string {
	if len(c.Versions) > 0 {
		return c.Versions
	}
	v, ok := pins.Versions[c.Module]
	if !ok {
		return nil
	}
	if c.Module == pins.Kubernetes {
		return defaultFirst(v, pins.KubernetesReleases)
	}
	return []string{v}
}

// defaultFirst is def, then the rest of vs.
func defaultFirst(def string, vs []string) []string {
	out := []string{def}
	for _, v := range vs {
		if v != def {
			out = append(out, v)
		}
	}
	return out
}

// ownModule reports whether c is built in a module generated for it: its
// dependencies conflict with this repository's, or it is built against
// another release than go.mod's.
func (c Component) ownModule() bool {
	return len(c.Versions) > 0 || (c.Version != "" && c.Version != pins.Versions[c.Module])
}

// At is c built from another pinned version of its module; "" keeps the
// default. A component of this repository may be built on another
// Kubernetes release it lists in Releases.
func (c Component) At(version string) (Component, error) {
	if version == "" {
		return c, nil
	}
	if c.Module == pins.ModulePath {
		def := pins.Versions[pins.Kubernetes]
		switch {
		case version == def && len(c.Releases) > 0:
			return c, nil
		case slices.Contains(c.Releases, version):
			return Component{Name: c.Name, Module: pins.Kubernetes, Package: c.Package, VersionLDFlags: pins.KubeVersion,
				Versions: []string{version}, Sources: c.Sources, Floored: c.Floored}, nil
		case len(c.Releases) > 0:
			return Component{}, fmt.Errorf("%s: Kubernetes release %s is not one it is built on (built on: %s)", c.Name, version, strings.Join(defaultFirst(def, c.Releases), ", "))
		}
		return Component{}, fmt.Errorf("%s is built from this repository and has no other version than its source (drop the version %s)", c.Name, version)
	}
	if pinned := c.pinned(); !slices.Contains(pinned, version) {
		return Component{}, fmt.Errorf("%s: version %s of %s is not pinned (pinned: %s)", c.Name, version, c.Module, strings.Join(pinned, ", "))
	}
	c.Version = version
	return c, nil
}

// Choices are the versions At takes, the default first; none for a
// component of this repository with no Releases, or an image.
func (c Component) Choices() []string {
	switch {
	case c.Image != "" || c.Path != "":
		return nil
	case c.Module == pins.ModulePath && len(c.Releases) > 0:
		return defaultFirst(pins.Versions[pins.Kubernetes], c.Releases)
	case c.Module == pins.ModulePath:
		return nil
	}
	return c.pinned()
}

// Release is the release c is built from: its module's version, or, for
// a component of this repository, the Kubernetes release whose libraries
// it links (go.mod's). "" for an image or a ready-made executable, whose
// release the harness cannot know.
func (c Component) Release() string {
	switch {
	case c.Image != "" || c.Path != "":
		// The release its user says it is (a profile's ccm.version,
		// --ccm-version beside --ccm-image), or unknown.
		return c.Version
	case c.Module == pins.ModulePath:
		return pins.Versions[pins.Kubernetes]
	}
	return c.version()
}

// The components the local runtime and the providers use.
var (
	Etcd                  = Component{Name: "etcd", Module: "go.etcd.io/etcd/server/v3", Package: pins.ModulePath + "/cmd/etcd"}
	KubeAPIServer         = Component{Name: "kube-apiserver", Module: pins.Kubernetes, Package: "k8s.io/kubernetes/cmd/kube-apiserver", VersionLDFlags: pins.KubeVersion}
	KubeControllerManager = Component{Name: "kube-controller-manager", Module: pins.Kubernetes, Package: "k8s.io/kubernetes/cmd/kube-controller-manager", VersionLDFlags: pins.KubeVersion}
	Kwok                  = Component{Name: "kwok", Module: "sigs.k8s.io/kwok", Package: "sigs.k8s.io/kwok/cmd/kwok"}
	// Kwokctl is kwok's cluster tool, which make bench races the local
	// runtime against.
	Kwokctl = Component{Name: "kwokctl", Module: "sigs.k8s.io/kwok", Package: "sigs.k8s.io/kwok/cmd/kwokctl"}
	// The rest of a release, for the kind runtime's node image.
	Kubelet       = Component{Name: "kubelet", Module: pins.Kubernetes, Package: "k8s.io/kubernetes/cmd/kubelet", VersionLDFlags: pins.KubeVersion}
	Kubeadm       = Component{Name: "kubeadm", Module: pins.Kubernetes, Package: "k8s.io/kubernetes/cmd/kubeadm", VersionLDFlags: pins.KubeVersion}
	Kubectl       = Component{Name: "kubectl", Module: pins.Kubernetes, Package: "k8s.io/kubernetes/cmd/kubectl", VersionLDFlags: pins.KubeVersion}
	KubeScheduler = Component{Name: "kube-scheduler", Module: pins.Kubernetes, Package: "k8s.io/kubernetes/cmd/kube-scheduler", VersionLDFlags: pins.KubeVersion}
	KubeProxy     = Component{Name: "kube-proxy", Module: pins.Kubernetes, Package: "k8s.io/kubernetes/cmd/kube-proxy", VersionLDFlags: pins.KubeVersion}
	// Crictl is built in a module of its own: kind's log collection asks it.
	// Aligned, as CoreDNS is: a CRI client, it links client-go, gRPC and
	// the rest at this repository's versions, found in the Go build cache
	// (built alone on empty caches it compiled them: 233 s niced in make
	// test; aligned, 9 s once the harness is built).
	Crictl = Component{Name: "crictl", Module: "sigs.k8s.io/cri-tools", Package: "sigs.k8s.io/cri-tools/cmd/crictl", Versions: []string{"v1.36.0"}, Aligned: []string{"v1.36.0"}}
	// CoreDNS is the kind nodes' cluster DNS: CoreDNS v1.14.6, the one
	// kubeadm v1.37 deploys, with the plugins of kubeadm's Corefile
	// (cluster/kind/coredns). Every release's nodes run it, under the name
	// their kubeadm asks for (v1.34's asks for v1.12.1): one build.
	// Aligned: its dependencies are no newer than the harness's, so
	// client-go and the rest come from the Go build cache.
	CoreDNS = Component{Name: "coredns", Module: "github.com/coredns/coredns", Package: pins.ModulePath + "/cluster/kind/coredns",
		Versions: []string{"v1.14.6"}, Aligned: []string{"v1.14.6"}, Sources: []string{"cluster/kind/coredns"}}
	// Agnhost is the e2e framework's test server, the backend pods of the
	// [datapath] specs.
	Agnhost = Component{Name: "agnhost", Module: pins.Kubernetes, Package: "k8s.io/kubernetes/test/images/agnhost"}
	// UpstreamE2E is Kubernetes' own e2e suite, the e2e.test of a release,
	// which make e2e-upstream runs against a cluster the harness made. In
	// a module generated for it: the suite's test dependencies (every SIG's
	// drivers) are not go.mod's. The default release is aligned, so the
	// e2e framework and client-go come from the harness's build cache; the
	// providerless tag leaves out the legacy clouds' framework providers
	// (GCE's compute API), as upstream's providerless jobs do.
	UpstreamE2E = Component{Name: "e2e.test", Module: pins.Kubernetes, Package: "k8s.io/kubernetes/test/e2e", Test: true,
		VersionLDFlags: pins.KubeVersion, Versions: pins.KubernetesReleases, Aligned: []string{pins.Versions[pins.Kubernetes]}, Tags: []string{"providerless"}}
	// GinkgoCLI is Ginkgo's command line, which runs upstream's e2e.test in
	// parallel processes (upstream --procs), as Kubernetes' own jobs do
	// (hack/ginkgo-e2e.sh): its parallel specs share a server that only
	// the command line runs.
	GinkgoCLI = Component{Name: "ginkgo", Module: pins.Ginkgo, Package: pins.Ginkgo + "/ginkgo"}
	// Pause is the pod sandbox's process, the kind node image's pause image.
	Pause = Component{Name: "pause", Module: pins.ModulePath, Package: pins.ModulePath + "/cluster/kind/pause"}
)

// aligned reports whether c's version is built with this repository's
// dependency versions.
func (c Component) aligned() bool { return slices.Contains(c.Aligned, c.version()) }

// floor is the floor c's build takes (see Floored), nil for none.
func (c Component) floor() []string {
	if !c.Floored || c.aligned() {
		return nil
	}
	return pins.Floors[pins.Minor(c.version())]
}

func names(comps []Component) string {
	var n []string
	for _, c := range comps {
		n = append(n, c.Name)
	}
	return strings.Join(n, ", ")
}

func describe(comps []Component) string {
	var n []string
	for _, c := range comps {
		switch {
		case c.Image != "" && c.Version != "":
			n = append(n, c.Name+" "+c.Version+" from image "+c.Image)
		case c.Image != "":
			n = append(n, c.Name+" from image "+c.Image)
		case c.Path != "" && c.Version != "":
			n = append(n, c.Name+" "+c.Version+" at "+c.Path)
		case c.Path != "":
			n = append(n, c.Name+" at "+c.Path)
		case c.Module == pins.ModulePath && len(c.Releases) > 0:
			// Built on go.mod's Kubernetes release (a CCM of this
			// repository): the release it reports.
			n = append(n, c.Name+" "+c.Release())
		case c.Module == pins.ModulePath:
			n = append(n, c.Name)
		default:
			n = append(n, c.Name+" "+c.version())
		}
	}
	return strings.Join(n, ", ")
}
