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
	for i, r := range rows {
		t.Samples = append(t.Samples, Sample{AtMs: int64(i) * 500, Running: r, Leases: map[string]Lease{}})
	}
	return t
}

var bounds = Bounds{Unowned: 2 * time.Second, Tolerance: time.Second}

func TestCheckConflict(t *testing.T) {
	both := map[string][]string{"kcm-1": {"service-lb-controller"}, "ccm-1": {"cloud-node-controller", "service-lb-controller"}}
	kcm := map[string][]string{"kcm-1": {"service-lb-controller"}, "ccm-1": {"cloud-node-controller"}}
	v := timeline(kcm, both, both, both, kcm).Check(bounds)
	if len(v) != 1 || v[0].Kind != "conflict" || v[0].FromMs != 500 || v[0].ToMs != 1500 {
		t.Fatalf("violations %v, want one conflict from 500ms to 1.5s", v)
	}
	for _, want := range []string{"service-lb-controller ran in", "ccm-1 (fakecloud-ccm)", "kcm-1 (kube-controller-manager-fakecloud v1.30.14)", "from 500ms to 1.5s"} {
		if !strings.Contains(v[0].Detail, want) {
			t.Errorf("detail %q lacks %q", v[0].Detail, want)
		}
	}
	// One sample of overlap is sampling skew, not a conflict.
	if v := timeline(kcm, both, kcm).Check(bounds); len(v) != 0 {
		t.Errorf("one overlapping sample: %v, want none", v)
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
	v := tl.Check(bounds)
	if len(v) != 1 || v[0].Kind != "lease" || !strings.Contains(v[0].Detail, "held by c, which holds neither main lease") {
		t.Errorf("violations %v, want the migration lease held by c", v)
	}
}

func TestSVG(t *testing.T) {
	both := map[string][]string{"kcm-1": {"service-lb-controller"}, "ccm-1": {"service-lb-controller"}}
	tl := timeline(both, both, both)
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
