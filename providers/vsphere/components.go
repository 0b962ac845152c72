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

package vsphere

import (
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
)

// The vSphere provider's components.
var (
	// CCM is the vSphere CCM, unmodified, built in a module generated for
	// it. v1.30.1 is built with this repository's dependency versions
	// (Aligned), so that most of its packages come from the Go build
	// cache: built alone on a cold cache it took over twelve minutes,
	// aligned about one. It links k8s.io/* v0.37.2, not its release's
	// v0.30: its own code is its, the controllers it runs from
	// k8s.io/cloud-provider are 1.37's (docs/providers/vsphere.md). govmomi,
	// the vSphere client whose requests vcsim answers, stays its own (Own:
	// v0.37.2), not this repository's v0.52. v1.31.0 links its own
	// release's libraries: its vm-operator API needs controller-runtime
	// v0.18, which does not compile against client-go v0.37. The first
	// version is the default; --ccm-version picks another. Its main
	// reports main.version.
	CCM = binaries.Component{
		Name:           "vsphere-cloud-controller-manager",
		Module:         "k8s.io/cloud-provider-vsphere",
		Package:        "k8s.io/cloud-provider-vsphere/cmd/vsphere-cloud-controller-manager",
		VersionLDFlags: func(v string) []string { return []string{"-X", "main.version=" + v} },
		Versions:       []string{"v1.31.0", "v1.30.1"},
		Aligned:        []string{"v1.30.1"},
		Own:            []string{"github.com/vmware/govmomi"},
		Floored:        true,
	}
	// VCSim is govmomi's vCenter simulator, served on a CCM port and a
	// harness port.
	VCSim = binaries.Component{Name: "vcsim", Module: pins.ModulePath, Package: pins.ModulePath + "/providers/vsphere/cmd/vcsim"}
)
