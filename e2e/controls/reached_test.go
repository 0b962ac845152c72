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
	"sigs.k8s.io/ccm-harness/specs"
)

// TestReachedControl reads the control run of make e2e-reached
// ($ARTIFACTS/reached-control): a cluster and an AWS the suite did not
// make, where fakecloud lies to the CCM alone (e2e/testdata/aws-lying.yaml)
// and the suite asks EC2 through the AWS SDK with a key of its own, and
// powers the nodes lent to the lifecycle specs through it. Each
// lie must fail its spec, naming the node and the value the CCM was told,
// and nothing else may fail: a reached cloud's verdict is not free.
func TestReachedControl(t *testing.T) {
	dir := filepath.Join(os.Getenv("ARTIFACTS"), "reached-control")
	junit, _ := filepath.Glob(filepath.Join(dir, "junit_*.xml"))
	if len(junit) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("no run in %s: make test runs make e2e-reached before make compare", dir)
		}
		t.Skipf("no run in %s (run make e2e-reached first)", dir)
	}
	run, err := reports.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	fail := map[specs.ID][]string{
		specs.ZoneRegionLabels:  {"node node-1", "expected label topology.kubernetes.io/zone=\"fake-region-1", `actual "fake-region-1f"`},
		specs.InstanceTypeLabel: {"node node-2", `actual "m5.large"`},
		specs.NodeAddresses:     {"node node-3", "expected addresses [", "InternalIP=127.9.9.9]"},
		// The lent nodes' instances stop and end for real (EC2 says so to
		// the suite, fakecloud silences their kubelets), but the CCM hears
		// they run: it neither taints the stopped node nor deletes the
		// terminated one. Which of the two lent nodes (node-4, node-5) each
		// spec is lent varies from run to run.
		specs.LifecycleShutdown:  {": expected taint node.cloudprovider.kubernetes.io/shutdown present"},
		specs.LifecycleTerminate: {" to be deleted (its instance was terminated)", "actual: still present"},
	}
	seen := map[specs.ID]bool{}
	for _, c := range run.Cases {
		spec, _ := specs.Of(c.Name)
		key, want := spec.ID, fail[spec.ID]
		switch {
		case want == nil && c.Outcome == reports.Failed:
			t.Errorf("%s failed, which no lie of the control is about: %s", c.Name, firstLine(c.Message))
		case want == nil:
		case c.Outcome != reports.Failed:
			t.Errorf("%s %s: the CCM was lied to and the suite did not see it (message %q)", c.Name, c.Outcome, firstLine(c.Message))
		default:
			seen[key] = true
			for _, w := range want {
				if !strings.Contains(c.Message, w) {
					t.Errorf("%s failed without %q in its message: %s", c.Name, w, c.Message)
				}
			}
		}
	}
	for k := range fail {
		if !seen[k] {
			t.Errorf("spec %s (%q) did not fail in %s", k, k.Text(), dir)
		}
	}
}
