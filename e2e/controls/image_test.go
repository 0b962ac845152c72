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

package controls

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/reports"
)

// TestImageRunMatchesBinaryRun compares the suite run from the fakecloud
// CCM's image, named by a profile file, at its release, through the
// matrix's door (make e2e-image, into the one cell of
// $ARTIFACTS/image/matrix), with the run from its binary (make e2e, into
// $ARTIFACTS): every spec the image run ran must have ended as it did from
// the binary. make test runs both first.
func TestImageRunMatchesBinaryRun(t *testing.T) {
	cells, _ := filepath.Glob(filepath.Join(os.Getenv("ARTIFACTS"), "image", "matrix", "k8s-*"))
	sub := filepath.Join("image", "matrix", "k8s-<release>_ccm-<release>")
	if len(cells) == 1 {
		sub, _ = filepath.Rel(os.Getenv("ARTIFACTS"), cells[0])
	} else if len(cells) > 1 {
		t.Fatalf("make e2e-image ran %d matrix cells (%v); the image at its release has one", len(cells), cells)
	}
	fromBinary, fromImage := runAndSibling(t, sub, "make e2e-image")
	if got := fromImage.Metadata[reports.KeyCCMSource]; !strings.HasPrefix(got, "docker-archive:") {
		t.Errorf("the image run reports ccm-source %q: it did not run the image", got)
	}
	// The image's release, as the matrix gave it, is the binary's.
	if got, want := fromImage.Metadata[reports.KeyCCMVersion], fromBinary.Metadata[reports.KeyCCMVersion]; got != want || got == "" {
		t.Errorf("the image run reports ccm-version %q, the binary run %q", got, want)
	}
	if got := fromImage.Metadata[reports.KeyProvider]; got != "fakecloud-image" {
		t.Errorf("the image run reports provider %q, not the profile file's name fakecloud-image", got)
	}
	outcomes := map[string]reports.Outcome{}
	for _, c := range fromBinary.Cases {
		outcomes[c.Name] = c.Outcome
	}
	compared := 0
	for _, c := range fromImage.Cases {
		if c.NotSelected() {
			continue
		}
		want, ok := outcomes[c.Name]
		switch {
		case !ok:
			t.Errorf("%s: ran from the image only", c.Name)
		case want != c.Outcome:
			t.Errorf("%s: %s from the image, %s from the binary (%s)", c.Name, c.Outcome, want, c.Message)
		}
		compared++
	}
	if compared < 20 {
		t.Errorf("only %d specs compared; the image run should run the node, load-balancer and route specs", compared)
	}
	t.Logf("%d specs ended alike from the image (%s) and the binary", compared, fromImage.Metadata[reports.KeyJobVersion])
}

// runAndSibling reads make e2e's run in $ARTIFACTS and the run another
// target of make test (target) left in its folder sub, before the
// controls; outside CI, without them, the test is skipped.
func runAndSibling(t *testing.T, sub, target string) (*reports.Run, *reports.Run) {
	t.Helper()
	return runPair(t, "", sub, target)
}

// runPair reads the runs in $ARTIFACTS/base and $ARTIFACTS/sub, the
// second left by target.
func runPair(t *testing.T, base, sub, target string) (*reports.Run, *reports.Run) {
	t.Helper()
	dir := os.Getenv("ARTIFACTS")
	other := filepath.Join(dir, sub)
	junit, _ := filepath.Glob(filepath.Join(other, "junit_*.xml"))
	if dir == "" || len(junit) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("no run in %s: make test runs make e2e and %s before the controls", other, target)
		}
		t.Skipf("no run in %s (run make e2e and %s first)", other, target)
	}
	runs := make([]*reports.Run, 2)
	for i, d := range []string{filepath.Join(dir, base), other} {
		r, err := reports.ReadRun(d)
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = r
	}
	return runs[0], runs[1]
}
