package controls

import (
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/reports"
)

// TestPluginMatchesBuiltinInspector compares the AWS suite judged through
// the example cloud plugin (make e2e-plugin: a shell script over the AWS
// CLI, into $ARTIFACTS/aws-plugin) with the same suite judged through the
// harness's own AWS inspector (make e2e-aws's first run, $ARTIFACTS/aws):
// every spec the plugin run ran must have ended alike, skipped for the
// same reason, with the same known differences.
func TestPluginMatchesBuiltinInspector(t *testing.T) {
	builtin, plugin := runPair(t, "aws", "aws-plugin", "make e2e-plugin")
	if got := plugin.Metadata[reports.KeyProvider]; got != "aws-plugin" {
		t.Errorf("the plugin run reports provider %q, not its profile file's aws-plugin", got)
	}
	ended := map[string]reports.Case{}
	for _, c := range builtin.Cases {
		ended[c.Name] = c
	}
	compared := 0
	for _, c := range plugin.Cases {
		if c.NotSelected() {
			continue
		}
		b, ok := ended[c.Name]
		// A reason names the provider; the plugin's profile has its own name.
		reason := strings.ReplaceAll(c.Message, "provider aws-plugin ", "provider aws ")
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
	if compared < 15 {
		t.Errorf("only %d specs compared; the plugin run should run the node, lifecycle, route and some load-balancer specs", compared)
	}
	t.Logf("%d specs ended alike through the example plugin and the AWS SDK inspector", compared)
}
