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
