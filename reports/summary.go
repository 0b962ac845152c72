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
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// untagged groups specs without a bracketed tag: suite-level nodes, which
// appear only when they fail.
const untagged = "(suite)"

// WriteSummary writes the end of a run's output: passed, failed and
// skipped per tag with the time spent, each failed spec with the first two
// lines of its message, and where the report is. A spec with several tags
// counts under each; specs the label filter or focus left out are only
// counted.
func WriteSummary(w io.Writer, r *Run, page string) {
	type row struct {
		passed, failed, skipped int
		time                    time.Duration
	}
	rows := map[string]*row{}
	var total time.Duration
	notRun := 0
	for _, c := range r.Cases {
		if c.NotSelected() {
			notRun++
			continue
		}
		tags := c.Tags
		if len(tags) == 0 {
			tags = []string{untagged}
		}
		for _, t := range tags {
			if rows[t] == nil {
				rows[t] = &row{}
			}
			switch c.Outcome {
			case Passed:
				rows[t].passed++
			case Failed:
				rows[t].failed++
			case Skipped:
				rows[t].skipped++
			}
			rows[t].time += c.Duration
		}
		total += c.Duration
	}
	tags := make([]string, 0, len(rows))
	for t := range rows {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	passed, failed, skipped := r.Counts()
	known := 0
	for _, c := range r.Cases {
		if len(c.KnownDifferences) > 0 {
			known++
		}
	}
	fmt.Fprintf(w, "\nSummary: %d passed, %d failed, %d skipped", passed, failed, skipped-notRun)
	if known > 0 {
		fmt.Fprintf(w, ", %d passed with known differences", known)
	}
	if notRun > 0 {
		fmt.Fprintf(w, ", %d not selected", notRun)
	}
	fmt.Fprintf(w, "; %s in specs\n", total.Round(10*time.Millisecond))
	width := len("tag")
	for _, t := range tags {
		width = max(width, len(t))
	}
	fmt.Fprintf(w, "  %-*s %7s %7s %8s %8s\n", width, "tag", "passed", "failed", "skipped", "time")
	for _, t := range tags {
		x := rows[t]
		fmt.Fprintf(w, "  %-*s %7d %7d %8d %8s\n", width, t, x.passed, x.failed, x.skipped, x.time.Round(10*time.Millisecond))
	}
	for _, c := range r.Cases {
		if c.Outcome == Failed {
			fmt.Fprintf(w, "FAILED %s\n", c.Name)
			// Two lines: a wait's message says what it waited for, then
			// names the node or Service.
			shown := 0
			for _, line := range strings.Split(c.Message, "\n") {
				if line = strings.TrimSpace(line); line != "" && shown < 2 {
					fmt.Fprintf(w, "    %s\n", line)
					shown++
				}
			}
		}
	}
	for _, c := range r.Cases {
		// A passed spec with a step that failed as its CCM's known
		// difference says: shown, never counted as a plain pass.
		for _, kd := range c.KnownDifferences {
			fmt.Fprintf(w, "KNOWN DIFFERENCE %s\n", c.Name)
			for _, line := range strings.Split(kd, "\n") {
				if line = strings.TrimSpace(line); line != "" {
					fmt.Fprintf(w, "    %s\n", line)
				}
			}
		}
	}
	if page != "" {
		fmt.Fprintf(w, "report: %s\n", page)
	}
}
