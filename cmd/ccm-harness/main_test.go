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

package main_test

// These tests run the real ccm-harness binary against the real components,
// because what they guard is what a user sees: one clear line on stderr,
// exit code 1, and no process or state left behind after a failed `up`.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
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

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"sigs.k8s.io/ccm-harness/conformance"
	"sigs.k8s.io/ccm-harness/internal/oci"
)

var (
	// cli is the ccm-harness built for this run.
	cli string
	// bins maps component names to the paths `ccm-harness binaries` gave.
	bins map[string]string
)

// components are what the local runtime and the fake provider run.
var components = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kwok", "fakecloud", "fakecloud-ccm"}

// vsphereComponents are what the local runtime and the vSphere provider run.
var vsphereComponents = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kwok", "vcsim", "vsphere-cloud-controller-manager"}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "ccm-harness-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	cli = filepath.Join(tmp, "ccm-harness")
	if out, err := exec.Command("go", "build", "-o", cli, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building ccm-harness: %v\n%s", err, out)
		return 1
	}
	// `binaries` finds the cached upstream builds (building only what is
	// missing) and refreshes the harness's own if their sources changed, so
	// the tests run the fakecloud-ccm and vcsim of this tree. Not the
	// leader-migration specs' managers, which no test here takes from bins
	// (vSphere's older CCM is minutes of compiling on empty caches).
	bins = map[string]string{}
	for _, provider := range []string{"fake", "vsphere"} {
		cmd := exec.Command(cli, "binaries", "--provider", provider, "--ccm-version=", "--label-filter=!leader-migration")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			fmt.Fprintf(os.Stderr, "ccm-harness binaries --provider %s: %v\n%s%s", provider, err, out, stderr.Bytes())
			return 1
		}
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) == 2 {
				bins[f[0]] = f[1]
			}
		}
	}
	for _, c := range append(components, vsphereComponents...) {
		if st, err := os.Stat(bins[c]); err != nil || st.Mode()&0o111 == 0 {
			fmt.Fprintf(os.Stderr, "ccm-harness binaries gave no executable %s (%v): %v\n", c, err, bins)
			return 1
		}
	}
	return m.Run()
}

// env is one test's private harness environment.
type env struct {
	state, artifacts string
}

func newEnv(t *testing.T) env {
	return env{state: t.TempDir(), artifacts: t.TempDir()}
}

// clusterName is unique per test and run, and a valid cluster name.
func clusterName(t *testing.T) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	base := strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(strings.TrimPrefix(t.Name(), "Test"), "-"))
	if len(base) > 30 {
		base = base[:30]
	}
	return strings.Trim(base, "-") + "-" + hex.EncodeToString(b)
}

type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// command prepares ccm-harness with only this test's state and artifacts:
// settings inherited from the developer's shell must not leak in.
func (e env) command(ctx context.Context, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, cli, args...)
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "CCM_HARNESS_STATE", "ARTIFACTS", "BIN_DIR", "XDG_STATE_HOME":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "CCM_HARNESS_STATE="+e.state, "ARTIFACTS="+e.artifacts)
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

func (e env) run(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, stdout, stderr := e.command(ctx, args...)
	err := cmd.Run()
	return result{code: exitCode(t, err), stdout: stdout.String(), stderr: stderr.String()}
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		t.Fatalf("running ccm-harness: %v", err)
		return -1
	}
}

// progress matches the step timings `up` prints to stderr before any error.
// Build lines count too: a source edited during the run rebuilds the
// harness's own binaries.
var progress = regexp.MustCompile(`^(\S.* +\d+\.\d\ds|building .*|built .* in .*)$`)

// errorReport returns the error's first line and the whole report (the
// first line and the log lines quoted under it). The error must be the first
// line after the progress lines.
func errorReport(t *testing.T, r result) (first, report string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	for i, l := range lines {
		if progress.MatchString(l) {
			continue
		}
		if !strings.HasPrefix(l, "ccm-harness: ") {
			t.Fatalf("stderr line %d is neither progress nor a line starting %q:\n%s", i+1, "ccm-harness: ", r)
		}
		return l, strings.Join(lines[i:], "\n")
	}
	t.Fatalf("no error on stderr:\n%s", r)
	return "", ""
}

// leftovers lists the processes whose command line names dir: every
// component of a cluster is given paths under its state directory.
func leftovers(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(data, []byte(dir+"/")) {
			continue
		}
		out = append(out, fmt.Sprintf("%d: %s", pid, strings.TrimSpace(string(bytes.ReplaceAll(data, []byte{0}, []byte{' '})))))
	}
	slices.Sort(out)
	return out
}

func pidOf(leftover string) int {
	pid, _ := strconv.Atoi(strings.SplitN(leftover, ":", 2)[0])
	return pid
}

// assertNothingLeft fails the test if a process of the cluster still runs or
// its state directory exists, and then ends those processes so one failure
// does not leak into the next test.
func assertNothingLeft(t *testing.T, e env, name string) {
	t.Helper()
	var left []string
	// A process SIGKILLed a moment ago may still be tearing down.
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if left = leftovers(e.state); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("processes left behind:\n  %s", strings.Join(left, "\n  "))
		killAll(left)
	}
	dir := filepath.Join(e.state, name)
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, en := range entries {
			names = append(names, en.Name())
		}
		t.Errorf("state directory %s left behind (err %v), holding %v", dir, err, names)
	}
}

func killAll(left []string) {
	for _, l := range left {
		if pid := pidOf(l); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// cleanupCluster takes the cluster down whatever the test did, so a failing
// test leaves this machine as it found it.
func cleanupCluster(t *testing.T, e env, name string) {
	t.Cleanup(func() {
		e.run(t, "down", "--name", name)
		killAll(leftovers(e.state))
	})
}

// binDir makes a --bin-dir of the real components of the fake provider. A
// non-empty ccmScript replaces fakecloud-ccm, to make the CCM misbehave in a
// chosen way.
func binDir(t *testing.T, ccmScript string) string {
	return binDirOf(t, components, "fakecloud-ccm", ccmScript)
}

// binDirOf makes a --bin-dir of comps, with ccm replaced by ccmScript if
// it is not empty.
func binDirOf(t *testing.T, comps []string, ccm, ccmScript string) string {
	t.Helper()
	dir := t.TempDir()
	for _, c := range comps {
		if c == ccm && ccmScript != "" {
			if err := os.WriteFile(filepath.Join(dir, c), []byte(ccmScript), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.Symlink(bins[c], filepath.Join(dir, c)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ccmImage is an image of fakecloud-ccm, its config as change leaves it.
func ccmImage(t *testing.T, change func(*v1.Config)) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.tar")
	if err := oci.Pack(bins["fakecloud-ccm"], "fakecloud-ccm", "example.com/ccm:bad", src); err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	change(&cfg.Config)
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "ccm.tar")
	tag, _ := name.NewTag("example.com/ccm:bad")
	if err := tarball.WriteToFile(out, tag, img); err != nil {
		t.Fatal(err)
	}
	return oci.DockerArchive + out
}

// ccmWithConfig is a fakecloud-ccm that gets the harness's flags and then a
// --cloud-config of the test's: the last flag wins.
func ccmWithConfig(configPath string) string { return withConfig("fakecloud-ccm", configPath) }

// withConfig is the CCM called ccm, given configPath as its cloud config.
func withConfig(ccm, configPath string) string {
	return fmt.Sprintf("#!/bin/sh\nexec %s \"$@\" --cloud-config=%s\n", bins[ccm], configPath)
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

func assertContains(t *testing.T, what, s string, want []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, s)
		}
	}
}

func TestUpBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// setup returns the arguments after `up --name <name>`, and the
		// strings the error's first line and its whole report must hold.
		setup func(t *testing.T, e env, name string) (args, first, report []string)
		// started are steps that must have completed first, so that the
		// check for leftovers has something to find if cleanup fails.
		started []string
	}{
		{
			name: "missing binary directory",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				return []string{"--bin-dir", "/nonexistent"},
					[]string{"etcd not found in the binary directory /nonexistent", "put all of", "there, or leave --bin-dir and BIN_DIR unset to build them"}, nil
			},
		},
		{
			name: "apiserver port in use",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Close() })
				port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
				return []string{"--bin-dir", binDir(t, ""), "--apiserver-port", port},
					[]string{"cluster " + name + ": ", "port " + port + " on 127.0.0.1 is in use", "choose another with --apiserver-port"}, nil
			},
			started: []string{"certificates"},
		},
		{
			name: "CCM exits at start",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				cfg := writeFile(t, t.TempDir(), "cloud-config", "endpoint: [unclosed\n")
				log := filepath.Join(e.artifacts, "logs", name, "cloud-controller-manager.log")
				return []string{"--bin-dir", binDir(t, ccmWithConfig(cfg))},
					[]string{"cluster " + name + ": cloud-controller-manager exited at start", log},
					// The CCM's own reason, quoted from its log, names the
					// file and what it must hold.
					[]string{"\n    fakecloud-ccm: fakecloud: cloud config " + cfg + ": ", "(it must be YAML with the fields endpoint, tokenFile and region)"}
			},
			started: []string{"etcd and kube-apiserver ready", "cloud ready"},
		},
		{
			name: "fakecloud unreachable",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				dir := t.TempDir()
				token := writeFile(t, dir, "token", "secret\n")
				endpoint := "http://127.0.0.1:" + strconv.Itoa(closedPort(t))
				cfg := writeFile(t, dir, "cloud-config", fmt.Sprintf("endpoint: %s\ntokenFile: %s\nregion: fake-region-1\n", endpoint, token))
				return []string{"--bin-dir", binDir(t, ccmWithConfig(cfg))},
					[]string{"cluster " + name + ": cloud-controller-manager exited at start"},
					[]string{"\n    fakecloud-ccm: fakecloud: cannot reach the fakecloud API at " + endpoint, `is fakecloud running, and is "endpoint" in the cloud config right?`}
			},
			started: []string{"etcd and kube-apiserver ready", "cloud ready"},
		},
		{
			name: "CCM image missing",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				return []string{"--ccm-image", "docker-archive:/nonexistent/ccm.tar"},
					[]string{"cluster " + name + ": fakecloud-ccm: image docker-archive:/nonexistent/ccm.tar: ", "want a `docker save` tarball holding one image"}, nil
			},
		},
		{
			name: "CCM image and a version that is no release",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				return []string{"--ccm-image", "docker-archive:/x.tar", "--ccm-version", "latest"},
					[]string{`--ccm-version "latest" beside --ccm-image names the image's release: give it as vMAJOR.MINOR.PATCH`}, nil
			},
		},
		{
			// The vSphere CCM runs no route controller: a profile that
			// claims routes for it is caught at bring-up.
			name: "claim the CCM does not serve",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				cfg := writeFile(t, t.TempDir(), "profile.yaml", "cloud: vsphere\nccm: {builtin: true}\ncapabilities: [instances, routes]\n")
				return []string{"--provider", "external", "--provider-config", cfg},
					[]string{"cluster " + name + ": provider external claims instances,routes, but its CCM runs no node-route-controller after ",
						"drop the claim from the profile, or make the CCM serve it"}, nil
			},
			started: []string{"3 nodes initialized"},
		},
		{
			name: "bad profile file",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				cfg := writeFile(t, t.TempDir(), "profile.yaml", "cloud: fake\nccm: {builtin: true, binary: /bin/true}\n")
				return []string{"--provider", "external", "--provider-config", cfg},
					[]string{"provider external: profile file: ccm: give exactly one of image, binary and builtin"}, nil
			},
		},
		{
			name: "unknown provider",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				return []string{"--provider", "nosuch"}, []string{`--provider "nosuch" is not a provider`, "(known: aws, fake, openstack, vsphere, external;"}, nil
			},
		},
		{
			name: "CCM version not pinned",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				return []string{"--provider", "vsphere", "--ccm-version", "v0.0.1"},
					[]string{"provider vsphere: vsphere-cloud-controller-manager: version v0.0.1 of k8s.io/cloud-provider-vsphere is not pinned (pinned: v1.31.0", "pin another in providers/vsphere/"}, nil
			},
		},
		{
			name: "bad vsphere provider config",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				cfg := writeFile(t, t.TempDir(), "provider.yaml", "credentials: file\n")
				return []string{"--provider", "vsphere", "--provider-config", cfg},
					[]string{"cluster " + name + `: vsphere provider config: credentials: "file" is neither "secret" nor "inline"`}, nil
			},
		},
		{
			// The CCM runs but is locked out of vCenter: `up` asks vcsim
			// why the nodes wait, and says so long before its --wait.
			name: "wrong vCenter password",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				cfg := writeFile(t, t.TempDir(), "provider.yaml", "faults:\n  wrongPassword: true\n")
				return []string{"--provider", "vsphere", "--provider-config", cfg},
					[]string{"cluster " + name + ": the CCM has not initialized every node after ", "rejects the CCM's credentials (user administrator@vsphere.local, from Secret kube-system/vsphere-credentials)", "Login failure", "fix the password there"}, nil
			},
			started: []string{"3 nodes registered"},
		},
		{
			// The OpenStack CCM exits at start when Keystone refuses it:
			// `up` asks fakecloud's Keystone why, and says that first.
			name: "wrong Keystone password",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				cfg := writeFile(t, t.TempDir(), "provider.yaml", "wrongPassword: true\n")
				return []string{"--provider", "openstack", "--provider-config", cfg},
					[]string{"cluster " + name + ": Keystone at http://127.0.0.1:", "/identity/v3 refuses the CCM's password credentials (401): fix them in [Global] of its cloud config: cloud-controller-manager exited at start"},
					[]string{"Cloud provider could not be initialized"}
			},
			started: []string{"cloud ready"},
		},
		{
			name: "Keystone unreachable",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				url := "http://127.0.0.1:" + strconv.Itoa(closedPort(t)) + "/v3"
				cfg := writeFile(t, t.TempDir(), "provider.yaml", "authURL: "+url+"\n")
				return []string{"--provider", "openstack", "--provider-config", cfg},
					[]string{"cluster " + name + ": the CCM cannot reach Keystone at " + url, "connection refused; fix auth-url in [Global] of its cloud config: cloud-controller-manager exited at start"}, nil
			},
			started: []string{"cloud ready"},
		},
		{
			// The CCM logs in and initializes the nodes; the subnet its
			// load balancers need would fail only at the first Service.
			name: "OpenStack subnet that does not exist",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				cfg := writeFile(t, t.TempDir(), "provider.yaml", "subnetID: subnet-nowhere\n")
				return []string{"--provider", "openstack", "--provider-config", cfg},
					[]string{"cluster " + name + `: Neutron has no subnet "subnet-nowhere", the CCM's [LoadBalancer] subnet-id: fix subnet-id in its cloud config (fakecloud's tenant subnet is "subnet-private")`}, nil
			},
			started: []string{"3 nodes initialized"},
		},
		{
			// The AWS CCM makes no call at start: the wait for the nodes
			// asks fakecloud's EC2 why none is initialized.
			name: "wrong AWS secret key",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				cfg := writeFile(t, t.TempDir(), "provider.yaml", "wrongSecretKey: true\n")
				return []string{"--provider", "aws", "--provider-config", cfg},
					[]string{"cluster " + name + ": the CCM has not initialized every node after ", "EC2 at http://127.0.0.1:",
						"/aws/ec2/ refuses the CCM's credentials (AuthFailure: AWS was not able to validate the provided access credentials): fix AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in its environment"}, nil
			},
			started: []string{"cloud ready"},
		},
		{
			name: "EC2 unreachable",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				url := "http://127.0.0.1:" + strconv.Itoa(closedPort(t)) + "/aws/ec2/"
				cfg := writeFile(t, t.TempDir(), "provider.yaml", "endpointURL: "+url+"\n")
				return []string{"--provider", "aws", "--provider-config", cfg},
					[]string{"cluster " + name + ": the CCM has not initialized every node after ", "the CCM cannot reach EC2 at " + url, "connection refused; fix URL in its [ServiceOverride] for EC2"}, nil
			},
			started: []string{"cloud ready"},
		},
		{
			// The CCM takes only what carries its cluster's tag: with
			// another cluster ID it finds no instance for any node.
			name: "cluster tag missing from the subnets",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				cfg := writeFile(t, t.TempDir(), "provider.yaml", "clusterID: other-cluster\n")
				return []string{"--provider", "aws", "--provider-config", cfg},
					[]string{"cluster " + name + ": the CCM has not initialized every node after ",
						`no subnet of vpc-0fa4ec10d00000001 carries the tag kubernetes.io/cluster/other-cluster of the CCM's KubernetesClusterID "other-cluster": tag the cluster's subnets, or fix KubernetesClusterID in [Global] of its cloud config (fakecloud's is "ccm-harness")`,
						"(the CCM's last error: "}, nil
			},
			started: []string{"cloud ready"},
		},
		{
			// No diagnosis to give: the wait times out and quotes the CCM.
			name: "CCM never initializes the nodes",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				cfg := writeFile(t, t.TempDir(), "provider.yaml", "faults:\n- {operation: '*', kind: error, status: 500, message: 'injected: instance API down'}\n")
				return []string{"--provider-config", cfg, "--wait", "6s"},
					[]string{"cluster " + name + ": timed out after 6s waiting for the CCM to initialize every node"},
					[]string{"expected taint node.cloudprovider.kubernetes.io/uninitialized removed by the CCM, actual: still present",
						"last log lines (" + filepath.Join(e.artifacts, "logs", name, "cloud-controller-manager.log") + ")", "injected: instance API down"}
			},
			started: []string{"3 nodes registered"},
		},
		{
			name: "CCM image exits at start",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				img := ccmImage(t, func(c *v1.Config) { c.Entrypoint = append(c.Entrypoint, "--no-such-flag") })
				return []string{"--bin-dir", binDir(t, ""), "--ccm-image", img},
					[]string{"cluster " + name + ": cloud-controller-manager exited at start"},
					[]string{"unknown flag: --no-such-flag"}
			},
			started: []string{"etcd and kube-apiserver ready", "cloud ready"},
		},
		{
			name: "CCM image's user not in the image",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				img := ccmImage(t, func(c *v1.Config) { c.User = "ccm" })
				return []string{"--bin-dir", binDir(t, ""), "--ccm-image", img},
					[]string{"cluster " + name + ": ", `user "ccm" is not in the image's /etc/passwd: add it there, or give a numeric id`}, nil
			},
			started: []string{"etcd and kube-apiserver ready", "cloud ready"},
		},
		{
			name: "CCM image's working directory not in the image",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				img := ccmImage(t, func(c *v1.Config) { c.WorkingDir = "/srv/ccm" })
				return []string{"--bin-dir", binDir(t, ""), "--ccm-image", img},
					[]string{"cluster " + name + ": ", "working directory /srv/ccm does not exist in the image"}, nil
			},
			started: []string{"etcd and kube-apiserver ready", "cloud ready"},
		},
		{
			name: "manifests that do not parse",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				dir := t.TempDir()
				writeFile(t, dir, "rbac.yaml", "apiVersion: v1\nkind: [\n")
				profile := writeFile(t, dir, "ccm.yaml", "cloud: fake\nccm: {image: 'docker-archive:ccm.tar'}\ncapabilities: [load-balancers]\nmanifests: rbac.yaml\n")
				return []string{"--provider", "external", "--provider-config", profile},
					[]string{"provider external: profile file: manifests " + filepath.Join(dir, "rbac.yaml") + ": document 1 does not parse"}, nil
			},
		},
		{
			name: "vSphere CCM exits at start",
			setup: func(t *testing.T, e env, name string) ([]string, []string, []string) {
				cfg := writeFile(t, t.TempDir(), "cloud-config", "global: [unclosed\n")
				ccm := "vsphere-cloud-controller-manager"
				return []string{"--provider", "vsphere", "--bin-dir", binDirOf(t, vsphereComponents, ccm, withConfig(ccm, cfg))},
					[]string{"cluster " + name + ": cloud-controller-manager exited at start"},
					// The vSphere CCM's last words: it tried YAML, then the
					// legacy INI format.
					[]string{"ReadCPIConfigYAML failed: yaml: line 1", `Cloud provider could not be initialized: could not init cloud provider "vsphere"`}
			},
			started: []string{"etcd and kube-apiserver ready", "cloud ready"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, name := newEnv(t), clusterName(t)
			cleanupCluster(t, e, name)
			args, first, report := tt.setup(t, e, name)
			r := e.run(t, append([]string{"up", "--name", name}, args...)...)
			if r.code != 1 {
				t.Fatalf("want exit code 1:\n%s", r)
			}
			if r.stdout != "" {
				t.Errorf("a failed up printed to stdout:\n%s", r.stdout)
			}
			line, full := errorReport(t, r)
			assertContains(t, "first error line", line, first)
			assertContains(t, "error report", full, report)
			for _, step := range tt.started {
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(step) + ` +\d`).MatchString(r.stderr) {
					t.Errorf("up failed before step %q, so nothing was started to clean up:\n%s", step, r.stderr)
				}
			}
			assertNothingLeft(t, e, name)
		})
	}
}

// TestUpQuotesCCMLog checks the quoted reason is the CCM's own, not one the
// harness made up, so a user can trust the quote to be in the log.
func TestUpQuotesCCMLog(t *testing.T) {
	t.Parallel()
	e, name := newEnv(t), clusterName(t)
	cleanupCluster(t, e, name)
	cfg := writeFile(t, t.TempDir(), "cloud-config", "endpoint: [unclosed\n")
	r := e.run(t, "up", "--name", name, "--bin-dir", binDir(t, ccmWithConfig(cfg)))
	if r.code != 1 {
		t.Fatalf("want exit code 1:\n%s", r)
	}
	_, report := errorReport(t, r)
	var reason string
	for _, l := range strings.Split(report, "\n") {
		if s, ok := strings.CutPrefix(l, "    fakecloud-ccm: "); ok {
			reason = "fakecloud-ccm: " + s
		}
	}
	if reason == "" {
		t.Fatalf("no fakecloud-ccm line quoted:\n%s", report)
	}
	log, err := os.ReadFile(filepath.Join(e.artifacts, "logs", name, "cloud-controller-manager.log"))
	if err != nil {
		t.Fatalf("the CCM's log is gone: %v", err)
	}
	if !strings.Contains(string(log), reason+"\n") {
		t.Fatalf("quoted %q is not a line of the CCM's log:\n%s", reason, log)
	}
	assertNothingLeft(t, e, name)
}

// TestBinDirErrorNamesEveryBinary follows the missing-binary error's advice
// to the letter: a directory holding exactly what it lists must do.
func TestBinDirErrorNamesEveryBinary(t *testing.T) {
	t.Parallel()
	e, name := newEnv(t), clusterName(t)
	cleanupCluster(t, e, name)
	r := e.run(t, "up", "--name", name, "--bin-dir", "/nonexistent")
	m := regexp.MustCompile(`put all of (.+) there`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no list of binaries in the error:\n%s", r)
	}
	dir := t.TempDir()
	for _, c := range strings.Split(m[1], ", ") {
		if bins[c] == "" {
			t.Fatalf("the error lists %q, not a component:\n%s", c, r)
		}
		if err := os.Symlink(bins[c], filepath.Join(dir, c)); err != nil {
			t.Fatal(err)
		}
	}
	r = e.run(t, "up", "--name", name, "--bin-dir", dir, "--nodes", "1")
	if r.code != 0 {
		t.Fatalf("up with every binary the error listed (%s) failed:\n%s", m[1], r)
	}
	if r = e.run(t, "down", "--name", name); r.code != 0 {
		t.Fatalf("down:\n%s", r)
	}
	assertNothingLeft(t, e, name)
}

func TestUpTwiceThenDownTwice(t *testing.T) {
	t.Parallel()
	e, name := newEnv(t), clusterName(t)
	cleanupCluster(t, e, name)
	bin := binDir(t, "")

	r := e.run(t, "up", "--name", name, "--bin-dir", bin)
	if r.code != 0 {
		t.Fatalf("up:\n%s", r)
	}
	kubeconfig := filepath.Join(e.state, name, "admin.kubeconfig")
	assertContains(t, "stdout of up", r.stdout, []string{"cluster " + name + " is up", kubeconfig, "ccm-harness down --name " + name})
	// A component that passes its readiness probe and dies a moment later
	// leaves a cluster that `up` called up; give it that moment.
	time.Sleep(time.Second)
	running := leftovers(e.state)
	for _, c := range components {
		found := false
		for _, l := range running {
			found = found || strings.Contains(l, ": "+filepath.Join(bin, c)+" ")
		}
		if !found {
			t.Errorf("after up reported success, %s is not running; its log ends:\n%s", c, logTail(filepath.Join(e.artifacts, "logs", name), c, 5))
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	r = e.run(t, "up", "--name", name, "--bin-dir", bin)
	if r.code != 1 {
		t.Fatalf("second up: want exit code 1:\n%s", r)
	}
	line, _ := errorReport(t, r)
	assertContains(t, "first error line", line, []string{"cluster " + name + " is already up", kubeconfig, "`ccm-harness down --name " + name + "`"})
	// The refused up must leave the running cluster alone.
	if now := leftovers(e.state); !slices.Equal(now, running) {
		t.Fatalf("the refused up changed the running cluster:\nbefore:\n  %s\nafter:\n  %s", strings.Join(running, "\n  "), strings.Join(now, "\n  "))
	}
	if _, err := os.Stat(kubeconfig); err != nil {
		t.Fatalf("the refused up removed the running cluster's kubeconfig: %v", err)
	}

	begin := time.Now()
	r = e.run(t, "down", "--name", name)
	// Not asserted: how fast the dead are reaped depends on this
	// machine's init (see TestRecordStopOrphan in cluster/process).
	t.Logf("down took %s", time.Since(begin).Round(10*time.Millisecond))
	if r.code != 0 {
		t.Fatalf("down:\n%s", r)
	}
	assertContains(t, "stdout of down", r.stdout, []string{"cluster " + name + " is down"})
	assertNothingLeft(t, e, name)
	// Down again: nothing to do, and it says so.
	if r = e.run(t, "down", "--name", name); r.code != 0 {
		t.Fatalf("second down:\n%s", r)
	}
	assertContains(t, "stdout of the second down", r.stdout, []string{"no such cluster: cluster " + name + " has no state under " + e.state + ", so nothing was taken down (clusters there: none)"})
}

// TestCCMCannotReachTheAdminAPI runs a CCM that first reaches for the
// cloud's admin credentials, as a CCM that wanted to clear its faults
// would, and then starts: it can neither read them nor use the admin API.
// It also logs its own token bare, as no secret pattern would catch it:
// the log is its owner's only while the cluster runs, and down redacts it.
func TestCCMCannotReachTheAdminAPI(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only a harness run as root keeps a binary CCM from its own user's files")
	}
	e, name := newEnv(t), clusterName(t)
	cleanupCluster(t, e, name)
	state := filepath.Join(e.state, name)
	spy := `#!/bin/sh
state=` + state + `
try() { if "$@" >/dev/null 2>&1; then echo "spy: could $*"; else echo "spy: could not $*"; fi; }
try cat $state/cloud-admin/admin.token
try ls $state/cloud-admin
endpoint=$(sed -n 's/^endpoint: //p' $state/cloud-config)
echo "spy: my credential is $(cat $state/cloud/cloud.token)"
echo "spy: the admin API with the cloud token: $(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat $state/cloud/cloud.token)" $endpoint/admin/v1/instances)"
exec ` + bins["fakecloud-ccm"] + ` "$@"
`
	r := e.run(t, "up", "--name", name, "--bin-dir", binDir(t, spy), "--nodes", "1")
	if r.code != 0 {
		t.Fatalf("up:\n%s", r)
	}
	log, err := os.ReadFile(filepath.Join(e.artifacts, "logs", name, "cloud-controller-manager.log"))
	if err != nil {
		t.Fatal(err)
	}
	assertContains(t, "the CCM's log", string(log), []string{
		"spy: could not cat " + state + "/cloud-admin/admin.token\n",
		"spy: could not ls " + state + "/cloud-admin\n",
		"spy: the admin API with the cloud token: 401\n",
	})
	secret, err := os.ReadFile(filepath.Join(state, "cloud", "cloud.token"))
	if err != nil || !strings.Contains(string(log), "spy: my credential is "+string(secret)+"\n") {
		t.Fatalf("the CCM did not log its token, so the redaction below proves nothing (%v)", err)
	}
	ccmLog := filepath.Join(e.artifacts, "logs", name, "cloud-controller-manager.log")
	for _, p := range []string{ccmLog, filepath.Dir(ccmLog)} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm()&0o077 != 0 {
			t.Errorf("while the cluster runs, %s is readable by others than its owner (%v, %v)", p, st.Mode(), err)
		}
	}
	if r = e.run(t, "down", "--name", name); r.code != 0 {
		t.Fatalf("down:\n%s", r)
	}
	assertNothingLeft(t, e, name)
	after, err := os.ReadFile(ccmLog)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(after), string(secret)) || !strings.Contains(string(after), "spy: my credential is [REDACTED]\n") {
		t.Errorf("after down, the CCM's log still holds the token, or no longer says it had one:\n%s", after)
	}
}

// TestDownRemovesOnlyItsOwn: a name that is a path, an empty name and a
// folder the harness did not make are refused or left alone, by down and
// by up.
func TestDownRemovesOnlyItsOwn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	parent := filepath.Dir(e.state)
	for _, d := range []string{filepath.Join(parent, "keep"), filepath.Join(e.state, "foreign")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	keep := writeFile(t, filepath.Join(parent, "keep"), "file", "mine")
	foreign := writeFile(t, filepath.Join(e.state, "foreign"), "file", "mine")
	for _, tc := range []struct {
		args  []string
		code  int
		first string
	}{
		{[]string{"down", "--name", "../keep"}, 1, `--name: cluster name "../keep" is not valid: use lower-case letters, digits and '-', at most 42 characters`},
		{[]string{"down", "--name", ""}, 1, `--name: cluster name "" is not valid`},
		{[]string{"down", "--name", "."}, 1, `--name: cluster name "." is not valid`},
		{[]string{"up", "--name", "../keep"}, 1, `--name: cluster name "../keep" is not valid`},
		{[]string{"down", "--name", "foreign"}, 0, "no such cluster: cluster foreign has no state under " + e.state + ", so nothing was taken down (clusters there: none)"},
		{[]string{"up", "--name", "foreign", "--bin-dir", binDir(t, "")}, 1, "cluster foreign: " + filepath.Dir(foreign) + " is not a cluster's state folder (no .ccm-harness-cluster in it): left alone; remove it by hand if it is yours"},
	} {
		r := e.run(t, tc.args...)
		if r.code != tc.code {
			t.Errorf("%v: want exit code %d:\n%s", tc.args, tc.code, r)
			continue
		}
		out := r.stdout
		if tc.code != 0 {
			out, _ = errorReport(t, r)
		}
		assertContains(t, fmt.Sprintf("%v", tc.args), out, []string{tc.first})
		for _, f := range []string{keep, foreign} {
			if _, err := os.Stat(f); err != nil {
				t.Fatalf("%v removed %s, which the harness did not make: %v", tc.args, f, err)
			}
		}
	}
}

func TestUpInterrupted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// ccmScript, if set, replaces fakecloud-ccm; it may use DIR, a
		// directory for files the test reads.
		ccmScript string
		// due reports whether the bring-up has reached the point to
		// interrupt, with the pids of processes that must not survive
		// though their command line does not name the state directory.
		due func(e env, dir string, begun time.Time) (bool, []int)
		// cause is how the error may name the interrupt: one must appear.
		cause []string
	}{
		{
			name: "after 1.5s",
			due: func(e env, dir string, begun time.Time) (bool, []int) {
				return time.Since(begun) >= 1500*time.Millisecond && len(leftovers(e.state)) > 0, nil
			},
			// Usually a component is starting then; between components
			// the step's own call sees the cancelled context.
			cause: []string{"start-up interrupted", "context canceled"},
		},
		{
			// The CCM never becomes ready here, so the interrupt lands while
			// the managers start in parallel, and the CCM has a child of its
			// own that must be stopped with it.
			name:      "while the managers start",
			ccmScript: "#!/bin/sh\nsleep 1000 &\necho $! > DIR/ccm-child.pid.tmp\nmv DIR/ccm-child.pid.tmp DIR/ccm-child.pid\nwait\n",
			due: func(e env, dir string, begun time.Time) (bool, []int) {
				data, err := os.ReadFile(filepath.Join(dir, "ccm-child.pid"))
				if err != nil {
					return false, nil
				}
				pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
				return err == nil, []int{pid}
			},
			// kube-controller-manager or kwok may still be starting too, and
			// the first of them to notice is reported.
			cause: []string{"start-up interrupted"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, name := newEnv(t), clusterName(t)
			cleanupCluster(t, e, name)
			dir := t.TempDir()
			bin := binDir(t, strings.ReplaceAll(tt.ccmScript, "DIR", dir))

			// The bring-up only has to reach the point to interrupt: under
			// make test's load its etcd and kube-apiserver alone took 57 s
			// once, and a minute for the whole was too little.
			const reach = 3 * time.Minute
			ctx, cancel := context.WithTimeout(context.Background(), reach+2*time.Minute)
			defer cancel()
			cmd, stdout, stderr := e.command(ctx, "up", "--name", name, "--bin-dir", bin)
			exited := make(chan error, 1)
			begun := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { exited <- cmd.Wait() }()
			var waitErr error
			ended := false
			t.Cleanup(func() {
				if !ended {
					_ = cmd.Process.Kill()
					<-exited
				}
			})

			var survivors []int
			for deadline := time.Now().Add(reach); ; time.Sleep(20 * time.Millisecond) {
				select {
				case waitErr = <-exited:
					ended = true
					t.Fatalf("up ended before it could be interrupted (%v):\n%s%s", waitErr, stdout, stderr)
				default:
				}
				var ok bool
				if ok, survivors = tt.due(e, dir, begun); ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("up did not reach the point to interrupt within %s:\n%s", reach, stderr)
				}
			}
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			select {
			case waitErr = <-exited:
				ended = true
			case <-time.After(time.Minute):
				t.Fatalf("up still runs a minute after SIGINT:\n%s", stderr)
			}
			r := result{code: exitCode(t, waitErr), stdout: stdout.String(), stderr: stderr.String()}
			if r.code == 0 {
				t.Fatalf("interrupted up exited 0:\n%s", r)
			}
			line, _ := errorReport(t, r)
			assertContains(t, "first error line", line, []string{"cluster " + name + ": "})
			if !slices.ContainsFunc(tt.cause, func(c string) bool { return strings.Contains(line, c) }) {
				t.Errorf("first error line names none of %q:\n%s", tt.cause, line)
			}
			assertNothingLeft(t, e, name)
			for _, pid := range survivors {
				if running(pid) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					t.Errorf("the CCM's child %d survived the interrupt", pid)
				}
			}
		})
	}
}

// logTail is the end of a component's log; the CCM's is named for its role.
func logTail(dir, component string, n int) string {
	name := component
	if component == "fakecloud-ccm" {
		name = "cloud-controller-manager"
	}
	data, err := os.ReadFile(filepath.Join(dir, name+".log"))
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

// running reports whether pid is a live process; a zombie awaiting its
// reaper is not.
func running(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// gridRun writes the artifacts folder a run leaves, as far as grid reads
// it: JUnit, metadata.json and started.json.
func gridRun(t *testing.T, provider string, started int64, zone string) string {
	t.Helper()
	dir := t.TempDir()
	zoneCase := `<testcase name="[It] Nodes labels the zone and region the cloud reports [zone]" time="1.5"></testcase>`
	if zone == "failed" {
		zoneCase = `<testcase name="[It] Nodes labels the zone and region the cloud reports [zone]" time="1.5"><failure message="" type="failed">[FAILED] node node-1: expected zone "a", actual "b"&#xA;In [It] at: nodes.go:1</failure></testcase>`
	}
	writeFile(t, dir, "junit_"+provider+"-local_01.xml", `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="2"><testsuite name="CCM conformance" tests="2">
`+zoneCase+`
<testcase name="[It] Nodes removes the uninitialized taint from every node [node-init]" time="0.5"></testcase>
</testsuite></testsuites>`)
	writeFile(t, dir, "metadata.json", fmt.Sprintf(`{"provider": %q, "job-version": "%s-ccm@v1"}`, provider, provider))
	writeFile(t, dir, "started.json", fmt.Sprintf(`{"timestamp": %d}`, started))
	return dir
}

func TestGrid(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	newer := gridRun(t, "fake", 1790000600, "failed")
	older := gridRun(t, "vsphere", 1790000000, "passed")
	out := filepath.Join(t.TempDir(), "grid.html")
	r := e.run(t, "grid", "--out", out, newer, older)
	if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "grid of 2 runs: "+out) {
		t.Fatalf("grid of two runs:\n%s", r)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	// Runs are columns, oldest first; specs are rows.
	if i, j := strings.Index(page, older), strings.Index(page, newer); i < 0 || j < 0 || i > j {
		t.Errorf("columns must be the runs, oldest (%s) first:\n%s", older, page)
	}
	_, zoneRow, _ := strings.Cut(page, "<td>Nodes labels the zone and region the cloud reports [zone]</td>")
	zoneRow, _, _ = strings.Cut(zoneRow, "</tr>")
	if zoneRow != `<td class="passed">passed</td><td class="failed">failed</td>` {
		t.Errorf("zone row %q, want passed in the older run, failed in the newer", zoneRow)
	}
	if !strings.Contains(page, `<td>Nodes removes the uninitialized taint from every node [node-init]</td><td class="passed">passed</td><td class="passed">passed</td>`) {
		t.Errorf("node-init row missing or wrong:\n%s", page)
	}
}

func TestGridBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := gridRun(t, "fake", 1790000000, "passed")
	empty := t.TempDir()
	out := filepath.Join(t.TempDir(), "grid.html")
	for _, tc := range []struct {
		name  string
		args  []string
		first []string
	}{
		{"folder without junit", []string{"grid", "--out", out, good, empty}, []string{"ccm-harness: grid: no junit*.xml in " + empty, "give the --artifacts or $ARTIFACTS a run wrote to"}},
		{"no such folder", []string{"grid", "--out", out, "/nonexistent/run"}, []string{"ccm-harness: grid: /nonexistent/run is not a folder", "give a run's artifacts folder"}},
		{"no folder", []string{"grid", "--out", out}, []string{"ccm-harness: grid: no artifact folders given", "ccm-harness grid --out grid.html"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.run(t, tc.args...)
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if r.code != 1 || len(lines) != 1 {
				t.Fatalf("want exit 1 and one line on stderr:\n%s", r)
			}
			assertContains(t, "the error", lines[0], tc.first)
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s written despite the error", out)
			}
		})
	}
}

func TestMatrixBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	suite := filepath.Join(t.TempDir(), "e2e.test")
	if err := os.WriteFile(suite, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	artifacts := t.TempDir()
	for _, tc := range []struct {
		name  string
		args  []string
		first []string
	}{
		{"no CCM within the policy", []string{"matrix", "--provider=vsphere", "--suite", suite},
			[]string{"ccm-harness: matrix: provider vsphere: no CCM version (v1.31.0, v1.30.1) is within the version skew policy", "pin a CCM of one of those minors in the provider's folder"}},
		{"unserved release", []string{"matrix", "--kubernetes-versions=v1.36,v1.20", "--suite", suite},
			[]string{"ccm-harness: --kubernetes-version v1.20 is not a Kubernetes release the harness builds (choose one of v1.37.2, v1.36.3, v1.35.4, v1.34.4"}},
		{"no suite", []string{"matrix", "--suite", "/nonexistent/e2e.test"},
			[]string{"ccm-harness: matrix: the suite /nonexistent/e2e.test is missing (run make build, or name it with --suite)"}},
		{"an existing cluster", []string{"matrix", "--cluster=existing", "--suite", suite},
			[]string{"ccm-harness: matrix: --cluster=existing runs the cluster's own release"}},
		{"an image of no release", []string{"matrix", "--ccm-image=docker-archive:/x.tar", "--suite", suite},
			[]string{"ccm-harness: matrix: the image docker-archive:/x.tar names no release", "give its release with --ccm-version vMAJOR.MINOR.PATCH"}},
		{"an image and versions", []string{"matrix", "--ccm-image=docker-archive:/x.tar", "--ccm-version=v1.36.0", "--ccm-versions=v1.36.0,v1.35.0", "--suite", suite},
			[]string{"ccm-harness: matrix: a CCM image is one version, its own; drop --ccm-versions"}},
		{"a version without an image", []string{"matrix", "--ccm-version=v1.36.0", "--suite", suite},
			[]string{"ccm-harness: matrix: --ccm-version names an image's release, beside --ccm-image", "choose the matrix's CCM versions with --ccm-versions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.run(t, append(tc.args, "--artifacts", artifacts)...)
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if r.code != 1 || len(lines) != 1 {
				t.Fatalf("want exit 1 and one line on stderr:\n%s", r)
			}
			assertContains(t, "the error", lines[0], tc.first)
			if entries, _ := os.ReadDir(artifacts); len(entries) != 0 {
				t.Errorf("the matrix left %d entries in its artifacts folder", len(entries))
			}
		})
	}
	// The cells, listed: what the jobs in jobs/ are checked against.
	r := e.run(t, "matrix", "--list", "--provider=aws", "--kubernetes-versions=v1.36", "--outside-policy")
	want := "v1.36.3 v1.37.1 outside the skew policy: CCM newer than the kube-apiserver\nv1.36.3 v1.36.2 same minor\nv1.36.3 v1.35.3 CCM one minor older\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("matrix --list:\n%s\nwant stdout:\n%s", r, want)
	}
	// An image at its release: the clusters the policy allows beside it,
	// given as flags or in a profile file.
	r = e.run(t, "matrix", "--list", "--ccm-image=docker-archive:/x.tar", "--ccm-version=v1.36.0")
	want = "v1.36.3 v1.36.0 same minor\nv1.37.2 v1.36.0 CCM one minor older\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("matrix --list of an image:\n%s\nwant stdout:\n%s", r, want)
	}
	profile := filepath.Join(t.TempDir(), "my-ccm.yaml")
	if err := os.WriteFile(profile, []byte("cloud: fake\nccm: {image: 'docker-archive:x.tar', version: v1.36.0}\ncapabilities: [zones]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.run(t, "matrix", "--list", "--provider=external", "--provider-config="+profile)
	if r.code != 0 || r.stdout != want {
		t.Errorf("matrix --list of a profile file's image:\n%s\nwant stdout:\n%s", r, want)
	}
}

// TestBinariesLeaderMigrationOnly: the build make e2e runs in the
// background makes only what the leader-migration specs add, so it never
// takes a cluster component's build from the foreground.
func TestBinariesLeaderMigrationOnly(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(cli, "binaries", "--provider=fake", "--ccm-version=", "--leader-migration-only").Output()
	if err != nil {
		t.Fatalf("binaries --leader-migration-only: %v\n%s", err, out)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		got = append(got, strings.Fields(line)[0])
	}
	if want := []string{"kube-controller-manager-fakecloud", "fakecloud-ccm-older"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("expected %v, actual %v", want, got)
	}
	out, err = exec.Command(cli, "binaries", "--provider=fake", "--ccm-version=", "--leader-migration-only", "--label-filter=!leader-migration").Output()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("with no migration spec selected: %q, %v; expected nothing built", out, err)
	}
}

// TestReport: ccm-harness report checks a run's conformance report against
// the run's JUnit and prints it; one edited by hand, or none, is one line
// naming the cause.
func TestReport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := gridRun(t, "fake", 1790000600, "failed")
	writeFile(t, dir, "metadata.json", `{"provider": "fake", "ccm": "fakecloud-ccm", "ccm-version": "v1.37.2", "job-version": "fakecloud-ccm@v1.37.2",
		"kubernetes-version": "v1.37.2", "cluster": "local", "capabilities": "instances,zones"}`)
	if _, err := conformance.Write(dir); err != nil {
		t.Fatal(err)
	}
	r := e.run(t, "report", dir)
	if r.code != 0 || r.stderr != "" ||
		!strings.Contains(r.stdout, "fakecloud-ccm v1.37.2 (provider fake) on Kubernetes v1.37.2, local cluster: failure") ||
		!regexp.MustCompile(`zones +true +failure +0 +1 +0 +0 +0`).MatchString(r.stdout) ||
		!strings.Contains(r.stdout, `FAILED zone/labels: node node-1: expected zone "a", actual "b"`) {
		t.Fatalf("report of a run that failed the zone spec:\n%s", r)
	}
	path := filepath.Join(dir, conformance.File)
	data, _ := os.ReadFile(path)
	writeFile(t, dir, conformance.File, strings.Replace(string(data), "result: failure", "result: success", 1))
	if r := e.run(t, "report", dir); r.code == 0 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "is not the report of the run's JUnit and metadata") {
		t.Errorf("a report edited by hand:\n%s", r)
	}
	if r := e.run(t, "report", t.TempDir()); r.code == 0 || !strings.Contains(r.stderr, "no conformance-report.yaml in ") {
		t.Errorf("no report:\n%s", r)
	}
}

// upstreamSuite stands in for Kubernetes' e2e.test: it checks that the
// cluster is up (its kubeconfig is there), then writes the JUnit a run of
// two specs leaves in --report-dir, the UDP one failed.
const upstreamSuite = `#!/bin/sh
for a in "$@"; do case "$a" in --report-dir=*) dir=${a#--report-dir=} ;; --kubeconfig=*) kc=${a#--kubeconfig=} ;; esac; done
test -s "$kc" || { echo "no kubeconfig at $kc" >&2; exit 3; }
printf '%s\n' "$@" > "$dir/args"
mkdir "$(mktemp -d)/left-behind" || exit 4
cat > "$dir/junit_01.xml" <<XML
<testsuites><testsuite>
<testcase name="[It] [sig-network] LoadBalancers [Feature:LoadBalancer] should be able to change the type and ports of a TCP service [Slow]" time="3"></testcase>
<testcase name="[It] [sig-network] LoadBalancers [Feature:LoadBalancer] should be able to change the type and ports of a UDP service [Slow]" time="3"><failure message="UDP not answered">stack</failure></testcase>
<testcase name="[It] [sig-network] Services should serve a basic endpoint from pods" time="0"><skipped message="skipped"></skipped></testcase>
</testsuite></testsuites>
XML
echo "Will run 2 of 3206 specs"
exit 1
`

// TestUpstream: upstream brings a cluster up, runs the suite against it,
// judges its JUnit against the provider's list, says why in one line when
// it does not hold, and leaves nothing behind either way.
func TestUpstream(t *testing.T) {
	t.Parallel()
	e, name := newEnv(t), clusterName(t)
	cleanupCluster(t, e, name)
	bin := binDir(t, "")
	dir := t.TempDir()
	suite := filepath.Join(dir, "e2e.test")
	listed := filepath.Join(dir, "listed.yaml")
	empty := filepath.Join(dir, "empty.yaml")
	unsupported := filepath.Join(dir, "unsupported.yaml")
	undecided := filepath.Join(dir, "undecided.yaml")
	for path, text := range map[string]string{
		undecided:   "cannotPass:\n- spec: ports of a UDP service\n  reason: why\n  race: placement\n  decidedBy: loadbalancer/session-affinity\n",
		unsupported: "unsupported: its load balancers answer at names only fakecloud resolves\n",
		suite:       upstreamSuite,
		listed:      "cannotPass:\n- spec: ports of a UDP service\n  reason: no UDP here\n",
		empty:       "cannotPass: []\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	r := e.run(t, "upstream", "--name", name, "--bin-dir", bin, "--e2e-test", suite, "--expect", listed)
	if r.code != 0 {
		t.Fatalf("upstream with the UDP spec listed:\n%s", r)
	}
	assertContains(t, "its stdout", r.stdout, []string{"2 upstream specs: 1 passed, 1 cannot pass here (listed, with why), 0 wrong.", "| failed | no UDP here |"})
	if _, err := os.Stat(filepath.Join(e.artifacts, "upstream", "summary.md")); err != nil {
		t.Errorf("no summary in the artifacts: %v", err)
	}
	// What the suite left in its TMPDIR goes with it.
	if left, _ := filepath.Glob(filepath.Join(e.artifacts, "upstream", "tmp-*")); len(left) > 0 {
		t.Errorf("the suite's temporary folder is left behind: %v", left)
	}
	assertNothingLeft(t, e, name)

	// --skip-listed hands the listed names to the suite's skip.
	r = e.run(t, "upstream", "--name", name, "--bin-dir", bin, "--e2e-test", suite, "--expect", listed, "--skip-listed", "--skip", "rolling update")
	args, _ := os.ReadFile(filepath.Join(e.artifacts, "upstream", "args"))
	if r.code != 0 || !strings.Contains(string(args), "--ginkgo.skip=rolling update|ports of a UDP service\n") {
		t.Errorf("upstream --skip-listed: the suite's arguments:\n%s\nwant --ginkgo.skip=rolling update|ports of a UDP service\n%s", args, r)
	}
	assertNothingLeft(t, e, name)

	r = e.run(t, "upstream", "--name", name, "--bin-dir", bin, "--e2e-test", suite, "--expect", empty)
	if r.code != 1 {
		t.Fatalf("upstream with nothing listed: want exit 1:\n%s", r)
	}
	// The error is the last line, after the bring-up's progress.
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	line := lines[len(lines)-1]
	assertContains(t, "its error", line, []string{"ccm-harness: upstream e2e: \"[sig-network] LoadBalancers [Feature:LoadBalancer] should be able to change the type and ports of a UDP service [Slow]\" failed: UDP not answered"})
	assertNothingLeft(t, e, name)

	// Bad input: said in one line, before any bring-up.
	for _, tc := range []struct {
		name  string
		args  []string
		first []string
	}{
		{"no list", []string{"--expect", filepath.Join(dir, "none.yaml")}, []string{"read the upstream expectations", "each provider's folder has an upstream.yaml"}},
		{"a malformed list", []string{"--expect", suite}, []string{suite + ":", "want cannotPass: a list of spec and reason"}},
		{"no suite", []string{"--expect", empty, "--e2e-test", filepath.Join(dir, "none")}, []string{"--e2e-test:", "leave it out to build the cluster's release's"}},
		{"an unsupported provider", []string{"--expect", unsupported}, []string{"provider fake cannot be judged by upstream's suite here: its load balancers answer at names only fakecloud resolves (" + unsupported + ")"}},
		{"a provider without load balancers", []string{"--provider=vsphere", "--expect", empty}, []string{"provider vsphere does not claim load-balancers: upstream's [Feature:LoadBalancer] specs need a CCM that makes load balancers"}},
		// A spec listed as failing by chance must name a known difference
		// of the provider, which judges the same fault every run.
		{"a race decided by no known difference", []string{"--expect", undecided}, []string{undecided + `: "ports of a UDP service" fails by chance and names "loadbalancer/session-affinity" as the spec that fails every run, which is none of the provider's known differences (it has none)`}},
		{"no process", []string{"--expect", empty, "--procs", "0"}, []string{"--procs=0: the suite needs at least one process"}},
		// Ginkgo's command line runs in parallel only a suite of its own
		// Ginkgo, which an older release's e2e.test does not link; said
		// before that suite is built.
		{"an older release's suite in parallel", []string{"--expect", empty, "--kubernetes-version=v1.36.3", "--procs", "2"}, []string{"--procs=2: the e2e.test of Kubernetes v1.36.3 links that release's Ginkgo", "run it with --procs=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.run(t, append([]string{"upstream", "--name", name, "--bin-dir", bin}, tc.args...)...)
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if r.code != 1 || len(lines) != 1 {
				t.Fatalf("want exit 1 and one line on stderr:\n%s", r)
			}
			assertContains(t, "the error", lines[0], tc.first)
			assertNothingLeft(t, e, name)
		})
	}
}
