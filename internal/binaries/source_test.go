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
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
	"sigs.k8s.io/ccm-harness/internal/filelock"
)

// A renamed component (the CCM an upgrade starts from, beside the CCM) is
// the same build under another name: one cache entry, one lock.
func TestRenamedSharesTheBuild(t *testing.T) {
	s := &Source{CacheDir: t.TempDir()}
	c := Component{Name: "some-ccm", Module: "example.com/ccm", Package: "example.com/ccm/cmd/some-ccm", Versions: []string{"v1.2.3", "v1.1.0"}}
	older, err := c.At("v1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	renamed := older.Renamed("some-ccm-older")
	want, _, err := s.cachedPath(older)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := s.cachedPath(renamed)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("expected %s cached as %s, actual %s", renamed.Name, want, got)
	}
	if renamed.Name != "some-ccm-older" || renamed.String() != "some-ccm-older v1.1.0" {
		t.Errorf("expected it to run as some-ccm-older v1.1.0, actual %s", renamed)
	}
	if again := renamed.Renamed("third"); again.buildName() != "some-ccm" {
		t.Errorf("expected a second rename still built as some-ccm, actual %s", again.buildName())
	}
}

// TestTagsKeyTheBuild: a build with tags is another binary, cached apart
// from the same version built without them.
func TestTagsKeyTheBuild(t *testing.T) {
	s := &Source{CacheDir: t.TempDir()}
	c := Component{Name: "some-kcm", Module: "example.com/kcm", Package: "example.com/kcm/cmd/some-kcm", Versions: []string{"v1.2.3"}}
	plain, _, err := s.cachedPath(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Tags = []string{"providerless"}
	tagged, _, err := s.cachedPath(c)
	if err != nil {
		t.Fatal(err)
	}
	if plain == tagged || !strings.Contains(tagged, "v1.2.3-providerless") {
		t.Errorf("expected the providerless build cached under v1.2.3-providerless, apart from %s, actual %s", plain, tagged)
	}
}

// TestOwnKeysTheBuild: an aligned build that keeps a module at the
// component's own version is another binary, cached apart from one that
// lifts it.
func TestOwnKeysTheBuild(t *testing.T) {
	s := &Source{CacheDir: t.TempDir()}
	c := Component{Name: "some-ccm", Module: "example.com/ccm", Package: "example.com/ccm/cmd/some-ccm", Versions: []string{"v1.2.3"}, Aligned: []string{"v1.2.3"}}
	lifted, _, err := s.cachedPath(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Own = []string{"example.com/sdk/"}
	kept, _, err := s.cachedPath(c)
	if err != nil {
		t.Fatal(err)
	}
	if lifted == kept || !strings.HasSuffix(filepath.Dir(kept), "-own-sdk") {
		t.Errorf("expected the build keeping example.com/sdk/ cached under a version ending in -own-sdk, apart from %s, actual %s", lifted, kept)
	}
}

// TestFloorKeysTheBuild: a floored build on a minor with a floor is
// another binary, cached apart from the same version built without it,
// and one floor apart from another.
func TestFloorKeysTheBuild(t *testing.T) {
	s := &Source{CacheDir: t.TempDir()}
	c := Component{Name: "some-ccm", Module: "example.com/ccm", Package: "example.com/ccm/cmd/some-ccm", Versions: []string{"v1.2.3"}}
	plain, _, err := s.cachedPath(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { delete(pins.Floors, "v1.2") })
	pins.Floors["v1.2"] = []string{"example.com/lib v1.1.0"}
	c.Floored = true
	floored, _, err := s.cachedPath(c)
	if err != nil {
		t.Fatal(err)
	}
	pins.Floors["v1.2"] = []string{"example.com/lib v1.2.0"}
	other, _, err := s.cachedPath(c)
	if err != nil {
		t.Fatal(err)
	}
	if plain == floored || floored == other || !strings.Contains(filepath.Base(filepath.Dir(floored)), "v1.2.3-floor-") {
		t.Errorf("expected each floor's build cached under v1.2.3-floor-<its digest>, apart from %s: actual %s and %s", plain, floored, other)
	}
}

// holdLockEnv makes the test binary, run again, a second harness process
// that holds a build's lock (make e2e's background build): it says
// "locked", waits for a line on its standard input, writes the binary
// the build would have made, and exits, which frees the lock.
const holdLockEnv = "CCM_HARNESS_TEST_HOLD_BUILD_LOCK"

func TestMain(m *testing.M) {
	if lock := os.Getenv(holdLockEnv); lock != "" {
		unlock, err := filelock.Lock(context.Background(), lock, "a build")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("locked")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		dst := os.Getenv(holdLockEnv + "_DST")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if err := os.WriteFile(dst, []byte("#!/bin/sh\n"), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		unlock()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holdBuildLock starts a second process holding c's build lock in s's
// cache, and returns a func that makes it build c and exit.
func holdBuildLock(t *testing.T, s *Source, c Component) (finish func()) {
	t.Helper()
	dst, _, err := s.cachedPath(c)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdLockEnv+"="+filepath.Join(s.cache().Dir, "locks", c.buildName()+"@"+c.version()+".lock"), holdLockEnv+"_DST="+dst)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		t.Fatalf("the second process did not take the lock: %q", line)
	}
	return func() {
		_ = stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("the second process: %v", err)
		}
	}
}

// The cold make e2e's path: its background build (another process) holds
// the lock of a manager the HA members all ask for at once. Paths waits
// for it, says so once (not once per member), and returns the other
// process's binary when the lock is freed. The wait for the lock used to
// take the mutex Paths holds (to say once that it waits): the suite hung
// at the first leader-migration spec.
func TestPathsWaitsForAnotherProcesssBuild(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	s := &Source{CacheDir: t.TempDir(), Logf: func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}}
	c := Component{Name: "some-ccm", Module: "example.com/ccm", Package: "example.com/ccm/cmd/some-ccm", Versions: []string{"v1.2.3"}}
	finish := holdBuildLock(t, s, c)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type result struct {
		path string
		err  error
	}
	results := make(chan result, 3)
	for range 3 {
		go func() {
			paths, err := s.Paths(ctx, c)
			results <- result{paths[c.Name], err}
		}()
	}
	time.Sleep(time.Second) // all three ask while the other process holds the build
	select {
	case r := <-results:
		t.Fatalf("Paths returned while another process held the build: %+v", r)
	default:
	}
	finish()
	want, _, _ := s.cachedPath(c)
	for range 3 {
		select {
		case r := <-results:
			if r.err != nil || r.path != want {
				t.Errorf("expected %s, actual %q (error %v)", want, r.path, r.err)
			}
		case <-ctx.Done():
			t.Fatal("Paths did not return within a minute of the other process's build ending: deadlocked")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 1 || lines[0] != "waiting for some-ccm v1.2.3: another process is building it" {
		t.Errorf("expected one line \"waiting for some-ccm v1.2.3: another process is building it\", actual %q", lines)
	}
}

// A wait for another process's build ends with the caller's context (a
// spec's timeout, Ctrl-C), naming the build it waited for.
func TestPathsGivesUpWithItsContext(t *testing.T) {
	s := &Source{CacheDir: t.TempDir()}
	c := Component{Name: "some-ccm", Module: "example.com/ccm", Package: "example.com/ccm/cmd/some-ccm", Versions: []string{"v1.2.3"}}
	holdBuildLock(t, s, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := s.Paths(ctx, c)
	if err == nil || !strings.Contains(err.Error(), "gave up waiting for some-ccm v1.2.3, which another process is building") {
		t.Fatalf("expected \"gave up waiting for some-ccm v1.2.3, which another process is building\", actual %v", err)
	}
}
