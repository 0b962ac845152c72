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

package migration

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/ccm-harness/cluster"
)

// timeline builds samples 500 ms apart from rows of "process:ctrl,ctrl" sets.
func timeline(rows ...map[string][]string) *Timeline {
	t := &Timeline{EveryMs: 500, LeaderName: DefaultLeaderName, Migrated: []string{"service-lb-controller"},
		Processes: []Process{
			{Name: "kcm-1", Kind: cluster.KubeControllerManager, Binary: "kube-controller-manager-fakecloud v1.30.14"},
			{Name: "ccm-1", Kind: cluster.CloudControllerManager, Binary: "fakecloud-ccm"},
		}}
	// Each process's log said it started each controller it ever runs
	// when first seen; a test of runs sets its own.
	seen := map[Run]bool{}
	for i, r := range rows {
		t.Samples = append(t.Samples, Sample{AtMs: int64(i) * 500, Running: r, Leases: map[string]Lease{}})
		for p, ctrls := range r {
			for _, c := range ctrls {
				if run := (Run{Process: p, Controller: c}); !seen[run] {
					seen[run] = true
					t.Runs = append(t.Runs, Run{Process: p, Controller: c, FromMs: int64(i) * 500, ToMs: -1})
				}
			}
		}
	}
	t.EndMs = int64(len(rows)) * 500
	return t
}

var bounds = Bounds{Unowned: 2 * time.Second, Tolerance: time.Second}

func TestCheckConflict(t *testing.T) {
	both := map[string][]string{"kcm-1": {"service-lb-controller"}, "ccm-1": {"cloud-node-controller", "service-lb-controller"}}
	kcm := map[string][]string{"kcm-1": {"service-lb-controller"}, "ccm-1": {"cloud-node-controller"}}
	tl := timeline(kcm, both, both, both, kcm)
	tl.EndMs = 2000
	tl.Runs = []Run{
		{Process: "kcm-1", Controller: "service-lb-controller", FromMs: 0, ToMs: -1},
		{Process: "ccm-1", Controller: "service-lb-controller", FromMs: 500, ToMs: 1500},
	}
	v := tl.Check(bounds)
	if len(v) != 1 || v[0].Kind != "conflict" || v[0].FromMs != 500 || v[0].ToMs != 1500 {
		t.Fatalf("violations %v, want one conflict from 500ms to 1.5s", v)
	}
	for _, want := range []string{"service-lb-controller ran in", "ccm-1 (fakecloud-ccm)", "kcm-1 (kube-controller-manager-fakecloud v1.30.14)", "from 500ms to 1.5s"} {
		if !strings.Contains(v[0].Detail, want) {
			t.Errorf("detail %q lacks %q", v[0].Detail, want)
		}
	}
	// Runs decide, not samples: an overlap of 100 ms that no sample saw
	// is a conflict; runs that meet end to start are not.
	tl = timeline(kcm, kcm)
	tl.EndMs = 1000
	tl.Runs = []Run{
		{Process: "kcm-1", Controller: "service-lb-controller", FromMs: 0, ToMs: 700},
		{Process: "ccm-1", Controller: "service-lb-controller", FromMs: 600, ToMs: -1},
	}
	if v := tl.Check(bounds); len(v) != 1 || v[0].Kind != "conflict" || v[0].FromMs != 600 || v[0].ToMs != 700 {
		t.Errorf("100 ms overlap between samples: %v, want one conflict from 600ms to 700ms", v)
	}
	tl.Runs[1].FromMs = 700
	if v := tl.Check(bounds); len(v) != 0 {
		t.Errorf("a handover at 700ms: %v, want none", v)
	}
}

// TestCheckUnrecorded: a migrated controller a process runs, with no run
// from its log, leaves the verdict open, and says so.
func TestCheckUnrecorded(t *testing.T) {
	tl := timeline(map[string][]string{"kcm-1": {"service-lb-controller"}})
	tl.Runs = nil
	v := tl.Check(bounds)
	if len(v) != 1 || v[0].Kind != "unrecorded" || !strings.Contains(v[0].Detail, "kcm-1 (kube-controller-manager-fakecloud v1.30.14) ran service-lb-controller") ||
		!strings.Contains(v[0].Detail, "its log says nowhere that it started it") {
		t.Errorf("violations %v, want service-lb-controller unrecorded for kcm-1", v)
	}
}

// TestParseLine reads the lines the managers write, as they write them.
func TestParseLine(t *testing.T) {
	near := time.Date(2026, 11, 26, 14, 0, 0, 0, time.Local)
	for _, tt := range []struct {
		line, controller string
		ok               bool
		at               time.Time
	}{
		{`I1126 14:25:12.956827       1 controllermanager.go:338] Started "service-lb-controller"`, "service-lb-controller", true, time.Date(2026, 11, 26, 14, 25, 12, 956827000, time.Local)},
		{`I1126 12:06:11.424875     654 controllermanager.go:761] "Started controller" controller="node-route-controller"`, "node-route-controller", true, time.Date(2026, 11, 26, 12, 6, 11, 424875000, time.Local)},
		{`E1126 14:30:00.000001   77 controllermanager.go:304] "leaderelection lost"`, "", true, time.Date(2026, 11, 26, 14, 30, 0, 1000, time.Local)},
		{`E1126 14:30:00.000001   77 controllermanager.go:331] "migration leaderelection lost"`, "", true, time.Date(2026, 11, 26, 14, 30, 0, 1000, time.Local)},
		{`E1128 13:49:37.611472   23858 controllermanager.go:413] "leaderelection lost/stopped"`, "", true, time.Date(2026, 11, 28, 13, 49, 37, 611472000, time.Local)},
		{`E1128 13:49:37.611472   23858 controllermanager.go:444] "migration leaderelection lost/stopped"`, "", true, time.Date(2026, 11, 28, 13, 49, 37, 611472000, time.Local)},
		// The new year's lines of a run that began in December.
		{`I0101 00:00:01.000000   1 controllermanager.go:338] Started "a"`, "a", true, time.Date(2027, 1, 1, 0, 0, 1, 0, time.Local)},
		{`I1126 14:31:49.434635     699 controllermanager.go:764] "Controller starting..." controller="garbage-collector-controller"`, "garbage-collector-controller", true, time.Date(2026, 11, 26, 14, 31, 49, 434635000, time.Local)},
		{`I1126 14:31:50.000001     699 controllermanager.go:771] "Controller terminated" controller="garbage-collector-controller"`, "garbage-collector-controller", true, time.Date(2026, 11, 26, 14, 31, 50, 1000, time.Local)},
		{`I1126 14:25:12.956827       1 controllermanager.go:330] Starting "service-lb-controller"`, "", false, time.Time{}},
		{`Started "service-lb-controller"`, "", false, time.Time{}},
	} {
		n := near
		if tt.at.Year() == 2027 {
			n = time.Date(2026, 12, 31, 23, 59, 0, 0, time.Local)
		}
		ev, ok := parseLine(tt.line, n)
		if ok != tt.ok || ev.controller != tt.controller || !ev.at.Equal(tt.at) {
			t.Errorf("%s: %v %q at %s, want %v %q at %s", tt.line, ok, ev.controller, ev.at, tt.ok, tt.controller, tt.at)
		}
	}
}

// TestLogFollower reads whole lines only, each once.
func TestLogFollower(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.log")
	if err := os.WriteFile(p, []byte("one\ntw"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &logFollower{path: p}
	if got, err := f.lines(); err != nil || strings.Join(got, "|") != "one" {
		t.Fatalf("first read: %q, %v", got, err)
	}
	file, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	file.WriteString("o\nthree\n")
	file.Close()
	if got, err := f.lines(); err != nil || strings.Join(got, "|") != "two|three" {
		t.Fatalf("second read: %q, %v", got, err)
	}
	if got, _ := f.lines(); len(got) != 0 {
		t.Errorf("third read: %q, want nothing new", got)
	}
}

func TestCheckUnowned(t *testing.T) {
	kcm := map[string][]string{"kcm-1": {"service-lb-controller"}}
	none := map[string][]string{"kcm-1": {}}
	// Not yet running at the start is no gap; 2 s without is the bound.
	if v := timeline(none, kcm, none, none, none, none, kcm).Check(bounds); len(v) != 0 {
		t.Errorf("a 2 s gap: %v, want none", v)
	}
	v := timeline(kcm, none, none, none, none, none, none, kcm).Check(bounds)
	if len(v) != 1 || v[0].Kind != "unowned" || v[0].FromMs != 500 || v[0].ToMs != 3500 || !strings.Contains(v[0].Detail, "ran in no process for 3s") {
		t.Errorf("a 3 s gap: %v, want one unowned from 500ms to 3.5s", v)
	}
	if v := timeline(none, none).Check(bounds); len(v) != 1 || !strings.Contains(v[0].Detail, "never ran") {
		t.Errorf("never running: %v", v)
	}
}

func TestCheckLease(t *testing.T) {
	tl := timeline()
	for i := 0; i < 6; i++ {
		tl.Samples = append(tl.Samples, Sample{AtMs: int64(i) * 500, Running: map[string][]string{"kcm-1": {"service-lb-controller"}}, Leases: map[string]Lease{
			KCMLease: {Holder: "a", Live: true}, CCMLease: {Holder: "b", Live: true}, DefaultLeaderName: {Holder: map[bool]string{true: "a", false: "c"}[i < 2], Live: true},
		}})
	}
	tl.Runs = []Run{{Process: "kcm-1", Controller: "service-lb-controller", ToMs: -1}}
	v := tl.Check(bounds)
	if len(v) != 1 || v[0].Kind != "lease" || !strings.Contains(v[0].Detail, "held by c, which holds neither main lease") {
		t.Errorf("violations %v, want the migration lease held by c", v)
	}
}

func TestSVG(t *testing.T) {
	both := map[string][]string{"kcm-1": {"service-lb-controller"}, "ccm-1": {"service-lb-controller"}}
	tl := timeline(both, both, both)
	tl.EndMs = 1000
	tl.Runs = []Run{{Process: "kcm-1", Controller: "service-lb-controller", ToMs: -1}, {Process: "ccm-1", Controller: "service-lb-controller", FromMs: 500, ToMs: -1}}
	tl.Events = []Event{{AtMs: 500, Text: "start ccm-1"}}
	var buf bytes.Buffer
	if err := tl.WriteSVG(&buf, bounds); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, want := range []string{"<svg", `class="violation"`, "1. 500ms  start ccm-1", "kcm-1 · kube-controller-manager-fakecloud v1.30.14", "1 violation(s)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "lm.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadConfig reads configurations as the managers do, with
// k8s.io/controller-manager's decoder and validation: every version of the
// API, strictly.
func TestReadConfig(t *testing.T) {
	c, err := ReadConfig(writeFile(t, string(NewConfig(CloudControllers...).Without("service-lb-controller").YAML())))
	if err != nil || c.LeaderName != DefaultLeaderName || strings.Join(c.Controllers(), ",") != "node-route-controller,cloud-node-lifecycle-controller" {
		t.Errorf("round trip: %+v, %v", c, err)
	}
	// v1beta1 has resourceLock, which v1 dropped; the managers get the
	// file as written.
	beta := "apiVersion: controllermanager.config.k8s.io/v1beta1\nkind: LeaderMigrationConfiguration\nleaderName: lm\nresourceLock: leases\ncontrollerLeaders:\n- {name: node-route-controller, component: '*'}\n"
	if c, err := ReadConfig(writeFile(t, beta)); err != nil || c.LeaderName != "lm" || c.ResourceLock != "leases" || string(c.YAML()) != beta {
		t.Errorf("v1beta1: %+v, %v", c, err)
	}
	for _, tt := range []struct{ file, want string }{
		{"apiVersion: controllermanager.config.k8s.io/v1\nkind: LeaderMigrationConfiguration\nleaderName: x\nresourceLock: leases\n", `unknown field "resourceLock"`},
		{"apiVersion: controllermanager.config.k8s.io/v1\nkind: LeaderMigrationConfiguration\ncontrollerLeaders: [{name: a}]\n", "leaderName: Required value"},
		{"apiVersion: controllermanager.config.k8s.io/v1\nkind: LeaderMigrationConfiguration\nleaderName: x\ncontrollerLeaders: [{name: a}]\n", "controllerLeaders[0].component: Required value"},
		{"kind: LeaderMigrationConfiguration\nleaderName: x\n", "apiVersion"},
	} {
		if _, err := ReadConfig(writeFile(t, tt.file)); err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", tt.file, err, tt.want)
		}
	}
}

func TestCheckNames(t *testing.T) {
	registered := map[string][]string{"kcm v1": {"service-lb-controller", "node-route-controller", "garbage-collector-controller"}, "ccm v2": {"cloud-node-controller", "cloud-node-lifecycle-controller"}}
	if err := NewConfig(CloudControllers...).CheckNames("cfg", registered); err != nil {
		t.Errorf("every name registered: %v", err)
	}
	err := ManagersDefault().CheckNames("cfg", registered)
	want := "cfg names route-controller, service-controller, which no manager registers (ccm v2, kcm v1); the cloud controllers they register are service-lb-controller, node-route-controller, cloud-node-lifecycle-controller: use those names"
	if err == nil || err.Error() != want {
		t.Errorf("older names: %v\nwant %s", err, want)
	}
}
