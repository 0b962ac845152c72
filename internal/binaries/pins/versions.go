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

// Package pins is which version of each upstream module the harness builds
// from: the versions go.mod requires, the Kubernetes releases a cluster may
// run, and the -X flags that make a Kubernetes binary report its release.
// It is a leaf, so that a door naming the releases in its help, or a
// provider pinning its CCM, does not link the build machinery.
package pins

import "strings"

// ModulePath is this repository's module, whose own components are built
// from the source tree rather than cached by version.
const ModulePath = "sigs.k8s.io/ccm-harness"

// Kubernetes is the module of Kubernetes' own binaries, whose versions are
// KubernetesReleases.
const Kubernetes = "k8s.io/kubernetes"

// Versions pins every upstream module the harness builds components from
// with its own go.mod. It must equal what go.mod requires
// (TestVersionsMatchGoMod checks), so a cached binary's version is known
// without the source tree, and without the module being linked into the
// binary that asks.
var Versions = map[string]string{
	Kubernetes:                  "v1.37.2",
	"go.etcd.io/etcd/server/v3": "v3.7.1",
	"sigs.k8s.io/kwok":          "v0.8.0",
	// kind's base-image files are what the kind runtime's node image is
	// made of, besides Debian and the binaries.
	"sigs.k8s.io/kind": "v0.33.0",
	// Ginkgo's command line runs upstream's e2e.test in parallel
	// processes; the suites link Ginkgo too, at this version for the
	// default release.
	Ginkgo: "v2.34.0",
}

// Ginkgo is the module of the Ginkgo test framework and its command line.
const Ginkgo = "github.com/onsi/ginkgo/v2"

// KubernetesReleases are the releases a cluster may run
// (--kubernetes-version): the newest patch of each supported minor that the
// module proxy serves, newest first. The one go.mod requires is the
// default, built with this repository's go.mod (its packages shared with
// the harness's own build); the others are built in modules generated for
// them, which require that release and its staging modules.
var KubernetesReleases = []string{"v1.37.2", "v1.36.3", "v1.35.4", "v1.34.4"}

// ModuleVersion is the pinned version of module in this repository's
// go.mod, or "".
func ModuleVersion(module string) string { return Versions[module] }

// KubeVersion are the -X flags that make a Kubernetes binary report
// release v, as upstream's release builds do.
func KubeVersion(v string) []string {
	major, minor := "", ""
	if parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3); len(parts) >= 2 {
		major, minor = parts[0], parts[1]
	}
	const pkg = "k8s.io/component-base/version"
	return []string{
		"-X", pkg + ".gitVersion=" + v,
		"-X", pkg + ".gitMajor=" + major,
		"-X", pkg + ".gitMinor=" + minor,
		"-X", pkg + ".gitTreeState=clean",
	}
}
