package binaries

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
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

// The HA members ask for the older CCM at once while another process
// (make e2e's background build) builds it: the wait is said once, and
// each gets the build when that process is done.
func TestWaitingIsSaidOnce(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	s := &Source{CacheDir: t.TempDir(), Logf: func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}}
	c := Component{Name: "some-ccm", Module: "example.com/ccm", Package: "example.com/ccm/cmd/some-ccm", Versions: []string{"v1.2.3"}}
	release, err := lockFile(filepath.Join(s.cacheDir(), "locks", "some-ccm@v1.2.3.lock"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			unlock, err := s.lockBuild([]Component{c})
			if err != nil {
				t.Error(err)
				return
			}
			unlock()
		})
	}
	// Both ask while the other process holds the build.
	time.Sleep(500 * time.Millisecond)
	release()
	wg.Wait()
	if len(lines) != 1 || lines[0] != "waiting for some-ccm v1.2.3: another process is building it" {
		t.Errorf("expected one line \"waiting for some-ccm v1.2.3: another process is building it\", actual %q", lines)
	}
}
