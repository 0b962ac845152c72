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
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/ccm-harness/internal/binaries/cache"
	"sigs.k8s.io/ccm-harness/internal/binaries/gomod"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
	"sigs.k8s.io/ccm-harness/internal/binaries/schedule"
)

// build builds comps, missing from the cache, to their paths: a job of
// package schedule for each go build, under the locks another harness
// process building the same thing takes too.
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
	var jobs []schedule.Job
	for _, flags := range order {
		group := groups[flags]
		jobs = append(jobs, schedule.Job{
			// One lock for the group's one go build.
			Locks: []schedule.Lock{buildLock(group)},
			// Kubernetes' own binaries take minutes: started first.
			Long: slices.ContainsFunc(group, Component.kubernetes),
			Run:  func(ctx context.Context) error { return s.buildGroup(ctx, src, group, flags, paths) },
		})
	}
	for _, same := range sameModule(own) {
		job := schedule.Job{}
		if same[0].kubernetes() {
			// Builds of one Kubernetes release in modules of their own
			// (its kube-apiserver and kube-controller-manager, a CCM of
			// this repository built on it) go one after another: the
			// second finds the release's libraries in the Go build cache,
			// where beside the first it would compile them too.
			job.Long, job.Queue = true, pins.Kubernetes+"@"+same[0].version()
		}
		if floor := same[0].floor(); len(floor) > 0 {
			// CCMs of one floor (pins.Floors) share their packages: built
			// one after another, the second finds them in the Go build
			// cache, also when another process builds the first (make
			// test's prebuild builds the AWS CCM v1.36.2 while a suite
			// builds the fakecloud CCM on v1.36.3). Taken before the
			// binaries' locks, by every process.
			minor := pins.Minor(same[0].version())
			job.Locks = append(job.Locks, schedule.Lock{Name: "floor-" + minor, What: "a CCM on Kubernetes " + minor + " (its CCMs build one at a time, sharing the release's libraries)"})
		}
		// A lock for each binary, taken in one order by every process, so
		// that one building only kube-apiserver waits for one building it
		// with kube-controller-manager, and no two wait for each other.
		same = slices.Clone(same)
		slices.SortFunc(same, func(a, b Component) int { return strings.Compare(a.buildName(), b.buildName()) })
		for _, c := range same {
			job.Locks = append(job.Locks, buildLock([]Component{c}))
		}
		job.Run = func(ctx context.Context) error { return s.buildOwnModule(ctx, same, paths) }
		jobs = append(jobs, job)
	}
	return s.scheduler().Run(ctx, jobs)
}

// buildLock is the lock of one build of comps: its name is theirs, each at
// its version, so that another process building the same thing waits on
// it, while different builds go ahead at once.
func buildLock(comps []Component) schedule.Lock {
	key := make([]string, 0, len(comps))
	for _, c := range comps {
		key = append(key, c.buildName()+"@"+c.version())
	}
	slices.Sort(key)
	return schedule.Lock{Name: strings.Join(key, "+"), What: describe(comps)}
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
		// A test binary is one go test -c: a group of its own.
		if len(c.Sources) == 0 && !c.Test {
			ld := ""
			if c.VersionLDFlags != nil {
				ld = strings.Join(c.VersionLDFlags(c.version()), " ")
			}
			key = fmt.Sprintf("%s@%s tags=%v aligned=%v own=%v withheld=%v floor=%v ldflags=%s", c.Module, c.version(), c.Tags, c.aligned(), c.Own, c.Withheld, c.floor(), ld)
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
func (c Component) kubernetes() bool { return c.Module == pins.Kubernetes }

// buildGroup builds comps, which share ldflags, with this repository's
// go.mod in one go build, with its lock held (see build).
func (s *Source) buildGroup(ctx context.Context, src string, comps []Component, ldflags string, paths map[string]string) error {
	tmp, err := os.MkdirTemp("", "ccm-harness-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	var pkgs []string
	var todo []Component
	for _, c := range comps {
		if c.Module != pins.ModulePath && cache.Executable(paths[c.Name]) == nil {
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
	if !slices.ContainsFunc(todo, func(c Component) bool { return c.Module != pins.ModulePath }) {
		why = "this checkout changed"
	}
	out, err := s.sched.Go(cmd, describe(todo), why)
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
		if err := cache.Install(built, paths[c.Name]); err != nil {
			return err
		}
	}
	return nil
}

// generate writes, in dir, the module c is built in (with the other
// binaries named in built, which share it).
func (s *Source) generate(ctx context.Context, c Component, built []string, dir string) (gomod.Spec, error) {
	spec := gomod.Spec{
		Path: "ccm-harness.local/build/" + strings.Join(built, "-"), Dir: dir,
		Module: c.Module, Version: c.version(), Withheld: c.Withheld,
		OursPath: pins.ModulePath, Align: c.aligned(), Own: c.Own, Sources: c.Sources, Floor: c.floor(),
	}
	if spec.Align || len(spec.Sources) > 0 {
		src, err := s.sourceDir()
		if err != nil {
			return spec, fmt.Errorf("%s: %w", c.Name, err)
		}
		spec.Ours = src
	}
	if err := gomod.Generate(ctx, spec); err != nil {
		return spec, fmt.Errorf("%s: %w", c.Name, err)
	}
	return spec, nil
}

// buildOwnModule builds comps (of one module at one version, see
// sameModule) in a module generated for them in the cache (package gomod).
// A component with Sources gets them copied in. comps are sorted by
// buildName, and each one's lock is held (see build).
func (s *Source) buildOwnModule(ctx context.Context, comps []Component, paths map[string]string) error {
	var todo []Component
	var pkgs, built []string
	for _, c := range comps {
		if cache.Executable(paths[c.Name]) == nil {
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
	// Named after the cached binaries' version folder, so that builds of
	// different sources do not share a module.
	dir := s.cache().Module(strings.Join(built, "+") + "@" + filepath.Base(filepath.Dir(paths[c.Name])))
	spec, err := s.generate(ctx, c, built, dir)
	if err != nil {
		return err
	}
	if len(c.Sources) > 0 {
		pkgs = []string{spec.Path + strings.TrimPrefix(c.Package, pins.ModulePath)}
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
	if c.Test {
		// go test -c builds one package's test binary, named here as go
		// build would name a main package's.
		args = []string{"test", "-c", "-mod=mod", "-trimpath", "-ldflags", ldflags, "-o", filepath.Join(tmp, path.Base(pkgs[0]))}
	}
	if len(c.Tags) > 0 {
		args = append(args, "-tags", strings.Join(c.Tags, ","))
	}
	cmd := gomod.Command(ctx, spec.Dir, append(args, pkgs...)...)
	if out, err := s.sched.Go(cmd, describe(todo), "first run only: several minutes on 2 cores"); err != nil {
		return fmt.Errorf("building %s %s in %s failed (%v): %s", names(todo), v, spec.Dir, err, strings.TrimSpace(string(out)))
	}
	for i, c := range todo {
		if err := cache.Install(filepath.Join(tmp, path.Base(pkgs[i])), paths[c.Name]); err != nil {
			return err
		}
	}
	return nil
}
