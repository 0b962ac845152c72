package labels

import (
	"strings"
	"testing"
)

func TestMigrationSelected(t *testing.T) {
	for filter, want := range map[string]bool{"": true, "zone": false, "upgrade": true, "!leader-migration": false, "zone || downgrade": true} {
		if got, err := MigrationSelected(filter); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", filter, got, err, want)
		}
	}
	// A filter that does not parse is one line, without Ginkgo's colours.
	_, err := MigrationSelected("(zone")
	if err == nil || strings.ContainsAny(err.Error(), "\n\x1b{}") || !strings.Contains(err.Error(), `label filter "(zone": Syntax Error`) {
		t.Errorf("bad filter: %q", err)
	}
}
