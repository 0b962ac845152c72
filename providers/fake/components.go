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

package fake

import (
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
)

// The fake provider's components: fakecloud's CCM from this
// repository, and, for the leader-migration specs, the managers of an
// older release built with the fakecloud sources copied in.
var (
	// CCM is fakecloud's cloud-controller-manager, built on
	// k8s.io/cloud-provider of go.mod's release; it reports that release
	// rather than "v0.0.0-master". For a cluster of another release
	// (--kubernetes-version) it is built on that release's
	// k8s.io/cloud-provider instead (--ccm-version picks another), so the
	// CCM a provider would ship with each minor is the one tested.
	CCM = binaries.Component{Name: "fakecloud-ccm", Module: pins.ModulePath, Package: pins.ModulePath + "/fakecloud/cmd/fakecloud-ccm",
		VersionLDFlags: func(string) []string { return pins.KubeVersion(pins.ModuleVersion(pins.Kubernetes)) },
		Releases:       otherReleases(),
		Sources:        append(sources, "fakecloud/cmd/fakecloud-ccm"),
		Floored:        true,
	}
	// InTreeKCM is kube-controller-manager of release N with fakecloud
	// compiled in as an in-tree cloud provider.
	InTreeKCM = binaries.Component{
		Name:           "kube-controller-manager-fakecloud",
		Module:         "k8s.io/kubernetes",
		Package:        pins.ModulePath + "/fakecloud/cmd/kube-controller-manager-fakecloud",
		VersionLDFlags: pins.KubeVersion,
		Versions:       releaseN,
		Sources:        append(sources, "fakecloud/cmd/kube-controller-manager-fakecloud"),
		// fakecloud is its cloud provider; the GCE one is left out.
		Tags: []string{"providerless"},
	}
	// OlderCCM is the fakecloud CCM built on k8s.io/cloud-provider of
	// release N: the CCM an upgrade starts from.
	OlderCCM = binaries.Component{
		Name:           "fakecloud-ccm-older",
		Module:         "k8s.io/kubernetes",
		Package:        pins.ModulePath + "/fakecloud/cmd/fakecloud-ccm",
		VersionLDFlags: pins.KubeVersion,
		Versions:       releaseN,
		Sources:        append(sources, "fakecloud/cmd/fakecloud-ccm"),
		Floored:        true,
	}
)

// otherReleases are the supported Kubernetes releases but go.mod's.
func otherReleases() []string {
	var out []string
	for _, r := range pins.KubernetesReleases {
		if r != pins.ModuleVersion(pins.Kubernetes) {
			out = append(out, r)
		}
	}
	return out
}

// releaseN pins release N of the leader-migration specs: kube-controller-
// manager v1.30 is the last that runs cloud controllers in-tree.
var releaseN = []string{"v1.30.14"}

// sources are what a main built on fakecloud's provider needs copied into
// a release build. Full slice expression: each append copies.
var sources = []string{"fakecloud/api", "fakecloud/client", "fakecloud/cloudprovider"}[:3:3]
