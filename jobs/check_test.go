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

package jobs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func paths(jobs string) Paths {
	return Paths{
		ProwConfig: "testdata/prow-config.yaml",
		Jobs:       jobs,
		Testgrid:   "testgrid/ccm-harness.yaml",
		Makefile:   "../Makefile",
	}
}

func TestJobConfigs(t *testing.T) {
	for _, err := range Check(paths("config/jobs")) {
		t.Error(err)
	}
}

// Each broken job must be caught, with the reason named.
func TestCheckCatches(t *testing.T) {
	good, err := os.ReadFile("config/jobs/ccm-harness/ccm-harness-periodics.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, from, to, want string
	}{
		{"unknown field", "  interval: 6h", "  interval: 6h\n  intervall: 7h", "unknown field"},
		{"long name", "name: ci-ccm-harness-e2e-fake", "name: ci-ccm-harness-e2e-fake-" + strings.Repeat("x", 40), "characters, Prow allows 63"},
		{"missing dashboard", "testgrid-dashboards: sig-cloud-provider-ccm-harness", "testgrid-dashboards: sig-nonexistent", `dashboard "sig-nonexistent" is not in`},
		{"no alert email", "    testgrid-alert-email: sig-cloud-provider-ccm-harness-alerts@kubernetes.io\n", "", "annotation testgrid-alert-email is missing"},
		{"unknown make target", "      - e2e\n", "      - e2e-everything\n", `make target "e2e-everything" does not exist`},
		{"not make", "      - make\n", "      - bash\n", "is not a make target"},
		{"kind without Docker", "      - e2e\n", "      - e2e-kind\n", "runs the kind suite without Docker in its pod"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(string(good), tt.from) {
				t.Fatalf("fixture lacks %q", tt.from)
			}
			dir := t.TempDir()
			bad := strings.Replace(string(good), tt.from, tt.to, 1)
			if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(bad), 0o644); err != nil {
				t.Fatal(err)
			}
			errs := Check(paths(dir))
			var all []string
			for _, e := range errs {
				all = append(all, e.Error())
			}
			if !strings.Contains(strings.Join(all, "\n"), tt.want) {
				t.Errorf("errors %q, want one containing %q", all, tt.want)
			}
		})
	}
}

// harnessCells are the cells `ccm-harness matrix --list` prints, run from
// this repository's source.
func harnessCells(provider string) ([]Cell, error) {
	cmd := exec.Command("go", "run", "./cmd/ccm-harness", "matrix", "--list", "--provider="+provider)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var cells []Cell
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		cells = append(cells, Cell{f[0], f[1]})
	}
	return cells, nil
}

func TestMatrixJobs(t *testing.T) {
	for _, err := range CheckMatrix(paths("config/jobs"), harnessCells) {
		t.Error(err)
	}
}

// A cell without its job, or a job for no cell, is caught.
func TestCheckMatrixCatches(t *testing.T) {
	cells := func(string) ([]Cell, error) {
		return []Cell{{"v1.36.3", "v1.36.2"}, {"v1.99.0", "v1.99.0"}}, nil
	}
	var all []string
	for _, e := range CheckMatrix(paths("config/jobs"), cells) {
		all = append(all, e.Error())
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{
		"cell Kubernetes v1.99.0 / CCM v1.99.0 has no periodic on sig-cloud-provider-ccm-harness-matrix",
		"Kubernetes v1.35.4 / CCM v1.35.3 is not a cell of provider aws's matrix",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("errors %q, want one containing %q", all, want)
		}
	}
}
