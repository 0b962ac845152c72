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

// Package cache is the layout of the harness's build cache on disk, outside
// the repository, shared by every harness process of a user: upstream
// binaries by name and version, unpacked images, the modules generated for
// builds, the build locks and the build times. The paths are the cache's
// format: a change to them misses every cache already filled.
package cache

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"sigs.k8s.io/ccm-harness/internal/filelock"
)

// DefaultDir is $CCM_HARNESS_CACHE, else $XDG_CACHE_HOME/ccm-harness,
// else ~/.cache/ccm-harness.
func DefaultDir() string {
	if d := os.Getenv("CCM_HARNESS_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "ccm-harness")
	}
	return filepath.Join(os.TempDir(), "ccm-harness-cache")
}

// Cache is a cache directory.
type Cache struct {
	// Dir is the cache's root.
	Dir string
}

// New is the cache in dir; "" for DefaultDir().
func New(dir string) Cache {
	if dir == "" {
		dir = DefaultDir()
	}
	return Cache{Dir: dir}
}

// Binary is where the build of name keyed key (its version, and what else
// makes it another binary) lives, for this platform.
func (c Cache) Binary(name, key string) string {
	return filepath.Join(c.Dir, "bin", runtime.GOOS+"-"+runtime.GOARCH, name, key, name)
}

// Images is the folder images are unpacked in (see internal/oci).
func (c Cache) Images() string { return filepath.Join(c.Dir, "images") }

// Module is the folder of the Go module generated for a build named name
// (see package gomod).
func (c Cache) Module(name string) string { return filepath.Join(c.Dir, "modules", name) }

// Lock is the file of the lock named name (see internal/filelock).
func (c Cache) Lock(name string) string { return filepath.Join(c.Dir, "locks", name+".lock") }

// buildTimes records how long the last build of each thing took.
func (c Cache) buildTimes() string { return filepath.Join(c.Dir, "build-times.json") }

// BuildTime is how long the last build of key took, if one was recorded.
func (c Cache) BuildTime(key string) (time.Duration, bool) {
	last := map[string]time.Duration{}
	if data, err := os.ReadFile(c.buildTimes()); err == nil {
		_ = json.Unmarshal(data, &last)
	}
	d, ok := last[key]
	return d, ok
}

// RecordBuildTime records that a build of key took took. It is a hint for
// the next build's progress only: a failure to write it is ignored.
func (c Cache) RecordBuildTime(key string, took time.Duration) {
	times := c.buildTimes()
	// Builds end at once in this process and others: read again, under a
	// lock, before writing.
	unlock, err := filelock.Lock(context.Background(), times+".lock", "the build times")
	if err != nil {
		return
	}
	defer unlock()
	last := map[string]time.Duration{}
	if data, err := os.ReadFile(times); err == nil {
		_ = json.Unmarshal(data, &last)
	}
	last[key] = took
	if data, err := json.Marshal(last); err == nil {
		_ = os.WriteFile(times, data, 0o644)
	}
}

// Executable says why p is not an executable file, or nil.
func Executable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

// Install moves a built binary into place. Rename within a filesystem is
// atomic; across filesystems, it copies to a temporary name beside dst
// first.
func Install(src, dst string) error {
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

// Fresh reports whether bin exists and no Go source or module file under
// the source tree src is newer. Walking the tree costs milliseconds;
// relinking a CCM costs seconds.
func Fresh(bin, src string) bool {
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
