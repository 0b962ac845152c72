package vsphere

import "sigs.k8s.io/ccm-harness/internal/binaries"

// The vSphere provider's components.
var (
	// CCM is the vSphere CCM, unmodified, built in a module generated for
	// it: cloud-provider-vsphere v1.31 needs k8s.io/* v0.31 and govmomi
	// v0.39, which conflict with this repository's. The first version is
	// the default; --ccm-version picks another. Its main reports
	// main.version.
	CCM = binaries.Component{
		Name:           "vsphere-cloud-controller-manager",
		Module:         "k8s.io/cloud-provider-vsphere",
		Package:        "k8s.io/cloud-provider-vsphere/cmd/vsphere-cloud-controller-manager",
		VersionLDFlags: func(v string) []string { return []string{"-X", "main.version=" + v} },
		Versions:       []string{"v1.31.0", "v1.30.1"},
	}
	// VCSim is govmomi's vCenter simulator, served on a CCM port and a
	// harness port.
	VCSim = binaries.Component{Name: "vcsim", Module: binaries.ModulePath, Package: binaries.ModulePath + "/providers/vsphere/cmd/vcsim"}
)
