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
// are built from the module versions pinned in this repository's go.mod and
// kept in a cache keyed by component and version, outside the repository, so
// a second run builds nothing. Upstream CCMs whose dependencies conflict with
// ours (the vSphere CCM) are built the same way from a module generated for
// each in the cache. The harness's own binaries (fakecloud and its CCM,
// vcsim) are rebuilt when their sources change. A user who has binaries
// already names a directory instead.
package binaries

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"sigs.k8s.io/ccm-harness/internal/binaries/gomod"
	"sigs.k8s.io/ccm-harness/internal/oci"
)

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
		sum, err := gomod.SourcesHash(src, c.Sources)
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
