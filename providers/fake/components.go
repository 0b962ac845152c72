package fake

import "sigs.k8s.io/ccm-harness/internal/binaries"

// The fake provider's components: fakecloud and its CCM from this
// repository, and, for the leader-migration specs, the managers of an
// older release built with the fakecloud sources copied in.
var (
	// FakeCloud is the cloud simulator.
	FakeCloud = binaries.Component{Name: "fakecloud", Module: binaries.ModulePath, Package: binaries.ModulePath + "/fakecloud/cmd/fakecloud"}
	// CCM is fakecloud's cloud-controller-manager, built on
	// k8s.io/cloud-provider of the same release as the control plane; it
	// reports that release rather than "v0.0.0-master".
	CCM = binaries.Component{Name: "fakecloud-ccm", Module: binaries.ModulePath, Package: binaries.ModulePath + "/fakecloud/cmd/fakecloud-ccm",
		VersionLDFlags: func(string) []string { return binaries.KubeVersion(binaries.ModuleVersion("k8s.io/kubernetes")) }}
	// InTreeKCM is kube-controller-manager of release N with fakecloud
	// compiled in as an in-tree cloud provider.
	InTreeKCM = binaries.Component{
		Name:           "kube-controller-manager-fakecloud",
		Module:         "k8s.io/kubernetes",
		Package:        binaries.ModulePath + "/fakecloud/cmd/kube-controller-manager-fakecloud",
		VersionLDFlags: binaries.KubeVersion,
		Versions:       releaseN,
		Sources:        append(sources, "fakecloud/cmd/kube-controller-manager-fakecloud"),
	}
	// OlderCCM is the fakecloud CCM built on k8s.io/cloud-provider of
	// release N: the CCM an upgrade starts from.
	OlderCCM = binaries.Component{
		Name:           "fakecloud-ccm-older",
		Module:         "k8s.io/kubernetes",
		Package:        binaries.ModulePath + "/fakecloud/cmd/fakecloud-ccm",
		VersionLDFlags: binaries.KubeVersion,
		Versions:       releaseN,
		Sources:        append(sources, "fakecloud/cmd/fakecloud-ccm"),
	}
)

// releaseN pins release N of the leader-migration specs: kube-controller-
// manager v1.30 is the last that runs cloud controllers in-tree.
var releaseN = []string{"v1.30.14"}

// sources are what a main built on fakecloud's provider needs copied into
// a release build. Full slice expression: each append copies.
var sources = []string{"fakecloud/api", "fakecloud/client", "fakecloud/cloudprovider"}[:3:3]
