package controls

import (
	"io/fs"
	"os"
	"path/filepath"
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
