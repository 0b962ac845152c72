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

package reports

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// The table's alignment is for people; the test compares words.
var spaces = regexp.MustCompile(` +`)

func TestWriteSummary(t *testing.T) {
	r := &Run{Cases: []Case{
		{Name: "Nodes labels the zone [zone]", Tags: []string{"zone"}, Outcome: Failed, Duration: 1250 * time.Millisecond, Message: "timed out waiting:\n  node node-1: expected zone \"a\", actual \"b\"\nmore"},
		{Name: "Nodes removes the taint [node-init]", Tags: []string{"node-init"}, Outcome: Passed, Duration: 3 * time.Second},
		{Name: "Nodes initializes a joining node [node-init]", Tags: []string{"node-init"}, Outcome: Passed, Duration: time.Second},
		{Name: "data path [datapath]", Tags: []string{"datapath"}, Outcome: Skipped, Message: "needs real nodes"},
		{Name: "routes [route]", Tags: []string{"route"}, Outcome: Skipped},
		{Name: "[BeforeSuite]", Outcome: Failed, Duration: 2 * time.Second, Message: "bring up the cluster: port in use"},
	}}
	var b strings.Builder
	WriteSummary(&b, r, "/tmp/run/report.html")
	got := b.String()
	for _, want := range []string{
		"Summary: 2 passed, 2 failed, 1 skipped, 1 not selected; 7.25s in specs",
		"\n (suite) 0 1 0 2s\n",
		"\n datapath 0 0 1 0s\n",
		"\n node-init 2 0 0 4s\n",
		"\n zone 0 1 0 1.25s\n",
		"FAILED Nodes labels the zone [zone]\n timed out waiting:\n node node-1: expected zone \"a\", actual \"b\"\n",
		"FAILED [BeforeSuite]\n bring up the cluster: port in use\n",
		"report: /tmp/run/report.html\n",
	} {
		if !strings.Contains(spaces.ReplaceAllString(got, " "), want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "route") {
		t.Errorf("a spec the filters left out has no row:\n%s", got)
	}
	if strings.Contains(got, "more") {
		t.Errorf("only the first two lines of a failure message belong in the summary:\n%s", got)
	}
	if n := strings.Count(got, "\n"); n > 15 {
		t.Errorf("summary of 5 specs is %d lines; keep it short:\n%s", n, got)
	}
}
