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

// TestPluginMatchesBuiltinInspector compares the AWS suite judged through
// the example cloud plugin (make e2e-plugin: a shell script over the AWS
// CLI, into $ARTIFACTS/aws-plugin) with the same suite judged through the
// harness's own AWS inspector (make e2e-aws's first run, $ARTIFACTS/aws):
// every spec the plugin run ran must have ended alike, skipped for the
// same reason, with the same known differences.
func TestPluginMatchesBuiltinInspector(t *testing.T) {
	comparePluginRun(t, pluginPair{sdk: "aws", plugin: "aws-plugin", target: "make e2e-plugin", min: 15,
		what: "the node, lifecycle, route and some load-balancer specs"})
}

// TestReachedPluginMatchesSDK compares the two runs of make e2e-reached
// REACHED_PLUGIN=true (the daily periodic ci-ccm-harness-e2e-plugin's;
// make test judges through the plugin in make e2e-plugin alone) on a
// cluster and an AWS the suite did not make: through the example plugin
// ($ARTIFACTS/reached-plugin) and through the AWS SDK, configured from the
// environment ($ARTIFACTS/reached).
func TestReachedPluginMatchesSDK(t *testing.T) {
	if os.Getenv("REACHED_PLUGIN") != "true" {
		t.Skip("make e2e-reached judged through the AWS SDK alone: REACHED_PLUGIN=true adds its run through the example plugin, which this compares")
	}
	comparePluginRun(t, pluginPair{sdk: "reached", plugin: "reached-plugin", target: "make e2e-reached", min: 15,
		what: "the node and route specs, and skip the rest for the same reasons"})
}

// pluginPair names two runs of one cluster's suite, in folders of
// $ARTIFACTS: through the AWS SDK inspector and through a cloud plugin.
type pluginPair struct {
	sdk, plugin, target string
	// min is how many specs the plugin run must have ended, what they are.
	min  int
	what string
}

// comparePluginRun checks that every spec the plugin run selected ended
// as in the SDK's run: the same outcome, skipped for the same reason, with
// as many known differences.
func comparePluginRun(t *testing.T, p pluginPair) {
	sdk, plugin := runPair(t, p.sdk, p.plugin, p.target)
	sdkName, pluginName := sdk.Metadata[reports.KeyProvider], plugin.Metadata[reports.KeyProvider]
	if pluginName == sdkName {
		t.Errorf("both runs report provider %q; the plugin's profile file has a name of its own", pluginName)
	}
	ended := map[string]reports.Case{}
	for _, c := range sdk.Cases {
		ended[c.Name] = c
	}
	compared := 0
	for _, c := range plugin.Cases {
		if c.NotSelected() {
			continue
		}
		b, ok := ended[c.Name]
		// A reason names the provider; the plugin's profile has its own name.
		reason := strings.ReplaceAll(c.Message, "provider "+pluginName+" ", "provider "+sdkName+" ")
		switch {
		case !ok:
			t.Errorf("%s: ran through the plugin only", c.Name)
		case c.Outcome != b.Outcome:
			t.Errorf("%s: %s through the plugin (%s), %s through the AWS SDK (%s)", c.Name, c.Outcome, firstLine(c.Message), b.Outcome, firstLine(b.Message))
		case c.Outcome == reports.Skipped && reason != b.Message:
			t.Errorf("%s: skipped through the plugin with %q, through the AWS SDK with %q", c.Name, c.Message, b.Message)
		case len(c.KnownDifferences) != len(b.KnownDifferences):
			t.Errorf("%s: %d known differences through the plugin, %d through the AWS SDK", c.Name, len(c.KnownDifferences), len(b.KnownDifferences))
		}
		compared++
	}
	if compared < p.min {
		t.Errorf("only %d specs compared; the plugin run should run %s", compared, p.what)
	}
	t.Logf("%d specs ended alike through the example plugin (%s) and the AWS SDK inspector (%s)", compared, p.plugin, p.sdk)
}

// TestForeignPluginMatchesSDK reads the runs of make e2e-foreign on a kind
// cluster made with kind's command line, its AWS CCM installed from its
// own manifests and fakecloud started on its own. The run through the AWS
// SDK ($ARTIFACTS/foreign) must have run, and passed, what only a real
// cluster and a reached cloud allow: the data path through the cloud's
// load balancer, the lifecycle specs on the nodes lent them, and the specs
// that add nodes, by the cluster's own join hook. With FOREIGN_PLUGIN=true
// (the daily periodic ci-ccm-harness-e2e-foreign-plugin's; make test leaves
// it out), the run through the example plugin ($ARTIFACTS/foreign-plugin)
// must end every spec as the SDK's did.
func TestForeignPluginMatchesSDK(t *testing.T) {
	sdk, err := reports.ReadRun(filepath.Join(os.Getenv("ARTIFACTS"), "foreign"))
	switch {
	case os.Getenv("FOREIGN_PLUGIN") == "true":
		comparePluginRun(t, pluginPair{sdk: "foreign", plugin: "foreign-plugin", target: "make e2e-foreign FOREIGN_PLUGIN=true", min: 10,
			what: "the node and lifecycle specs, and skip the rest for the same reasons"})
	case err != nil && os.Getenv("CI") != "":
		t.Fatalf("make e2e-foreign's SDK run: %v (make test runs make e2e-foreign before make compare)", err)
	case err != nil:
		t.Skipf("no run of make e2e-foreign: %v", err)
	}
	for _, want := range []specs.ID{
		// TCP through a classic load balancer to a pod (its CCM claims
		// no UDP, so not "carries TCP and UDP").
		specs.DatapathHealthChecks,
		specs.LifecycleShutdown,
		specs.LifecycleTerminate,
		specs.InitJoiningNode,
		specs.LBBackends,
		specs.ZoneRegionLabels,
		specs.NodeAddresses,
	} {
		var found *reports.Case
		for i, c := range sdk.Cases {
			if s, _ := specs.Of(c.Name); s.ID == want {
				found = &sdk.Cases[i]
			}
		}
		switch {
		case found == nil:
			t.Errorf("make e2e-foreign's SDK run has no spec %s (%q)", want, want.Text())
		case found.Outcome != reports.Passed:
			t.Errorf("%s: %s in make e2e-foreign's SDK run (%s); on a real cluster with a reached cloud it must pass", found.Name, found.Outcome, firstLine(found.Message))
		}
	}
}
