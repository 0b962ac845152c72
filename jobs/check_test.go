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
		{"no build cluster", "  cluster: eks-prow-build-cluster\n", "", "names no build cluster"},
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

// The testgrid file declares dashboards only, each joining test-infra's
// group through the group file.
func TestTestgridCatches(t *testing.T) {
	good, err := os.ReadFile("testgrid/ccm-harness.yaml")
	if err != nil {
		t.Fatal(err)
	}
	group, err := os.ReadFile("testgrid/" + GroupFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, tg, group, want string }{
		{"a group declared again", string(good) + "dashboard_groups:\n- name: sig-cloud-provider\n", string(group), "unknown field"},
		{"a dashboard in no group", string(good) + "- name: sig-cloud-provider-ccm-harness-extra\n", string(group), "joins no group"},
		{"another group", string(good), strings.Replace(string(group), "group: sig-cloud-provider", "group: sig-other", 1), `want test-infra's "sig-cloud-provider"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "tg.yaml"), []byte(tt.tg), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, GroupFile), []byte(tt.group), 0o644); err != nil {
				t.Fatal(err)
			}
			p := paths("config/jobs")
			p.Testgrid = filepath.Join(dir, "tg.yaml")
			errs := Check(p)
			if len(errs) == 0 || !strings.Contains(errs[0].Error(), tt.want) {
				t.Errorf("errors %v, want one containing %q", errs, tt.want)
			}
		})
	}
}

// harnessCells are the cells of this repository's harness.
func harnessCells(provider string) ([]Cell, error) { return HarnessCells("..", provider) }

// TestMatrixFileGenerated fails when the matrix periodics differ from what
// the harness's cells generate now.
func TestMatrixFileGenerated(t *testing.T) {
	want, err := MatrixJobs(harnessCells)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(MatrixFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is stale: the pinned CCM versions or the releases changed; run make jobs-matrix and commit it", MatrixFile)
	}
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

func consumer() Consumer {
	return Consumer{
		ProwConfig: "testdata/prow-config.yaml",
		Presubmit:  "../examples/ccm-repository/presubmit.yaml",
		Workflow:   "../examples/ccm-repository/github-workflow.yaml",
		Makefile:   "../Makefile",
	}
}

// The examples for a CCM's own repository load and run the harness as
// its docs say.
func TestConsumerExamples(t *testing.T) {
	for _, err := range CheckConsumer(consumer()) {
		t.Error(err)
	}
}

// Each broken example must be caught, with the reason named.
func TestCheckConsumerCatches(t *testing.T) {
	for _, tt := range []struct {
		name, file, from, to, want string
	}{
		{"job at main", "presubmit.yaml", "base_ref: v0.1.0", "base_ref: main", `checks the harness out at "main": pin a release`},
		{"job without the harness", "presubmit.yaml", "repo: ccm-harness", "repo: other", "no extra_ref checks out kubernetes-sigs/ccm-harness"},
		{"job with an unknown target", "presubmit.yaml", `ccm-harness" e2e PROVIDER`, `ccm-harness" e2e-all PROVIDER`, `make target "e2e-all" does not exist`},
		{"job without the profile", "presubmit.yaml", "PROVIDER=external", "PROVIDER=fake", "without PROVIDER=external"},
		{"job building without Docker", "presubmit.yaml", "      privileged: true\n", "      privileged: false\n", "builds with Docker without Docker in its pod"},
		{"job with an unknown field", "presubmit.yaml", "    always_run: true", "    always_run: true\n    allways_run: true", "unknown field"},
		{"workflow at main", "github-workflow.yaml", "ref: v0.1.0", "ref: main", `checks the harness out at "main"`},
		{"workflow with an unpinned action", "github-workflow.yaml", "actions/setup-go@v5", "actions/setup-go@main", "is not pinned to a version"},
		{"workflow keeping results only on success", "github-workflow.yaml", "      if: always()\n", "", "only if: always()"},
		{"workflow running make elsewhere", "github-workflow.yaml", "make -C ccm-harness e2e", "make -C harness e2e", "not where the harness is checked out"},
		{"workflow with an unknown field", "github-workflow.yaml", "    runs-on: ubuntu-24.04", "    runs-on: ubuntu-24.04\n    runs_on: x", "unknown field"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := consumer()
			src := map[string]*string{"presubmit.yaml": &c.Presubmit, "github-workflow.yaml": &c.Workflow}[tt.file]
			good, err := os.ReadFile(*src)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(good), tt.from) {
				t.Fatalf("fixture lacks %q", tt.from)
			}
			*src = filepath.Join(t.TempDir(), tt.file)
			if err := os.WriteFile(*src, []byte(strings.Replace(string(good), tt.from, tt.to, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, e := range CheckConsumer(c) {
				all = append(all, e.Error())
			}
			if !strings.Contains(strings.Join(all, "\n"), tt.want) {
				t.Errorf("errors %q, want one containing %q", all, tt.want)
			}
		})
	}
}
