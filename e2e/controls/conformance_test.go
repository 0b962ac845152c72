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
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/conformance"
)

// TestConformanceReports checks every conformance report the runs of
// make test wrote ($ARTIFACTS): each validates against the schema and is
// the report of its run's JUnit and metadata, the negative controls'
// failed runs' included.
func TestConformanceReports(t *testing.T) {
	root := os.Getenv("ARTIFACTS")
	if root == "" {
		t.Skip("no $ARTIFACTS: make test sets it, and its runs write the reports")
	}
	n := 0
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != conformance.File {
			return nil
		}
		n++
		if err := conformance.Check(filepath.Dir(path)); err != nil {
			t.Error(err)
		}
		return nil
	})
	// make test's runs: every provider's, the reached and foreign ones,
	// the controls'.
	if os.Getenv("CI") != "" && n < 20 {
		t.Errorf("%d conformance reports under %s; make test's runs write more than 20", n, root)
	}
	t.Logf("%d conformance reports checked under %s", n, root)
}

// TestPublishedReports checks the reports published for the providers
// here (conformance/reports/<Kubernetes minor>/<provider>/) against those
// make test's runs of the same providers wrote: the same verdicts and the
// same result for each spec, so that what is published is what a run of
// this commit shows.
func TestPublishedReports(t *testing.T) {
	root := os.Getenv("ARTIFACTS")
	if root == "" {
		t.Skip("no $ARTIFACTS: make test sets it, and its runs write the reports")
	}
	published, _ := filepath.Glob(filepath.Join(sourceRoot(t), "conformance", "reports", "*", "*", conformance.File))
	if len(published) < 4 {
		t.Fatalf("%d published reports; want fake's, vsphere's, openstack's and aws's", len(published))
	}
	for _, path := range published {
		provider := filepath.Base(filepath.Dir(path))
		minor := filepath.Base(filepath.Dir(filepath.Dir(path)))
		// The runs of each provider's default CCM on the default release:
		// make e2e's in $ARTIFACTS, the others' in a folder of their name.
		dir := filepath.Join(root, provider)
		if provider == "fake" {
			dir = root
		}
		run, err := conformance.Read(filepath.Join(dir, conformance.File))
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Errorf("%s: no run to check it against: %v", path, err)
			}
			continue
		}
		want, err := conformance.Read(path)
		if err != nil {
			t.Error(err)
			continue
		}
		// A provider's leader-migration spec may run apart (make
		// e2e-vsphere-upgrade): its run completes the provider's where
		// there is one. make test runs the AWS CCM's upgrade, and leaves
		// the vSphere and OpenStack CCMs' to their presubmits and the
		// daily periodic: of those, what make test's run selected is
		// checked, and no other spec may be left out.
		if extra, err := conformance.Read(filepath.Join(dir+"-upgrade", conformance.File)); err == nil {
			if run, err = conformance.Combined(run, extra); err != nil {
				t.Errorf("%s: %v", dir+"-upgrade", err)
				continue
			}
		}
		want, left := conformance.Narrowed(want, run)
		for _, id := range left {
			if conformance.Group(id) != "leader-migration" {
				t.Errorf("%s: make test's run of %s did not select %s, whose published result it must check", path, provider, id)
			}
		}
		if len(left) > 0 {
			t.Logf("%s: %v not selected by make test's run of %s: the published results are those of the runs that select them (make e2e-%s-upgrade)", path, left, provider, provider)
		}
		if !strings.HasPrefix(run.KubernetesVersion, minor+".") {
			t.Errorf("%s is published under %s, but the run of %s was on Kubernetes %s", path, minor, dir, run.KubernetesVersion)
		}
		if err := conformance.SameResults(want, run); err != nil {
			t.Errorf("%s is not what make test's run of %s shows: %v; if the change is meant, publish the run's: cp %s %s",
				path, provider, err, filepath.Join(dir, conformance.File), path)
		}
	}
}
