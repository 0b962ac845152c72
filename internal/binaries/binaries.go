// Package binaries finds or builds the executables a cluster runs.
//
// Upstream components (etcd, kube-apiserver, kube-controller-manager, kwok)
// are built from the module versions pinned in this repository's go.mod and
// kept in a cache keyed by component and version, outside the repository, so
// a second run builds nothing. Upstream CCMs whose dependencies conflict with
// ours (the vSphere CCM) are built the same way from a module generated for
// each in the cache. The harness's own binaries (fakecloud and its CCM,
// vcsim) are rebuilt when their sources change. A user who has binaries
// already names a directory instead.
package binaries

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"go/version"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/sync/errgroup"

	"sigs.k8s.io/ccm-harness/internal/filelock"
	"sigs.k8s.io/ccm-harness/internal/oci"
)

// ModulePath is this repository's module, whose own components are built
// from the source tree rather than cached by version.
const ModulePath = "sigs.k8s.io/ccm-harness"

// Component is an executable the harness can build.
type Component struct {
	Name string
	// Module is the Go module whose pinned version names the build. It is
	// ModulePath for the harness's own components.
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
	// built with this repository's go.mod at its version (Versions in
	// versions.go). The component's owner pins them where it defines it: a
	// provider's CCM in its provider's folder.
	Versions []string
	// Sources, set for a component of this repository built against an
	// older release of Module (one of Versions), are the directories of
	// this repository copied into the module generated for its build.
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
	v, ok := Versions[c.Module]
	if !ok {
		return nil
	}
	if c.Module == kubernetesModule {
		return defaultFirst(v, KubernetesReleases)
	}
	return []string{v}
}

const kubernetesModule = "k8s.io/kubernetes"

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
	return len(c.Versions) > 0 || (c.Version != "" && c.Version != Versions[c.Module])
}

// At is c built from another pinned version of its module; "" keeps the
// default. A component of this repository may be built on another
// Kubernetes release it lists in Releases.
func (c Component) At(version string) (Component, error) {
	if version == "" {
		return c, nil
	}
	if c.Module == ModulePath {
		def := Versions[kubernetesModule]
		switch {
		case version == def && len(c.Releases) > 0:
			return c, nil
		case slices.Contains(c.Releases, version):
			return Component{Name: c.Name, Module: kubernetesModule, Package: c.Package, VersionLDFlags: KubeVersion,
				Versions: []string{version}, Sources: c.Sources}, nil
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
	case c.Module == ModulePath && len(c.Releases) > 0:
		return defaultFirst(Versions[kubernetesModule], c.Releases)
	case c.Module == ModulePath:
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
	case c.Module == ModulePath:
		return Versions[kubernetesModule]
	}
	return c.version()
}

// The components the local runtime and the providers use.
var (
	Etcd                  = Component{Name: "etcd", Module: "go.etcd.io/etcd/server/v3", Package: ModulePath + "/cmd/etcd"}
	KubeAPIServer         = Component{Name: "kube-apiserver", Module: kubernetesModule, Package: "k8s.io/kubernetes/cmd/kube-apiserver", VersionLDFlags: KubeVersion}
	KubeControllerManager = Component{Name: "kube-controller-manager", Module: kubernetesModule, Package: "k8s.io/kubernetes/cmd/kube-controller-manager", VersionLDFlags: KubeVersion}
	Kwok                  = Component{Name: "kwok", Module: "sigs.k8s.io/kwok", Package: "sigs.k8s.io/kwok/cmd/kwok"}
	// Kwokctl is kwok's cluster tool, which make bench races the local
	// runtime against.
	Kwokctl = Component{Name: "kwokctl", Module: "sigs.k8s.io/kwok", Package: "sigs.k8s.io/kwok/cmd/kwokctl"}
	// The rest of a release, for the kind runtime's node image.
	Kubelet       = Component{Name: "kubelet", Module: kubernetesModule, Package: "k8s.io/kubernetes/cmd/kubelet", VersionLDFlags: KubeVersion}
	Kubeadm       = Component{Name: "kubeadm", Module: kubernetesModule, Package: "k8s.io/kubernetes/cmd/kubeadm", VersionLDFlags: KubeVersion}
	Kubectl       = Component{Name: "kubectl", Module: kubernetesModule, Package: "k8s.io/kubernetes/cmd/kubectl", VersionLDFlags: KubeVersion}
	KubeScheduler = Component{Name: "kube-scheduler", Module: kubernetesModule, Package: "k8s.io/kubernetes/cmd/kube-scheduler", VersionLDFlags: KubeVersion}
	KubeProxy     = Component{Name: "kube-proxy", Module: kubernetesModule, Package: "k8s.io/kubernetes/cmd/kube-proxy", VersionLDFlags: KubeVersion}
	// Crictl is built in a module of its own: kind's log collection asks it.
	Crictl = Component{Name: "crictl", Module: "sigs.k8s.io/cri-tools", Package: "sigs.k8s.io/cri-tools/cmd/crictl", Versions: []string{"v1.36.0"}}
	// Agnhost is the e2e framework's test server, the backend pods of the
	// [datapath] specs.
	Agnhost = Component{Name: "agnhost", Module: kubernetesModule, Package: "k8s.io/kubernetes/test/images/agnhost"}
	// Pause is the pod sandbox's process, the kind node image's pause image.
	Pause = Component{Name: "pause", Module: ModulePath, Package: ModulePath + "/cluster/kind/pause"}
)

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

// Source finds binaries: in Dir if the user named one, else in the cache,
// building what is missing from the source tree.
type Source struct {
	// Dir, if set, holds every binary ready-made; nothing is built.
	Dir string
	// CacheDir holds upstream builds; default DefaultCacheDir().
	CacheDir string
	// SourceDir is the checkout of this repository to build from; default:
	// found by walking up from the working directory.
	SourceDir string
	// Logf reports progress on long builds; may be nil.
	Logf func(format string, args ...any)

	// mu is held for the whole of Paths: the HA members ask for the same
	// binary at once, and one builds it while the others wait.
	mu sync.Mutex
	// images are the unpacked images, by component name.
	images map[string]*oci.Image

	// waitedMu guards waited alone. It is not mu: lockBuild runs inside
	// Paths, which holds mu (taking mu there deadlocked a cold make e2e
	// whose background build held a lock).
	waitedMu sync.Mutex
	// waited are the builds another process holds that this source said
	// it waits for: said once, though several managers (the HA members)
	// ask for the same binary at once.
	waited map[string]bool
}

// DefaultCacheDir is $CCM_HARNESS_CACHE, else $XDG_CACHE_HOME/ccm-harness,
// else ~/.cache/ccm-harness.
func DefaultCacheDir() string {
	if d := os.Getenv("CCM_HARNESS_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "ccm-harness")
	}
	return filepath.Join(os.TempDir(), "ccm-harness-cache")
}

// Paths returns the path of each component, building what is missing.
// Components missing from the cache are built in one `go build` so they
// share its parallelism.
func (s *Source) Paths(ctx context.Context, comps ...Component) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	var missing []Component
	for _, c := range comps {
		switch {
		case c.Path != "":
			if err := checkExecutable(c.Path); err != nil {
				return nil, fmt.Errorf("%s: %w", c.Name, err)
			}
			out[c.Name] = c.Path
		case c.Image != "":
			img, err := oci.Unpack(ctx, c.Image, filepath.Join(s.cacheDir(), "images"))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Name, err)
			}
			if s.images == nil {
				s.images = map[string]*oci.Image{}
			}
			s.images[c.Name] = img
			out[c.Name] = img.Root
		case s.Dir != "":
			p := filepath.Join(s.Dir, c.Name)
			if err := checkExecutable(p); err != nil {
				return nil, fmt.Errorf("%s not found in the binary directory %s: %v (put all of %s there, or leave --bin-dir and BIN_DIR unset to build them)", c.Name, s.Dir, err, names(comps))
			}
			out[c.Name] = p
		default:
			p, fresh, err := s.cachedPath(c)
			if err != nil {
				return nil, err
			}
			out[c.Name] = p
			if !fresh {
				missing = append(missing, c)
			}
		}
	}
	if len(missing) > 0 {
		if err := s.build(ctx, missing, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Image is an image component's unpacked image, nil for other
// components: its path from Paths is the image's root file system, which
// runs in a container (internal/container). Call Paths first.
func (s *Source) Image(c Component) *oci.Image {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Image == "" {
		return nil
	}
	return s.images[c.Name]
}

// cachedPath is where c lives and whether that file is usable as it is.
func (s *Source) cachedPath(c Component) (string, bool, error) {
	if c.Module == ModulePath {
		src, err := s.sourceDir()
		if err != nil {
			return "", false, fmt.Errorf("%s: %w", c.Name, err)
		}
		p := filepath.Join(src, "_output", "bin", c.buildName())
		return p, newerThanSources(p, src), nil
	}
	v := c.version()
	if v == "" {
		return "", false, fmt.Errorf("%s: module %s has no pinned version (is internal/binaries/versions.go intact?)", c.Name, c.Module)
	}
	if len(c.Sources) > 0 {
		// Our sources change more often than the release: key by both.
		src, err := s.sourceDir()
		if err != nil {
			return "", false, fmt.Errorf("%s: %w", c.Name, err)
		}
		sum, err := sourcesHash(src, c.Sources)
		if err != nil {
			return "", false, fmt.Errorf("%s: %w", c.Name, err)
		}
		v += "-" + sum
	}
	if c.aligned() {
		v += "-with-" + Versions[kubernetesModule]
	}
	for _, t := range c.Tags {
		v += "-" + t
	}
	p := filepath.Join(s.cacheDir(), "bin", runtime.GOOS+"-"+runtime.GOARCH, c.buildName(), v, c.buildName())
	return p, checkExecutable(p) == nil, nil
}

// buildJobs is how many builds run at once. Each go build compiles on
// every core already; a second overlaps its module downloads and its
// single-threaded link with the other's compiling, which on a cold cache
// shortens the whole by minutes.
const buildJobs = 2

func (s *Source) build(ctx context.Context, comps []Component, paths map[string]string) error {
	// Components with different -X flags cannot share one go build, nor
	// can those built in a module of their own, which need no source tree.
	groups := map[string][]Component{}
	var order []string
	var own []Component
	for _, c := range comps {
		if c.ownModule() {
			own = append(own, c)
			continue
		}
		flags := ""
		if c.VersionLDFlags != nil {
			flags = strings.Join(c.VersionLDFlags(c.version()), " ")
		}
		if _, ok := groups[flags]; !ok {
			order = append(order, flags)
		}
		groups[flags] = append(groups[flags], c)
	}
	src := ""
	if len(order) > 0 {
		var err error
		if src, err = s.sourceDir(); err != nil {
			var missing []Component
			for _, flags := range order {
				missing = append(missing, groups[flags]...)
			}
			return fmt.Errorf("%s missing from the cache: %w", names(missing), err)
		}
	}
	// The first failure cancels the others' go builds: nothing is left
	// running behind an error.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(buildJobs)
	var big, small []func() error
	for _, flags := range order {
		job := func() error { return s.buildGroup(gctx, src, groups[flags], flags, paths) }
		if slices.ContainsFunc(groups[flags], Component.kubernetes) {
			big = append(big, job)
		} else {
			small = append(small, job)
		}
	}
	// Builds of one Kubernetes release in modules of their own (its
	// kube-apiserver and kube-controller-manager, a CCM of this repository
	// built on it) go one after another: the second finds the release's
	// libraries in the Go build cache, where beside the first it would
	// compile them too.
	releases := map[string][][]Component{}
	var releaseOrder []string
	for _, same := range sameModule(own) {
		if !same[0].kubernetes() {
			small = append(small, func() error { return s.buildOwnModule(gctx, same, paths) })
			continue
		}
		v := same[0].version()
		if _, ok := releases[v]; !ok {
			releaseOrder = append(releaseOrder, v)
		}
		releases[v] = append(releases[v], same)
	}
	for _, v := range releaseOrder {
		big = append(big, func() error {
			for _, same := range releases[v] {
				if err := s.buildOwnModule(gctx, same, paths); err != nil {
					return err
				}
			}
			return nil
		})
	}
	// The longest first (Kubernetes' own binaries take minutes), so the
	// short ones fill in beside them rather than one long build at the end.
	for _, job := range append(big, small...) {
		g.Go(job)
	}
	return g.Wait()
}

// sameModule groups components built in modules generated for them by the
// module they would be generated with: one release's kube-apiserver and
// kube-controller-manager (v1.34.4's, for the oldest cell) are built in one
// module by one go build, which compiles the packages they share once. In
// two builds at once each compiled them itself (19 minutes for the pair
// on a cold cache, beside make test's other work). A component with Sources has a
// module of its own (its copied sources, the modules they import).
func sameModule(comps []Component) [][]Component {
	var groups [][]Component
	index := map[string]int{}
	for _, c := range comps {
		key := c.buildName() + "@" + c.version()
		if len(c.Sources) == 0 {
			ld := ""
			if c.VersionLDFlags != nil {
				ld = strings.Join(c.VersionLDFlags(c.version()), " ")
			}
			key = fmt.Sprintf("%s@%s tags=%v aligned=%v withheld=%v ldflags=%s", c.Module, c.version(), c.Tags, c.aligned(), c.Withheld, ld)
		}
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, nil)
		}
		// A renamed copy is the same build: built once.
		if !slices.ContainsFunc(groups[i], func(o Component) bool { return o.buildName() == c.buildName() }) {
			groups[i] = append(groups[i], c)
		}
	}
	return groups
}

// kubernetes reports whether c is built from k8s.io/kubernetes: minutes.
func (c Component) kubernetes() bool { return c.Module == kubernetesModule }

// lockBuild takes the lock of one build, which another harness process
// (parallel test packages, make's background targets) building the same
// thing waits on, while different builds go ahead at once.
func (s *Source) lockBuild(ctx context.Context, comps []Component) (func(), error) {
	key := make([]string, 0, len(comps))
	for _, c := range comps {
		key = append(key, c.buildName()+"@"+c.version())
	}
	slices.Sort(key)
	path := filepath.Join(s.cacheDir(), "locks", strings.Join(key, "+")+".lock")
	if unlock, err := filelock.TryLock(path); err != nil || unlock != nil {
		return unlock, err
	}
	// make e2e builds the leader-migration specs' managers in the
	// background while the suite runs; a spec that needs one first says
	// why it waits.
	s.waitedMu.Lock()
	said := s.waited[path]
	if s.waited == nil {
		s.waited = map[string]bool{}
	}
	s.waited[path] = true
	s.waitedMu.Unlock()
	if !said {
		s.logf("waiting for %s: another process is building it", describe(comps))
	}
	return filelock.Lock(ctx, path, describe(comps)+", which another process is building")
}

func (s *Source) buildGroup(ctx context.Context, src string, comps []Component, ldflags string, paths map[string]string) error {
	tmp, err := os.MkdirTemp("", "ccm-harness-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	unlock, err := s.lockBuild(ctx, comps)
	if err != nil {
		return err
	}
	defer unlock()

	var pkgs []string
	var todo []Component
	for _, c := range comps {
		if c.Module != ModulePath && checkExecutable(paths[c.Name]) == nil {
			continue // another process built it while we waited for the lock
		}
		if !slices.Contains(pkgs, c.Package) {
			pkgs = append(pkgs, c.Package)
		}
		todo = append(todo, c)
	}
	if len(todo) == 0 {
		return nil
	}
	args := []string{"build", "-trimpath", "-ldflags", strings.TrimSpace("-s -w " + ldflags), "-o", tmp + "/"}
	cmd := exec.CommandContext(ctx, "go", append(args, pkgs...)...)
	cmd.Dir = src
	why := "first run only: several minutes on 2 cores"
	if !slices.ContainsFunc(todo, func(c Component) bool { return c.Module != ModulePath }) {
		why = "this checkout changed"
	}
	out, err := s.runBuild(cmd, todo, why)
	if err != nil {
		return fmt.Errorf("building %s failed (%v): %s", names(todo), err, strings.TrimSpace(string(out)))
	}
	// go build names each binary for its package; a component may have
	// another name (an older CCM beside the CCM), and two may share one.
	for i, c := range todo {
		built := filepath.Join(tmp, path.Base(c.Package))
		if slices.ContainsFunc(todo[i+1:], func(o Component) bool { return o.Package == c.Package }) {
			data, err := os.ReadFile(built)
			if err != nil {
				return err
			}
			built = filepath.Join(tmp, c.Name+".copy")
			if err := os.WriteFile(built, data, 0o755); err != nil {
				return err
			}
		}
		if err := install(built, paths[c.Name]); err != nil {
			return err
		}
	}
	return nil
}

// progressEvery is how often a build says it is still going.
const progressEvery = 30 * time.Second

// runBuild runs a build of comps, saying when it starts, every
// progressEvery while it runs (against the last build of the same
// components, kept in the cache) and when it is done: a build of minutes
// is not a silent wait.
func (s *Source) runBuild(cmd *exec.Cmd, comps []Component, why string) ([]byte, error) {
	// Keyed by version too: a release's build of a component of this
	// repository takes minutes where its build from the source tree
	// takes seconds.
	key := describe(comps)
	times := filepath.Join(s.cacheDir(), "build-times.json")
	last := map[string]time.Duration{}
	if data, err := os.ReadFile(times); err == nil {
		_ = json.Unmarshal(data, &last)
	}
	against := ""
	if d, ok := last[key]; ok {
		against = fmt.Sprintf(" (the last build took %s)", d.Round(time.Second))
	}
	s.logf("building %s (%s)%s", describe(comps), why, against)
	start := time.Now()
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				s.logf("  still building %s: %s so far%s", key, time.Since(start).Round(time.Second), against)
			}
		}
	}()
	out, err := cmd.CombinedOutput()
	close(done)
	if err != nil {
		return out, err
	}
	took := time.Since(start)
	s.logf("built %s in %s", key, took.Round(time.Second))
	// Builds end at once in this process and others: read again, under a
	// lock, before writing.
	if unlock, err := filelock.Lock(context.Background(), times+".lock", "the build times"); err == nil {
		last = map[string]time.Duration{}
		if data, err := os.ReadFile(times); err == nil {
			_ = json.Unmarshal(data, &last)
		}
		last[key] = took
		if data, err := json.Marshal(last); err == nil {
			_ = os.WriteFile(times, data, 0o644) // a hint for the next build's progress only
		}
		unlock()
	}
	return out, nil
}

// buildOwnModule builds comps (of one module at one version, see
// sameModule) in a module generated for them in the cache: a
// go.mod that requires their module at its version and repeats the replace
// directives of that module's own go.mod (they apply only where it is the
// main module, and some modules build only with them) and its go version
// (which sets the binary's GODEBUG defaults, as upstream's own build does).
// A component with Sources gets them copied in, their imports of this
// repository rewritten to the generated module, and the modules they import
// required at this repository's versions. The go.sum there is filled and
// checked against the checksum database by `go build -mod=mod`, like any
// module's.
func (s *Source) buildOwnModule(ctx context.Context, comps []Component, paths map[string]string) error {
	// A lock for each binary, taken in one order by every process, so that
	// one building only kube-apiserver waits for one building it with
	// kube-controller-manager, and no two wait for each other.
	comps = slices.Clone(comps)
	slices.SortFunc(comps, func(a, b Component) int { return strings.Compare(a.buildName(), b.buildName()) })
	for _, c := range comps {
		unlock, err := s.lockBuild(ctx, []Component{c})
		if err != nil {
			return err
		}
		defer unlock()
	}
	var todo []Component
	var pkgs, built []string
	for _, c := range comps {
		if checkExecutable(paths[c.Name]) == nil {
			continue // another process built it while we waited for the lock
		}
		todo = append(todo, c)
		built = append(built, c.buildName())
	}
	if len(todo) == 0 {
		return nil
	}
	c := todo[0]
	v := c.version()
	modPath := "ccm-harness.local/build/" + strings.Join(built, "-")
	// Named after the cached binaries' version folder, so that builds of
	// different sources do not share a module.
	dir := filepath.Join(s.cacheDir(), "modules", strings.Join(built, "+")+"@"+filepath.Base(filepath.Dir(paths[c.Name])))
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	gomod := filepath.Join(dir, "go.mod")
	if err := os.WriteFile(gomod, []byte("module "+modPath+"\n"), 0o644); err != nil {
		return err
	}
	out, err := goCommand(ctx, dir, "mod", "download", "-json", c.Module+"@"+v).Output()
	var dl struct{ GoMod, Error string }
	if jerr := json.Unmarshal(out, &dl); jerr != nil || dl.GoMod == "" {
		return fmt.Errorf("%s: download %s@%s: %v %s", c.Name, c.Module, v, err, dl.Error)
	}
	upstream, err := os.ReadFile(dl.GoMod)
	if err != nil {
		return err
	}
	up, err := modfile.Parse(dl.GoMod, upstream, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	f := &modfile.File{}
	_ = f.AddModuleStmt(modPath)
	if up.Go != nil {
		_ = f.AddGoStmt(up.Go.Version)
	}
	_ = f.AddRequire(c.Module, v)
	for _, r := range up.Replace {
		if w, ok := c.Withheld[r.Old.Path]; ok {
			_ = f.AddRequire(r.Old.Path, w)
			continue
		}
		switch {
		case r.New.Version != "":
			_ = f.AddReplace(r.Old.Path, r.Old.Version, r.New.Path, r.New.Version)
		case strings.HasPrefix(r.New.Path, "./staging/"):
			// Kubernetes' staging modules live in its checkout; outside
			// it, they are the published modules of the same release.
			_ = f.AddReplace(r.Old.Path, "", r.Old.Path, stagingVersion(v))
		}
		// Another directory in upstream's checkout has nothing to repeat.
	}
	if c.aligned() {
		src, err := s.sourceDir()
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		if err := align(src, f); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	for _, c := range todo {
		pkgs = append(pkgs, c.Package)
	}
	if len(c.Sources) > 0 {
		src, err := s.sourceDir()
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		if err := copySources(src, dir, modPath, c.Sources, f); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		pkgs = []string{modPath + strings.TrimPrefix(c.Package, ModulePath)}
	}
	data, err := f.Format()
	if err != nil {
		return err
	}
	if err := os.WriteFile(gomod, data, 0o644); err != nil {
		return err
	}

	tmp, err := os.MkdirTemp("", "ccm-harness-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ldflags := "-s -w"
	if c.VersionLDFlags != nil {
		ldflags += " " + strings.Join(c.VersionLDFlags(v), " ")
	}
	args := []string{"build", "-mod=mod", "-trimpath", "-ldflags", ldflags, "-o", tmp + "/"}
	if len(c.Tags) > 0 {
		args = append(args, "-tags", strings.Join(c.Tags, ","))
	}
	cmd := goCommand(ctx, dir, append(args, pkgs...)...)
	if out, err := s.runBuild(cmd, todo, "first run only: several minutes on 2 cores"); err != nil {
		return fmt.Errorf("building %s %s in %s failed (%v): %s", names(todo), v, dir, err, strings.TrimSpace(string(out)))
	}
	for i, c := range todo {
		if err := install(filepath.Join(tmp, path.Base(pkgs[i])), paths[c.Name]); err != nil {
			return err
		}
	}
	return nil
}

// stagingVersion is the version of Kubernetes' staging modules (k8s.io/api,
// ...) published with release v: v1.30.14 has v0.30.14.
func stagingVersion(v string) string { return "v0" + strings.TrimPrefix(v, "v1") }

// aligned reports whether c's version is built with this repository's
// dependency versions.
func (c Component) aligned() bool { return slices.Contains(c.Aligned, c.version()) }

// align adds this repository's requirements to f, and its replacements
// of Kubernetes' staging modules in place of f's.
func align(src string, f *modfile.File) error {
	ours, err := readGoMod(src)
	if err != nil {
		return err
	}
	for _, r := range ours.Require {
		if r.Mod.Version != "v0.0.0" && !slices.ContainsFunc(f.Require, func(q *modfile.Require) bool { return q.Mod.Path == r.Mod.Path }) {
			_ = f.AddRequire(r.Mod.Path, r.Mod.Version)
		}
	}
	for _, r := range ours.Replace {
		if strings.HasPrefix(r.Old.Path, "k8s.io/") && r.New.Version != "" {
			_ = f.AddReplace(r.Old.Path, r.Old.Version, r.New.Path, r.New.Version)
		}
	}
	return nil
}

func readGoMod(src string) (*modfile.File, error) {
	data, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return nil, err
	}
	return modfile.Parse("go.mod", data, nil)
}

// copySources copies the non-test Go files of dirs from this repository
// into the generated module at dir, rewriting imports of this repository to
// modPath, and requires in f each module they import at this repository's
// version, unless f replaces it already.
func copySources(src, dir, modPath string, dirs []string, f *modfile.File) error {
	ours, err := readGoMod(src)
	if err != nil {
		return err
	}
	// Our sources may use language features newer than the release's go
	// version.
	if ours.Go != nil && (f.Go == nil || version.Compare("go"+ours.Go.Version, "go"+f.Go.Version) > 0) {
		_ = f.AddGoStmt(ours.Go.Version)
	}
	replaced := map[string]bool{}
	for _, r := range f.Replace {
		replaced[r.Old.Path] = true
	}
	required := map[string]bool{}
	for _, r := range f.Require {
		required[r.Mod.Path] = true
	}
	for _, d := range dirs {
		files, err := filepath.Glob(filepath.Join(src, d, "*.go"))
		if err != nil {
			return err
		}
		if len(files) == 0 {
			return fmt.Errorf("no Go files in %s", filepath.Join(src, d))
		}
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			code, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), file, code, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range parsed.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if m := moduleOf(path, ours.Require); m != nil && !replaced[m.Path] && !required[m.Path] {
					_ = f.AddRequire(m.Path, m.Version)
					required[m.Path] = true
				}
			}
			code = bytes.ReplaceAll(code, []byte(`"`+ModulePath+`/`), []byte(`"`+modPath+`/`))
			if err := os.WriteFile(filepath.Join(dir, d, filepath.Base(file)), code, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// moduleOf is the required module that provides package path, or nil.
func moduleOf(path string, reqs []*modfile.Require) *module.Version {
	var best *module.Version
	for _, r := range reqs {
		if (path == r.Mod.Path || strings.HasPrefix(path, r.Mod.Path+"/")) && (best == nil || len(r.Mod.Path) > len(best.Path)) {
			m := r.Mod
			best = &m
		}
	}
	return best
}

// sourcesHash digests the Go files of dirs, to key a build from them.
func sourcesHash(src string, dirs []string) (string, error) {
	h := sha256.New()
	for _, d := range dirs {
		files, err := filepath.Glob(filepath.Join(src, d, "*.go"))
		if err != nil {
			return "", err
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			data, err := os.ReadFile(file)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s %d\n", filepath.Join(d, filepath.Base(file)), len(data))
			h.Write(data)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// goCommand runs go in dir as its own main module, whatever go.work the
// user has.
func goCommand(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	return cmd
}

// install moves a built binary into place. Rename within a filesystem is
// atomic; across filesystems, it copies to a temporary name beside dst
// first.
func install(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.WriteFile(dst+".tmp", data, 0o755); err != nil {
		return err
	}
	return os.Rename(dst+".tmp", dst)
}

func (s *Source) cacheDir() string {
	if s.CacheDir != "" {
		return s.CacheDir
	}
	return DefaultCacheDir()
}

func (s *Source) sourceDir() (string, error) {
	if s.SourceDir != "" {
		return s.SourceDir, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(data), "module "+ModulePath+"\n") {
			s.SourceDir = dir
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no %s source tree above the working directory to build from (run from the checkout, or name a directory of ready binaries)", ModulePath)
		}
		dir = parent
	}
}

func (s *Source) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// newerThanSources reports whether bin exists and no Go source or module file
// under src is newer. Walking the tree costs milliseconds; relinking a CCM
// costs seconds.
func newerThanSources(bin, src string) bool {
	st, err := os.Stat(bin)
	if err != nil {
		return false
	}
	built := st.ModTime()
	stale := false
	_ = filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || stale {
			return filepath.SkipDir
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "_output", "_artifacts", "jobs", "reports", "kubetest2-deployer":
				return filepath.SkipDir
			}
			return nil
		}
		n := d.Name()
		if strings.HasSuffix(n, ".go") || n == "go.mod" || n == "go.sum" {
			if info, err := d.Info(); err == nil && info.ModTime().After(built) {
				stale = true
			}
		}
		return nil
	})
	return !stale
}

func checkExecutable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
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
		case c.Module == ModulePath && len(c.Releases) > 0:
			// Built on go.mod's Kubernetes release (a CCM of this
			// repository): the release it reports.
			n = append(n, c.Name+" "+c.Release())
		case c.Module == ModulePath:
			n = append(n, c.Name)
		default:
			n = append(n, c.Name+" "+c.version())
		}
	}
	return strings.Join(n, ", ")
}
