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

package matrix

import (
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/reports"
	"sigs.k8s.io/ccm-harness/skew"
)

var clusters = []string{"v1.37.2", "v1.36.3", "v1.35.4", "v1.34.4"}

func names(cells []Cell) string {
	var out []string
	for _, c := range cells {
		out = append(out, c.Name())
	}
	return strings.Join(out, " ")
}

func TestCells(t *testing.T) {
	tests := []struct {
		name    string
		ccms    []string
		outside bool
		want    string
	}{
		{
			name: "a CCM per minor",
			ccms: []string{"v1.36.3", "v1.37.2", "v1.35.4", "v1.34.4"},
			want: "k8s-v1.34.4_ccm-v1.34.4 k8s-v1.35.4_ccm-v1.35.4 k8s-v1.35.4_ccm-v1.34.4 k8s-v1.36.3_ccm-v1.36.3 k8s-v1.36.3_ccm-v1.35.4 k8s-v1.37.2_ccm-v1.37.2 k8s-v1.37.2_ccm-v1.36.3",
		},
		{
			name: "two minors pinned",
			ccms: []string{"v1.36.2", "v1.35.3"},
			want: "k8s-v1.35.4_ccm-v1.35.3 k8s-v1.36.3_ccm-v1.36.2 k8s-v1.36.3_ccm-v1.35.3 k8s-v1.37.2_ccm-v1.36.2",
		},
		{
			name:    "the newer neighbour when asked",
			ccms:    []string{"v1.36.2", "v1.35.3"},
			outside: true,
			want:    "k8s-v1.34.4_ccm-v1.35.3 k8s-v1.35.4_ccm-v1.36.2 k8s-v1.35.4_ccm-v1.35.3 k8s-v1.36.3_ccm-v1.36.2 k8s-v1.36.3_ccm-v1.35.3 k8s-v1.37.2_ccm-v1.36.2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cells, err := Cells(clusters, tt.ccms, tt.outside)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(cells); got != tt.want {
				t.Errorf("cells:\n got  %s\n want %s", got, tt.want)
			}
			for _, c := range cells {
				if c.Skew == skew.Newer != strings.Contains(c.String(), "outside the skew policy") {
					t.Errorf("%s: a cell outside the policy must say so, and only such a cell", c)
				}
			}
		})
	}
	if _, err := Cells(clusters, []string{"v1.31.0"}, false); err == nil || !strings.Contains(err.Error(), "no CCM version (v1.31.0) is within the version skew policy") {
		t.Errorf("a CCM too old for every release: %v", err)
	}
}

func TestFlips(t *testing.T) {
	cells, err := Cells(clusters, []string{"v1.36.2", "v1.35.3"}, true)
	if err != nil {
		t.Fatal(err)
	}
	run := func(outcomes map[string]reports.Outcome) *reports.Run {
		r := &reports.Run{}
		for spec, o := range outcomes {
			r.Cases = append(r.Cases, reports.Case{Name: spec, Outcome: o, Message: "why " + spec + " " + string(o)})
		}
		return r
	}
	runs := map[string]*reports.Run{
		"k8s-v1.35.4_ccm-v1.35.3": run(map[string]reports.Outcome{"zone": reports.Passed, "lb": reports.Passed, "route": reports.Skipped}),
		"k8s-v1.36.3_ccm-v1.36.2": run(map[string]reports.Outcome{"zone": reports.Passed, "lb": reports.Failed, "route": reports.Passed}),
		"k8s-v1.36.3_ccm-v1.35.3": run(map[string]reports.Outcome{"zone": reports.Passed, "lb": reports.Passed, "route": reports.Failed}),
		// Outside the policy: its failure is no finding.
		"k8s-v1.34.4_ccm-v1.35.3": run(map[string]reports.Outcome{"zone": reports.Failed}),
	}
	flips := Flips(cells, runs)
	// zone passed wherever the policy allows; a skip is neither.
	if len(flips) != 2 || flips[0].Spec != "lb" || flips[1].Spec != "route" {
		t.Fatalf("flips: %+v; want lb and route", flips)
	}
	got := flips[0].String()
	for _, want := range []string{"lb\n", "passed in Kubernetes v1.35.4 / CCM v1.35.3, Kubernetes v1.36.3 / CCM v1.35.3", "failed in Kubernetes v1.36.3 / CCM v1.36.2: why lb failed"} {
		if !strings.Contains(got, want) {
			t.Errorf("flip lacks %q:\n%s", want, got)
		}
	}
}
