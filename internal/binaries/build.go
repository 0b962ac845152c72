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
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/ccm-harness/internal/binaries/gomod"
	"sigs.k8s.io/ccm-harness/internal/filelock"
)

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
// sameModule) in a module generated for them in the cache (package gomod).
// A component with Sources gets them copied in.
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
		pkgs = append(pkgs, c.Package)
	}
	if len(todo) == 0 {
		return nil
	}
	c := todo[0]
	v := c.version()
	spec := gomod.Spec{
		Path: "ccm-harness.local/build/" + strings.Join(built, "-"),
		// Named after the cached binaries' version folder, so that builds
		// of different sources do not share a module.
		Dir:    filepath.Join(s.cacheDir(), "modules", strings.Join(built, "+")+"@"+filepath.Base(filepath.Dir(paths[c.Name]))),
		Module: c.Module, Version: v, Withheld: c.Withheld,
		OursPath: ModulePath, Align: c.aligned(), Sources: c.Sources,
	}
	if spec.Align || len(spec.Sources) > 0 {
		src, err := s.sourceDir()
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		spec.Ours = src
	}
	if len(c.Sources) > 0 {
		pkgs = []string{spec.Path + strings.TrimPrefix(c.Package, ModulePath)}
	}
	if err := gomod.Generate(ctx, spec); err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
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
	cmd := gomod.Command(ctx, spec.Dir, append(args, pkgs...)...)
	if out, err := s.runBuild(cmd, todo, "first run only: several minutes on 2 cores"); err != nil {
		return fmt.Errorf("building %s %s in %s failed (%v): %s", names(todo), v, spec.Dir, err, strings.TrimSpace(string(out)))
	}
	for i, c := range todo {
		if err := install(filepath.Join(tmp, path.Base(pkgs[i])), paths[c.Name]); err != nil {
			return err
		}
	}
	return nil
}
