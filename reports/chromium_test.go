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
	"bytes"
	"context"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The run report is for people, so it is checked where people read it: in
// a real browser. Debian's chromium renders report.html of a run with a
// planted failure, served over HTTP from localhost; its DOM must mark the
// failure failed, and its screenshot must show it red.
func TestReportInChromium(t *testing.T) {
	bin := chromium(t)

	run := t.TempDir()
	golden, err := os.ReadFile(filepath.Join("testdata", "junit_folded.xml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"junit_fake-local_01.xml":                   string(golden),
		"logs/e2e-abc/cloud-controller-manager.log": "I1121 08:54:29 node_controller.go:1] Successfully initialized node node-1\n",
		"leader-migration/timeline.svg":             `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="40"><rect id="owned" x="0" y="0" width="600" height="40" fill="#3366cc"/></svg>`,
		"bringup.txt":                               "cluster e2e-abc, Kubernetes v1.37.2, provider fake (fakecloud-ccm)\netcd and kube-apiserver ready    2.79s\n",
	} {
		p := filepath.Join(run, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteMetadata(run, map[string]string{KeyProvider: "fake", KeyJobVersion: "fakecloud-ccm@v1.37.2"}); err != nil {
		t.Fatal(err)
	}
	if err := WriteMeasurements(run, []Measurement{
		{Spec: BringUp, Name: "node initialization p99", Seconds: 0.131},
		{Spec: "Nodes removes the uninitialized taint from every node [node-init]", Name: "initial nodes initialized after registration", Seconds: 0.128},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteRunReport(run); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var fetched []string
	files := http.FileServer(http.Dir(run))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetched = append(fetched, r.URL.Path)
		mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()
	url := srv.URL + "/report.html"

	screenshot := filepath.Join(t.TempDir(), "report-screenshot.png")
	if dir := os.Getenv("ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		screenshot = filepath.Join(dir, "report-screenshot.png")
	}
	_ = os.Remove(screenshot)

	b := newBrowser(t, bin)
	dom := b.run(t, "--dump-dom", url)
	b.run(t, "--screenshot="+screenshot, url)
	b.close(t)
	t.Logf("screenshot: %s", screenshot)

	// The DOM as Chromium built it: the planted failure's row is marked
	// failed, and the counts and the failure section are there.
	row := ""
	for _, tr := range strings.Split(dom, "<tr>") {
		if strings.Contains(tr, "labels the zone and region the cloud reports") {
			row, _, _ = strings.Cut(tr, "</tr>")
			break
		}
	}
	if !strings.Contains(row, `<td class="failed">failed</td>`) || !strings.Contains(row, `actual "fake-region-9z"`) {
		t.Errorf("the planted failure's row in Chromium's DOM is not marked failed with its message: %q\nDOM:\n%s", row, dom)
	}
	// The figures and the timeline are in the page itself: the bring-up's
	// steps and percentiles, each spec's latencies in its row, the
	// timeline's picture parsed as SVG in its section.
	for _, want := range []string{`<span id="failed">1 failed</span>`, `<h3 class="failed">`, "--- e2e-abc/cloud-controller-manager.log", `href="leader-migration/timeline.svg"`,
		`<th>node initialization p99</th><td>131ms</td>`, "etcd and kube-apiserver ready    2.79s",
		`<div class="fig">initial nodes initialized after registration: 128ms</div>`,
		`<div class="timeline"><svg xmlns="http://www.w3.org/2000/svg" width="600" height="40"><rect id="owned"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("Chromium's DOM lacks %q", want)
		}
	}

	// What it painted: the failure red, the passed spec green.
	f, err := os.Open(screenshot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("screenshot %s: %v", screenshot, err)
	}
	if sz := img.Bounds().Size(); sz.X != 1280 || sz.Y != 900 {
		t.Errorf("screenshot is %v, want the 1280x900 window", sz)
	}
	if red := countColor(img, 0xe5, 0x39, 0x35); red < 500 {
		t.Errorf("the screenshot has %d pixels of the failure red #e53935; the planted failure is not shown red", red)
	}
	if green := countColor(img, 0xc8, 0xe6, 0xc9); green < 200 {
		t.Errorf("the screenshot has %d pixels of the passed green #c8e6c9; the page's styles did not apply", green)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, p := range fetched {
		if p != "/report.html" && p != "/favicon.ico" {
			t.Errorf("the report fetched %s; it must be one static file", p)
		}
	}
}

// chromium is Debian's chromium. Outside CI a machine without it skips the
// test; CI must have it (.ci/run installs it), so there it fails.
func chromium(t *testing.T) string {
	bin, err := exec.LookPath("chromium")
	if err == nil {
		return bin
	}
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf("chromium not found (%v) and CI is set: CI must install Debian's chromium (.ci/run does: apt-get install chromium)", err)
	}
	t.Skipf("chromium not found (%v): apt-get install chromium to run the report's browser test (it fails instead of skipping when CI=true)", err)
	return ""
}

// browser runs Chromium with a throwaway profile, home and temp folder, so
// nothing it writes lands outside one folder that close removes.
type browser struct {
	bin, dir string
}

func newBrowser(t *testing.T, bin string) *browser {
	dir, err := os.MkdirTemp("", "ccm-harness-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{bin: bin, dir: dir}
	// close also runs on t.Fatal; a second call finds nothing to do.
	t.Cleanup(func() { b.close(t) })
	return b
}

func (b *browser) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.bin, append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(b.dir, "profile"), "--window-size=1280,900",
	}, args...)...)
	home := filepath.Join(b.dir, "home")
	tmp := filepath.Join(b.dir, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cmd.Env = append(os.Environ(), "HOME="+home, "TMPDIR="+tmp, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	// Its own process group, so the browser's helpers go when it goes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Files rather than pipes: a helper that outlives the browser would
	// hold a pipe open and Wait with it.
	stdout, err := os.Create(filepath.Join(b.dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(b.dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	out, _ := os.ReadFile(stdout.Name())
	if err != nil {
		errOut, _ := os.ReadFile(stderr.Name())
		t.Fatalf("chromium %s: %v (%s)\nstderr:\n%s", strings.Join(args, " "), err, ctx.Err(), lastLines(string(errOut), 20))
	}
	return string(out)
}

// close kills whatever Chromium left running (its crash handler starts a
// session of its own, out of reach of the process group) and removes the
// folder, failing the test if either stays.
func (b *browser) close(t *testing.T) {
	if _, err := os.Stat(b.dir); os.IsNotExist(err) {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := processesUsing(b.dir)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("chromium processes still running after SIGKILL: %v", left)
			break
		}
		for pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := os.RemoveAll(b.dir); err != nil {
		t.Errorf("remove chromium's folder: %v", err)
	}
	if _, err := os.Stat(b.dir); !os.IsNotExist(err) {
		t.Errorf("chromium's folder %s is still there", b.dir)
	}
}

// processesUsing maps the pid of every live process whose command line
// names dir to that command line. The folder is this test's own, so they
// are this test's processes.
func processesUsing(dir string) map[int]string {
	out := map[int]string{}
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(data, []byte(dir)) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err == nil && pid != os.Getpid() {
			out[pid] = strings.ReplaceAll(string(data), "\x00", " ")
		}
	}
	return out
}

func countColor(img image.Image, r, g, b uint8) int {
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if near(cr>>8, r) && near(cg>>8, g) && near(cb>>8, b) {
				n++
			}
		}
	}
	return n
}

func near(c uint32, want uint8) bool {
	d := int(c) - int(want)
	return d >= -6 && d <= 6
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
