package openstack

import "sigs.k8s.io/ccm-harness/internal/binaries"

// CCM is the OpenStack CCM, unmodified, built in a module generated for
// it with this repository's dependency versions (Aligned), so that most of
// its packages come from the Go build cache: the CCMs add about a minute
// each to a cold CI run instead of five. No v1.37 release is served here,
// so both link k8s.io/* v0.37.2, not their releases' v0.36.0 and v0.35.0:
// their own code is theirs, the controllers they run from
// k8s.io/cloud-provider are 1.37's (docs/providers/openstack.md). The first version is the default; --ccm-version picks
// another. It reports its version as upstream's release build does.
var CCM = binaries.Component{
	Name:    "openstack-cloud-controller-manager",
	Module:  "k8s.io/cloud-provider-openstack",
	Package: "k8s.io/cloud-provider-openstack/cmd/openstack-cloud-controller-manager",
	VersionLDFlags: func(v string) []string {
		return append(binaries.KubeVersion(v), "-X", "k8s.io/cloud-provider-openstack/pkg/version.Version="+v)
	},
	Versions: []string{"v1.36.0", "v1.35.0"},
	Aligned:  []string{"v1.36.0", "v1.35.0"},
}
