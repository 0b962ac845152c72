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

// Package binaries finds or builds the executables a cluster runs.
//
// Upstream components (etcd, kube-apiserver, kube-controller-manager, kwok)
// are built from the module versions pinned in this repository's go.mod
// (package pins) and kept in a cache keyed by component and version,
// outside the repository (package cache), so a second run builds nothing.
// Upstream CCMs whose dependencies conflict with ours (the vSphere CCM) are
// built the same way from a module generated for each in the cache
// (package gomod). The harness's own binaries (fakecloud and its CCM,
// vcsim) are rebuilt when their sources change. A user who has binaries
// already names a directory instead.
//
// This package is the front: Component, a component at a version, and
// Source, which finds components' paths and turns the missing ones into
// builds that package schedule runs, under its locks.
package binaries

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"sigs.k8s.io/ccm-harness/internal/binaries/cache"
	"sigs.k8s.io/ccm-harness/internal/binaries/gomod"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
	"sigs.k8s.io/ccm-harness/internal/binaries/schedule"
	"sigs.k8s.io/ccm-harness/internal/oci"
)

// Source finds binaries: in Dir if the user named one, else in the cache,
// building what is missing from the source tree.
type Source struct {
	// Dir, if set, holds every binary ready-made; nothing is built.
	Dir string
	// CacheDir holds upstream builds; default cache.DefaultDir().
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

	// sched runs the builds; made on the first (see scheduler). It is
	// kept, not made for each Paths: it says once that it waits for
	// another process's build, though several managers (the HA members)
	// ask for the same binary at once.
	sched *schedule.Scheduler
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
			if err := cache.Executable(c.Path); err != nil {
				return nil, fmt.Errorf("%s: %w", c.Name, err)
			}
			out[c.Name] = c.Path
		case c.Image != "":
			img, err := oci.Unpack(ctx, c.Image, s.cache().Images())
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
			if err := cache.Executable(p); err != nil {
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
	if c.Module == pins.ModulePath {
		src, err := s.sourceDir()
		if err != nil {
			return "", false, fmt.Errorf("%s: %w", c.Name, err)
		}
		p := filepath.Join(src, "_output", "bin", c.buildName())
		return p, cache.Fresh(p, src), nil
	}
	v := c.version()
	if v == "" {
		return "", false, fmt.Errorf("%s: module %s has no pinned version (is internal/binaries/pins/versions.go intact?)", c.Name, c.Module)
	}
	if len(c.Sources) > 0 {
		// Our sources change more often than the release: key by both.
		src, err := s.sourceDir()
		if err != nil {
			return "", false, fmt.Errorf("%s: %w", c.Name, err)
		}
		sum, err := gomod.SourcesHash(src, c.Sources)
		if err != nil {
			return "", false, fmt.Errorf("%s: %w", c.Name, err)
		}
		v += "-" + sum
	}
	if c.aligned() {
		v += "-with-" + pins.Versions[pins.Kubernetes]
		// A module kept at the component's own version is another build.
		for _, o := range c.Own {
			v += "-own-" + path.Base(strings.TrimSuffix(o, "/"))
		}
	}
	if floor := c.floor(); len(floor) > 0 {
		// Another floor is another build.
		sum := sha256.Sum256([]byte(strings.Join(floor, "\n")))
		v += "-floor-" + hex.EncodeToString(sum[:])[:12]
	}
	for _, t := range c.Tags {
		v += "-" + t
	}
	p := s.cache().Binary(c.buildName(), v)
	return p, cache.Executable(p) == nil, nil
}

// cache is the cache s builds in: CacheDir, else the default.
func (s *Source) cache() cache.Cache { return cache.New(s.CacheDir) }

// scheduler runs s's builds. It is made on the first, and kept for its
// messages (see Source.sched); its cache is read again for each build, as
// cachedPath reads it. Call it with mu held.
func (s *Source) scheduler() *schedule.Scheduler {
	if s.sched == nil {
		s.sched = &schedule.Scheduler{Logf: s.logf}
	}
	s.sched.Cache = s.cache()
	return s.sched
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
		if err == nil && strings.Contains(string(data), "module "+pins.ModulePath+"\n") {
			s.SourceDir = dir
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no %s source tree above the working directory to build from (run from the checkout, or name a directory of ready binaries)", pins.ModulePath)
		}
		dir = parent
	}
}

func (s *Source) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}
