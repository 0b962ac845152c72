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

package openstack

import (
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
)

// CCM is the OpenStack CCM, unmodified, built in a module generated for
// it with this repository's dependency versions (Aligned), so that most of
// its packages come from the Go build cache: the CCMs add about a minute
// each to a cold CI run instead of five. No v1.37 release is served here,
// so both link k8s.io/* v0.37.2, not their releases' v0.36.0 and v0.35.0:
// their own code is theirs, the controllers they run from
// k8s.io/cloud-provider are 1.37's (docs/providers/openstack.md).
// gophercloud, the OpenStack client whose requests fakecloud answers,
// stays each release's own (Own: v2.12.0 and v2.8.0). The first version is
// the default; --ccm-version picks another. It reports its version as
// upstream's release build does.
var CCM = binaries.Component{
	Name:    "openstack-cloud-controller-manager",
	Module:  "k8s.io/cloud-provider-openstack",
	Package: "k8s.io/cloud-provider-openstack/cmd/openstack-cloud-controller-manager",
	VersionLDFlags: func(v string) []string {
		return append(pins.KubeVersion(v), "-X", "k8s.io/cloud-provider-openstack/pkg/version.Version="+v)
	},
	Versions: []string{"v1.36.0", "v1.35.0"},
	Aligned:  []string{"v1.36.0", "v1.35.0"},
	Own:      []string{"github.com/gophercloud/"},
	Floored:  true,
}
