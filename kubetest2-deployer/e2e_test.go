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

package kubetest2_test

// These tests drive the real kubetest2, its exec and ginkgo testers (built
// from the pinned module) and this deployer against real clusters, because
// what they guard is what a Prow job sees: the exit code, the runner's
// JUnit, the artifacts, and nothing left running.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
	"sigs.k8s.io/ccm-harness/internal/oci"
	"sigs.k8s.io/ccm-harness/reports"
)

var (
	// root is the harness checkout, where kubetest2 runs: --build
	// compiles the suite from it.
	root string
	// state is every cluster's state folder (CCM_HARNESS_STATE), the
	// suite's own clusters' included.
	state string
	// artifactsRoot holds a folder per run: $ARTIFACTS/kubetest2 under
	// make, else a temporary one.
	artifactsRoot string
	// runDir is kubetest2's --rundir, shared by the runs so that one
	// --build serves them all.
	runDir string
	// built is set once a run has staged the binaries in runDir.
	built bool
)

// runID names the run dir the runs share (KUBETEST2_RUN_DIR is
// <--rundir>/<--run-id>).
const runID = "kubetest2-e2e"

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "kubetest2-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	root = filepath.Dir(wd)
	bin := filepath.Join(tmp, "bin")
	// kubetest2 finds deployers and testers on PATH by name.
	cmd := exec.Command("go", "build", "-o", bin+"/",
		"sigs.k8s.io/kubetest2",
		"sigs.k8s.io/kubetest2/kubetest2-tester-exec",
		"sigs.k8s.io/kubetest2/kubetest2-tester-ginkgo",
		"./cmd/kubetest2-ccm-harness")
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building kubetest2, its testers and the deployer: %v\n%s", err, out)
		return 1
	}
	fmt.Printf("built kubetest2, kubetest2-tester-exec, kubetest2-tester-ginkgo and kubetest2-ccm-harness in %s\n", time.Since(start).Round(time.Second))
	if err := os.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	state, runDir = filepath.Join(tmp, "state"), filepath.Join(tmp, "rundir")
	artifactsRoot = filepath.Join(tmp, "artifacts")
	if dir := os.Getenv("ARTIFACTS"); dir != "" {
		artifactsRoot = filepath.Join(dir, "kubetest2")
	}
	return m.Run()
}

// run is one kubetest2 invocation's outcome.
type run struct {
	code      int
	out       string
	artifacts string
	log       string
}

func (r run) String() string {
	lines := strings.Split(strings.TrimRight(r.out, "\n"), "\n")
	if len(lines) > 60 {
		lines = lines[len(lines)-60:]
	}
	return fmt.Sprintf("exit %d; output (%s), last lines:\n%s", r.code, r.log, strings.Join(lines, "\n"))
}

// kubetest2 runs `kubetest2 ccm-harness args...` in the checkout with this
// test's state and the artifacts folder named, and only those: settings
// from the developer's shell must not leak in.
func kubetest2(t *testing.T, name string, timeout time.Duration, args ...string) run {
	t.Helper()
	artifacts := filepath.Join(artifactsRoot, name)
	if err := os.RemoveAll(artifacts); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubetest2", append([]string{"ccm-harness"}, args...)...)
	cmd.Dir = root
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "ARTIFACTS", "CCM_HARNESS_STATE", "XDG_STATE_HOME", "BIN_DIR", "PROVIDER", "PROVIDER_CONFIG", "CCM_VERSION", "CCM_IMAGE", "NODES", "CLUSTER", "KUBECONFIG", "KUBETEST2_RUN_DIR", "PROW_JOB_ID":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "ARTIFACTS="+artifacts, "CCM_HARNESS_STATE="+state)
	cmd.WaitDelay = 30 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t.Logf("kubetest2 ccm-harness %s", strings.Join(args, " "))
	start := time.Now()
	err := cmd.Run()
	r := run{out: out.String(), artifacts: artifacts, log: filepath.Join(artifacts, "kubetest2.log")}
	if werr := os.WriteFile(r.log, out.Bytes(), 0o644); werr != nil {
		t.Fatal(werr)
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		t.Fatalf("running kubetest2: %v\n%s", err, r)
	}
	if ctx.Err() != nil {
		t.Fatalf("kubetest2 did not finish in %s:\n%s", timeout, r)
	}
	t.Logf("exit %d after %s; output in %s", r.code, time.Since(start).Round(time.Second), r.log)
	return r
}

var notName = regexp.MustCompile(`[^a-z0-9]+`)

// clusterName is unique per test and run.
func clusterName(t *testing.T) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	// A subtest's name has a '/', and a cluster name at most 42 characters.
	base := strings.Trim(notName.ReplaceAllString(strings.ToLower(strings.TrimPrefix(t.Name(), "Test")), "-"), "-")
	if len(base) > 30 {
		base = strings.TrimRight(base[:30], "-")
	}
	name := "kt2-" + base + "-" + hex.EncodeToString(b)
	t.Cleanup(func() { takeDown(t, name) })
	return name
}

// takeDown removes the cluster whatever the test did, so that a failing
// test leaves this machine as it found it.
func takeDown(t *testing.T, name string) {
	if _, err := os.Stat(filepath.Join(state, name)); err == nil {
		kubetest2(t, "cleanup-"+name, 2*time.Minute, "--down", "--cluster-name="+name, "--run-id="+runID, "--rundir="+runDir)
	}
	for _, l := range leftovers() {
		if pid, _ := strconv.Atoi(strings.SplitN(l, ":", 2)[0]); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	_ = os.RemoveAll(filepath.Join(artifactsRoot, "cleanup-"+name))
}

// leftovers lists the processes whose command line names the state
// folder: every component of a cluster is given paths under its own.
func leftovers() []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(data, []byte(state+"/")) {
			continue
		}
		out = append(out, fmt.Sprintf("%d: %s", pid, strings.TrimSpace(string(bytes.ReplaceAll(data, []byte{0}, []byte{' '})))))
	}
	slices.Sort(out)
	return out
}

// assertNothingLeft fails the test if any cluster process still runs or
// the cluster's state folder is still there.
func assertNothingLeft(t *testing.T, name string) {
	t.Helper()
	var left []string
	// A process SIGKILLed a moment ago may still be tearing down.
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if left = leftovers(); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("processes left behind:\n  %s", strings.Join(left, "\n  "))
	}
	if _, err := os.Stat(filepath.Join(state, name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state folder %s left behind (%v)", filepath.Join(state, name), err)
	}
}

type testCase struct {
	Name    string  `xml:"name,attr"`
	Failure *string `xml:"failure"`
	// Error is a JUnit writer's for a step that did not pass by failing
	// (Ginkgo's interrupted or panicked specs): a failure too.
	Error   *string   `xml:"error"`
	Skipped *struct{} `xml:"skipped"`
}

// steps reads a JUnit file: each testcase's name, and "failed: " and its
// failure, "skipped", or "" for a pass.
func steps(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v", err)
	}
	var doc struct {
		Cases  []testCase `xml:"testcase"`
		Suites []struct {
			Cases []testCase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string]string{}
	for _, s := range doc.Suites {
		doc.Cases = append(doc.Cases, s.Cases...)
	}
	for _, c := range doc.Cases {
		switch {
		case c.Failure != nil:
			out[c.Name] = "failed: " + strings.TrimSpace(*c.Failure)
		case c.Error != nil:
			out[c.Name] = "failed: " + strings.TrimSpace(*c.Error)
		case c.Skipped != nil:
			out[c.Name] = "skipped"
		default:
			out[c.Name] = ""
		}
	}
	return out
}

// assertSteps checks kubetest2's junit_runner.xml: exactly the steps
// named, each passed ("") or failed with a message holding the text given.
func assertSteps(t *testing.T, r run, want map[string]string) {
	t.Helper()
	got := steps(t, filepath.Join(r.artifacts, "junit_runner.xml"))
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("junit_runner.xml has no %s step: %v", name, got)
		case w == "" && g != "":
			t.Errorf("step %s %s, want passed", name, g)
		case w != "" && !strings.Contains(g, w):
			t.Errorf("step %s: %q, want failed with %q", name, g, w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("junit_runner.xml has step %s, which should not have run: %v", name, got)
		}
	}
}

// build stages the binaries in the shared run dir, once: by the exec
// test's own --build, or here if that test did not run.
func build(t *testing.T) {
	t.Helper()
	if built {
		return
	}
	r := kubetest2(t, "build", 15*time.Minute, "--build", "--run-id="+runID, "--rundir="+runDir)
	if r.code != 0 {
		t.Fatalf("--build failed: %s", r)
	}
	built = true
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown provider", []string{"--provider=nosuch"}, []string{`--provider "nosuch" is not a provider`, "(known: aws, fake, openstack, vsphere, external;"}},
		{"profile file that does not parse", []string{"--provider=external", "--provider-config=" + badProfile(t)}, []string{"provider external: profile file:", `unknown field "imagee"`}},
		{"unknown cluster", []string{"--cluster=kind"}, []string{`--cluster "kind" is not a runtime this deployer has`, "(known: local)"}},
		{"missing binary directory", []string{"--bin-dir=/nonexistent"}, []string{"etcd not found in the binary directory /nonexistent", "put all of", "or leave --bin-dir and BIN_DIR unset to build them"}},
		{"bad cluster name", []string{"--cluster-name=Bad_Name"}, []string{`--cluster-name: cluster name "Bad_Name" is not valid`, "at most 42 characters"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := kubetest2(t, "bad-input/"+strings.ReplaceAll(tt.name, " ", "-"), time.Minute,
				append(append([]string{"--up", "--down", "--run-id=bad-input", "--rundir=" + runDir}, tt.args...), "--test=exec", "--", "true")...)
			if r.code == 0 {
				t.Fatalf("kubetest2 succeeded: %s", r)
			}
			// kubetest2 prints "Error: " and the deployer's error, last.
			lines := strings.Split(strings.TrimRight(r.out, "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "Error: ") {
				t.Fatalf("last line is not kubetest2's error: %s", r)
			}
			for _, w := range tt.want {
				if !strings.Contains(last, w) {
					t.Errorf("error %q does not contain %q", last, w)
				}
			}
			// Nothing was started, so no step ran.
			assertSteps(t, r, map[string]string{})
		})
	}
	// kubetest2 panics if the deployer registers one of its own flags.
	r := kubetest2(t, "bad-input/help", time.Minute, "--help")
	if r.code != 0 || !strings.Contains(r.out, "DeployerFlags(ccm-harness):") || !strings.Contains(r.out, "--cluster-name") {
		t.Errorf("kubetest2 ccm-harness --help: %s", r)
	}
}

// TestExecTester is kubetest2's full cycle with the exec tester running a
// check of the deployer's cluster through the KUBECONFIG kubetest2 hands it.
func TestExecTester(t *testing.T) {
	name := clusterName(t)
	r := kubetest2(t, "exec", 15*time.Minute, "--build", "--up", "--down", "--run-id="+runID, "--rundir="+runDir,
		"--cluster-name="+name, "--provider=fake", "--nodes=3", "--test=exec", "--", "nodes-initialized", "--nodes=3")
	if r.code != 0 {
		t.Fatalf("kubetest2 failed: %s", r)
	}
	built = true
	assertSteps(t, r, map[string]string{"Build": "", "Up": "", "Test": "", "Down": ""})
	if !strings.Contains(r.out, "3 nodes initialized: node-1 (fakecloud://") {
		t.Errorf("the check did not report 3 initialized nodes: %s", r)
	}
	for _, f := range []string{"kube-apiserver.log", "cloud-controller-manager.log", "fakecloud.log", "fakecloud-audit.jsonl",
		"nodes.json", "services.json", "events.json", "cloud.json", "fakecloud-state.json"} {
		if st, err := os.Stat(filepath.Join(r.artifacts, "logs", name, f)); err != nil || st.Size() == 0 {
			t.Errorf("artifact logs/%s/%s missing or empty (%v)", name, f, err)
		}
	}
	var cloud struct {
		Instances map[string]struct{ ProviderID string }
	}
	if data, err := os.ReadFile(filepath.Join(r.artifacts, "logs", name, "cloud.json")); err == nil {
		if err := json.Unmarshal(data, &cloud); err != nil || len(cloud.Instances) != 3 || !strings.HasPrefix(cloud.Instances["node-1"].ProviderID, "fakecloud://") {
			t.Errorf("cloud.json does not describe the 3 nodes' instances (%v):\n%s", err, data)
		}
	}
	var md map[string]string
	if data, err := os.ReadFile(filepath.Join(r.artifacts, "metadata.json")); err != nil || json.Unmarshal(data, &md) != nil {
		t.Errorf("metadata.json unreadable: %v", err)
	} else if release := pins.ModuleVersion(pins.Kubernetes); md["job-version"] != "fakecloud-ccm@"+release || md["kubernetes-version"] != release || md["provider"] != "fake" {
		t.Errorf("metadata.json lacks the CCM's job-version, the Kubernetes version or the provider: %v", md)
	}
	for _, f := range []string{"e2e.test", "ginkgo", "kubectl", "nodes-initialized", "bin/etcd", "bin/fakecloud-ccm"} {
		if _, err := os.Stat(filepath.Join(runDir, runID, f)); err != nil {
			t.Errorf("--build did not stage %s: %v", f, err)
		}
	}
	assertNothingLeft(t, name)
}

// badProfile is a profile file with a misspelt field.
func badProfile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(p, []byte("cloud: fake\nccm: {imagee: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProfileFileAndImage brings up the CCM under test from a container
// image, named once by a profile file (--provider=external) and once by
// --ccm-image: the doors a provider's own CCM takes. The image is the
// fakecloud CCM, packed with no Docker, run in runc under upstream's
// recommended RBAC (the profile file names no manifests) or, from
// --ccm-image, under the fake provider's manifests.
func TestProfileFileAndImage(t *testing.T) {
	build(t)
	dir := t.TempDir()
	ccm := filepath.Join(dir, "fakecloud-ccm")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", ccm, "./fakecloud/cmd/fakecloud-ccm")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the fakecloud CCM: %v\n%s", err, out)
	}
	image := filepath.Join(dir, "ccm.tar")
	if err := oci.Pack(ccm, "fakecloud-ccm", "ccm-harness.local/fakecloud-ccm:kt2", image); err != nil {
		t.Fatal(err)
	}
	// Relative paths in a profile file are the file's folder's.
	profile := filepath.Join(dir, "my-ccm.yaml")
	if err := os.WriteFile(profile, []byte("name: my-ccm\ncloud: fake\nccm: {image: 'docker-archive:ccm.tar'}\ncapabilities: [instances, zones]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		args     []string
		provider string
	}{
		{"profile-file", []string{"--provider=external", "--provider-config=" + profile}, "my-ccm"},
		{"ccm-image", []string{"--provider=fake", "--ccm-image=docker-archive:" + image}, "fake"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := clusterName(t)
			r := kubetest2(t, tt.name, 5*time.Minute, append([]string{"--up", "--down", "--run-id=" + runID, "--rundir=" + runDir,
				"--cluster-name=" + name, "--nodes=2"}, append(tt.args, "--test=exec", "--", "nodes-initialized", "--nodes=2")...)...)
			if r.code != 0 {
				t.Fatalf("kubetest2 failed: %s", r)
			}
			assertSteps(t, r, map[string]string{"Up": "", "Test": "", "Down": ""})
			if !strings.Contains(r.out, "2 nodes initialized: node-1 (fakecloud://") {
				t.Errorf("the check did not report 2 initialized nodes: %s", r)
			}
			var md map[string]string
			if data, err := os.ReadFile(filepath.Join(r.artifacts, "metadata.json")); err != nil || json.Unmarshal(data, &md) != nil {
				t.Errorf("metadata.json unreadable: %v", err)
			} else if md["job-version"] != "cloud-controller-manager@docker-archive:"+image && md["job-version"] != "fakecloud-ccm@docker-archive:"+image || md["provider"] != tt.provider {
				t.Errorf("metadata.json does not name the image as job-version and %s as the provider: %v", tt.provider, md)
			}
			assertNothingLeft(t, name)
		})
	}
}

// TestGinkgoTester runs a label-filtered part of the suite with the
// ginkgo tester and the binaries --build staged in the run dir, in two
// parallel processes (the tester's --parallel): the second attaches to
// the cluster the first judges.
func TestGinkgoTester(t *testing.T) {
	build(t)
	name := clusterName(t)
	suite := filepath.Join(artifactsRoot, "ginkgo", "e2e")
	r := kubetest2(t, "ginkgo", 10*time.Minute, "--up", "--down", "--run-id="+runID, "--rundir="+runDir,
		"--cluster-name="+name, "--provider=fake", "--test=ginkgo", "--",
		"--use-built-binaries", "--parallel=2", "--ginkgo-args=--label-filter='node-init || provider-id' --no-color",
		// The suite's JUnit and report go beside kubetest2's, not over them.
		"--test-args=--artifacts="+suite)
	if r.code != 0 {
		t.Fatalf("kubetest2 failed: %s", r)
	}
	assertSteps(t, r, map[string]string{"Up": "", "Test": "", "Down": ""})
	// The suite tests the deployer's cluster (--cluster=existing), so specs
	// that add nodes or restart the CCM are skipped.
	specs := steps(t, filepath.Join(suite, "junit_fake-existing_01.xml"))
	var ran []string
	for spec, result := range specs {
		switch {
		case strings.HasPrefix(result, "failed"):
			t.Errorf("%s %s", spec, result)
		case result == "" && strings.HasPrefix(spec, "[It] "):
			ran = append(ran, spec)
		}
	}
	slices.Sort(ran)
	joined := strings.Join(ran, "\n")
	for _, tag := range []string{"[node-init]", "[provider-id]"} {
		if !strings.Contains(joined, tag) {
			t.Errorf("no %s spec in the suite's JUnit; testcases:\n%s", tag, joined)
		}
	}
	if !strings.Contains(r.out, "Test Suite Passed") {
		t.Errorf("ginkgo did not report the suite passed: %s", r)
	}
	var meta map[string]string
	data, err := os.ReadFile(filepath.Join(suite, "metadata.json"))
	if err == nil {
		err = json.Unmarshal(data, &meta)
	}
	if err != nil || meta[reports.KeyParallel] != "2" {
		t.Errorf("the suite's metadata says %s=%q (%v), not 2: it did not run in the tester's two processes", reports.KeyParallel, meta[reports.KeyParallel], err)
	}
	assertNothingLeft(t, name)
}

// TestFailingTester: a failed test makes kubetest2 fail, and Down still
// runs and leaves nothing.
func TestFailingTester(t *testing.T) {
	name := clusterName(t)
	r := kubetest2(t, "failing-tester", 5*time.Minute, "--up", "--down", "--run-id="+runID, "--rundir="+runDir,
		"--cluster-name="+name, "--test=exec", "--", "false")
	if r.code == 0 {
		t.Fatalf("kubetest2 succeeded although the tester failed: %s", r)
	}
	assertSteps(t, r, map[string]string{"Up": "", "Test": "exit status", "Down": ""})
	if _, err := os.Stat(filepath.Join(r.artifacts, "logs", name, "nodes.json")); err != nil {
		t.Errorf("Down did not dump the cluster's state: %v", err)
	}
	assertNothingLeft(t, name)
}

// TestFailedUp: a CCM that exits at start fails Up with its reason, the
// components already started are stopped, and Down still succeeds.
func TestFailedUp(t *testing.T) {
	build(t)
	name := clusterName(t)
	bins := stagedWithCCM(t, "#!/bin/sh\necho 'fakecloud-ccm: broken on purpose' >&2\nexit 3\n")
	r := kubetest2(t, "failed-up", 5*time.Minute, "--up", "--down", "--run-id="+runID, "--rundir="+runDir,
		"--cluster-name="+name, "--bin-dir="+bins, "--test=exec", "--", "true")
	if r.code == 0 {
		t.Fatalf("kubetest2 succeeded with a CCM that exits: %s", r)
	}
	assertSteps(t, r, map[string]string{"Up": "cloud-controller-manager exited at start", "Down": ""})
	if !strings.Contains(r.out, "broken on purpose") {
		t.Errorf("the error does not quote the CCM's last words: %s", r)
	}
	if _, err := os.Stat(filepath.Join(r.artifacts, "logs", name, "kube-apiserver.log")); err != nil {
		t.Errorf("the failed Up left no component logs in the artifacts: %v", err)
	}
	assertNothingLeft(t, name)

	// Without --down the cluster's processes outlive kubetest2, so only
	// Up's own cleanup stands between a failure and leftovers.
	r = kubetest2(t, "failed-up-alone", 5*time.Minute, "--up", "--run-id="+runID, "--rundir="+runDir,
		"--cluster-name="+name, "--bin-dir="+bins)
	if r.code == 0 {
		t.Fatalf("kubetest2 --up succeeded with a CCM that exits: %s", r)
	}
	assertSteps(t, r, map[string]string{"Up": "cloud-controller-manager exited at start"})
	assertNothingLeft(t, name)
}

// stagedWithCCM is a --bin-dir of the staged binaries with fakecloud-ccm
// replaced by script; "STAGED" in it is the staged binaries' folder.
func stagedWithCCM(t *testing.T, script string) string {
	t.Helper()
	bins := t.TempDir()
	staged := filepath.Join(runDir, runID, "bin")
	entries, err := os.ReadDir(staged)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "fakecloud-ccm" {
			continue
		}
		if err := os.Symlink(filepath.Join(staged, e.Name()), filepath.Join(bins, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	script = strings.ReplaceAll(script, "STAGED", staged)
	if err := os.WriteFile(filepath.Join(bins, "fakecloud-ccm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bins
}

// TestDownAloneRedacts: a --down of its own, in another invocation than
// the --up's, still knows the cloud's credentials and redacts them from
// the logs, which only their owner could read while the cluster ran. The
// CCM logs its cloud token bare, as no secret pattern would catch it.
func TestDownAloneRedacts(t *testing.T) {
	build(t)
	name := clusterName(t)
	token := filepath.Join(state, name, "cloud", "cloud.token")
	bins := stagedWithCCM(t, "#!/bin/sh\necho \"spy: my credential is $(cat "+token+")\"\nexec STAGED/fakecloud-ccm \"$@\"\n")
	up := kubetest2(t, "redact-up", 5*time.Minute, "--up", "--run-id="+runID, "--rundir="+runDir, "--cluster-name="+name, "--bin-dir="+bins)
	t.Cleanup(func() {
		kubetest2(t, "cleanup-"+name, 2*time.Minute, "--down", "--cluster-name="+name, "--run-id="+runID, "--rundir="+runDir)
	})
	if up.code != 0 {
		t.Fatalf("kubetest2 --up: %s", up)
	}
	secret, err := os.ReadFile(token)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(up.artifacts, "logs", name, "cloud-controller-manager.log")
	data, err := os.ReadFile(log)
	if err != nil || !bytes.Contains(data, append([]byte("spy: my credential is "), secret...)) {
		t.Fatalf("the CCM did not log its token, so the test proves nothing (%v):\n%s", err, data)
	}
	for _, p := range []string{log, filepath.Dir(log)} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm()&0o077 != 0 {
			t.Errorf("while the cluster runs, %s is readable by others than its owner (%v, %v)", p, st.Mode(), err)
		}
	}

	down := kubetest2(t, "redact-down", 2*time.Minute, "--down", "--run-id="+runID, "--rundir="+runDir, "--cluster-name="+name)
	if down.code != 0 {
		t.Fatalf("kubetest2 --down: %s", down)
	}
	assertNothingLeft(t, name)
	data, err = os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, secret) || !bytes.Contains(data, []byte("spy: my credential is [REDACTED]")) {
		t.Errorf("after --down, the CCM's log still holds the token, or no longer says it had one:\n%s", data)
	}
	if st, err := os.Stat(log); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("after --down, the redacted log is not readable by all: %v, %v", st.Mode(), err)
	}
}
