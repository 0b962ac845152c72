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
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/reports"
	"sigs.k8s.io/ccm-harness/specs"
)

// TestNoFreeVerdict runs the suite the ways a run could pass having
// checked nothing: each must fail, saying why in one line, and leave
// nothing behind. A dry run passes, and says it was one.
func TestNoFreeVerdict(t *testing.T) {
	suite := e2eBinary(t)
	noClaims := filepath.Join(t.TempDir(), "no-claims.yaml")
	if err := os.WriteFile(noClaims, []byte("cloud: fake\nccm: {builtin: true}\ncapabilities: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The [datapath] label selects the data-path specs and the route spec
	// that sends packets too (scenarios/routes.go labels it so).
	datapath := 1
	for _, s := range specs.All {
		if s.Tag == specs.TagDatapath {
			datapath++
		}
	}
	n := strconv.Itoa(datapath)
	for _, tc := range []struct {
		name string
		args []string
		want string // "" for a run that passes
	}{
		{"a label filter that selects no spec", []string{"--provider=fake", "-ginkgo.label-filter=zones"},
			`FAILED: no spec selected: the label filter "zones" selects none of the suite's`},
		{"every selected spec skipped", []string{"--provider=fake", "-ginkgo.label-filter=datapath"},
			"FAILED: no spec passed: each of the " + n + " selected specs skipped, which proves nothing about the CCM; select specs this provider and runtime can run (" + n + ": needs real nodes"},
		{"a profile that claims nothing", []string{"--provider=external", "--provider-config=" + noClaims},
			"capabilities: none claimed; claim what the CCM does"},
		{"no nodes", []string{"--provider=fake", "--nodes=0"}, "--nodes 0: the node specs need nodes to check (give 1 or more)"},
		{"a dry run", []string{"--provider=fake", "-ginkgo.label-filter=zone", "--dry-run"}, ""},
	} {
		for _, parallel := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, parallel %t", tc.name, parallel), func(t *testing.T) {
				t.Parallel()
				if parallel {
					ginkgoCLI(t)
				}
				state, artifacts := t.TempDir(), t.TempDir()
				args := append(tc.args, "--artifacts="+artifacts)
				if !parallel {
					// The short form, which says the verdict in one line;
					// in parallel, the ginkgo CLI's report says it.
					args = append(args, "--quiet")
				}
				cmd := suiteCommand(t, suite, parallel, []string{"no-color", "timeout=" + controlTimeout.String()}, args)
				want := tc.want
				if parallel {
					want = strings.Replace(want, "FAILED: ", "[FAILED] ", 1)
				}
				cmd.Env = append(os.Environ(), "CCM_HARNESS_STATE="+state)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := runSuite(cmd)
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("failed: %v\n%s", err, out.String())
				case tc.want != "" && err == nil:
					t.Errorf("passed; want a failure saying %q\n%s", tc.want, out.String())
				case tc.want != "" && !strings.Contains(out.String(), want):
					t.Errorf("the output lacks %q:\n%s", want, out.String())
				}
				if tc.want == "" {
					var f reports.Finished
					data, err := os.ReadFile(filepath.Join(artifacts, "finished.json"))
					if err == nil {
						err = json.Unmarshal(data, &f)
					}
					if err != nil || f.Result != string(reports.ResultDryRun) || f.Passed || f.Metadata[reports.KeyDryRun] == "" {
						t.Errorf("a dry run's finished.json: %+v (%v); want result %s, not passed, metadata %s set", f, err, reports.ResultDryRun, reports.KeyDryRun)
					}
				}
				assertNothingLeft(t, state)
			})
		}
	}
}
