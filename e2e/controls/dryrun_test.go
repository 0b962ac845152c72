package controls

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/reports"
	"sigs.k8s.io/ccm-harness/scenarios"
)

// TestDryRunMatchesRealRun compares each dry run (make e2e-dry-run, and the
// one make e2e-existing makes first) with the real run of the same
// provider and runtime: a spec the dry run says would run must have run,
// and one it says is skipped must have been skipped for the same reason.
func TestDryRunMatchesRealRun(t *testing.T) {
	dir := os.Getenv("ARTIFACTS")
	for _, pair := range []struct{ real, dry string }{
		{dir, filepath.Join(dir, "dry-run")},
		{filepath.Join(dir, "existing"), filepath.Join(dir, "existing", "dry-run")},
	} {
		t.Run(filepath.Base(pair.dry)+" of "+pair.real, func(t *testing.T) {
			if _, err := os.Stat(pair.dry); dir == "" || err != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("no dry run in %s: make test runs make e2e-dry-run and e2e-existing before the controls", pair.dry)
				}
				t.Skipf("no dry run in %s", pair.dry)
			}
			real, err := reports.ReadRun(pair.real)
			if err != nil {
				t.Fatal(err)
			}
			dry, err := reports.ReadRun(pair.dry)
			if err != nil {
				t.Fatal(err)
			}
			planned := map[string]reports.Case{}
			for _, c := range dry.Cases {
				planned[c.Name] = c
			}
			compared := 0
			for _, c := range real.Cases {
				if c.NotSelected() {
					continue
				}
				p, ok := planned[c.Name]
				switch {
				case !ok:
					t.Errorf("%s: ran, but the dry run does not list it", c.Name)
				case c.Outcome == reports.Skipped && p.Message != c.Message:
					t.Errorf("%s: skipped with %q, the dry run said %q", c.Name, c.Message, p.Message)
				case c.Outcome != reports.Skipped && !strings.HasSuffix(p.Message, scenarios.DryRunWouldRun):
					t.Errorf("%s: %s, the dry run said %q", c.Name, c.Outcome, p.Message)
				}
				compared++
			}
			if compared == 0 {
				t.Errorf("no spec compared between %s and %s", pair.real, pair.dry)
			}
			t.Logf("%d specs: the dry run said what the real run did", compared)
		})
	}
}
