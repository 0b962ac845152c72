package binaries

// Versions pins every upstream module the harness builds components from
// with its own go.mod. It must equal what go.mod requires
// (TestVersionsMatchGoMod checks), so a cached binary's version is known
// without the source tree, and without the module being linked into the
// binary that asks.
var Versions = map[string]string{
	"k8s.io/kubernetes":         "v1.36.3",
	"go.etcd.io/etcd/server/v3": "v3.6.8",
	"sigs.k8s.io/kwok":          "v0.8.0",
	// kind's base-image files are what the kind runtime's node image is
	// made of, besides Debian and the binaries.
	"sigs.k8s.io/kind": "v0.33.0",
}

// OwnModuleVersions pins the upstream modules built each in a module of its
// own, generated in the cache, because their dependencies conflict with
// this repository's (cloud-provider-vsphere v1.31 needs k8s.io/* v0.31).
// The first version is the default; a component's At picks another.
var OwnModuleVersions = map[string][]string{
	"k8s.io/cloud-provider-vsphere": {"v1.31.0", "v1.30.1"},
	// crictl, for the kind node image: kind's log collection asks it.
	"sigs.k8s.io/cri-tools": {"v1.36.0"},
}

// ReleaseVersions pins older releases of upstream modules that components
// of this repository are built against, each in a module generated in the
// cache with the component's sources copied in (Component.Sources).
// kube-controller-manager v1.30 is the last that runs cloud controllers
// in-tree: the "KCM only" release of the leader-migration scenarios.
var ReleaseVersions = map[string][]string{
	"k8s.io/kubernetes": {"v1.30.14"},
}

// ModuleVersion is the default pinned version of module, or "".
func ModuleVersion(module string) string {
	if v, ok := Versions[module]; ok {
		return v
	}
	if vs := OwnModuleVersions[module]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// PinnedVersions lists the versions of module a component may be built
// from, the default first.
func PinnedVersions(module string) []string {
	if v, ok := Versions[module]; ok {
		return []string{v}
	}
	return OwnModuleVersions[module]
}
