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

package nodecontainer

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A container with a frozen cgroup under it cannot be killed until the
// cgroup is thawed (Docker: "tried to kill container, but did not receive
// an exit event"); Stop thaws it and stops the container. Needs
// Docker, cgroup v1's freezer, and an image with sleep (the harness's kind
// node image, once built): skipped without them.
func TestStopFrozenContainer(t *testing.T) {
	image := nodeImage(t)
	if _, err := os.Stat("/sys/fs/cgroup/freezer"); err != nil {
		t.Skip("no cgroup v1 freezer")
	}
	ctx := context.Background()
	name := "ccm-harness-thaw-test"
	_ = exec.Command("docker", "rm", "--force", name).Run()
	if out, err := exec.Command("docker", "run", "-d", "--name", name, "--entrypoint", "sleep", image, "600").CombinedOutput(); err != nil {
		t.Fatalf("docker run: %v: %s", err, out)
	}
	t.Cleanup(func() {
		_, _ = Thaw(ctx, name)
		_ = exec.Command("docker", "rm", "--force", name).Run()
	})
	out, err := exec.Command("docker", "inspect", "--format", "{{.Id}} {{.State.Pid}}", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(out))
	child := filepath.Join("/sys/fs/cgroup/freezer/docker", f[0], "frozen")
	if err := os.Mkdir(child, 0o755); err != nil {
		t.Skipf("cannot make a freezer cgroup under the container: %v", err)
	}
	if err := os.WriteFile(filepath.Join(child, "cgroup.procs"), []byte(f[1]), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(child, "freezer.state"), []byte("FROZEN"), 0); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := Stop(ctx, name); err != nil {
		t.Fatalf("Stop of a container with a frozen cgroup: %v", err)
	}
	out, _ = exec.Command("docker", "inspect", "--format", "{{.State.Running}}", name).Output()
	if strings.TrimSpace(string(out)) != "false" {
		t.Errorf("container still running after Stop (%s)", time.Since(start))
	}
	t.Logf("stopped in %s", time.Since(start).Round(time.Millisecond))
}

// Two containers stopped, then started in the other order, come back at
// their own addresses (without Stop's reconnecting, the first started
// takes the lowest free one: the other's). Needs Docker and an image with
// sleep (the harness's kind node image, once built): skipped without them.
func TestStopKeepsAddresses(t *testing.T) {
	image := nodeImage(t)
	ctx := context.Background()
	net, names := "ccm-harness-addr-test", []string{"ccm-harness-addr-test-1", "ccm-harness-addr-test-2"}
	auto := net + "-auto"
	addr := testNetwork(t, net, "172.31.254.0/24", names, auto)
	want := map[string]string{}
	for _, n := range names {
		if out, err := exec.Command("docker", "run", "-d", "--name", n, "--network", net, "--entrypoint", "sleep", image, "600").CombinedOutput(); err != nil {
			t.Fatalf("docker run: %v: %s", err, out)
		}
		want[n] = addr(n)
	}
	// Addresses, as the fabric of a kind cluster reads them: the running
	// container's, none for a stopped one, and not one that does not exist.
	if err := Stop(ctx, names[1]); err != nil {
		t.Fatal(err)
	}
	got, err := Addresses(ctx, append(names, "ccm-harness-addr-test-missing"))
	if expected := map[string][]string{names[0]: {want[names[0]]}, names[1]: nil}; err != nil || !maps.EqualFunc(got, expected, slices.Equal) {
		t.Errorf("Addresses: expected %v, actual %v (error %v)", expected, got, err)
	}
	for _, n := range names {
		if err := Stop(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{names[1], names[0]} {
		if err := Start(ctx, n); err != nil {
			t.Fatal(err)
		}
		if got := addr(n); got != want[n] {
			t.Errorf("container %s started again at %s, expected its own %s", n, got, want[n])
		}
	}
	// On a network whose subnet Docker chose, no address can be kept:
	// the container still stops, and starts again on the network.
	if out, err := exec.Command("docker", "network", "create", auto).CombinedOutput(); err != nil {
		t.Skipf("docker network create: %v: %s", err, out)
	}
	if out, err := exec.Command("docker", "network", "connect", auto, names[0]).CombinedOutput(); err != nil {
		t.Fatalf("docker network connect: %v: %s", err, out)
	}
	if err := Stop(ctx, names[0]); err != nil {
		t.Fatalf("stopping a container on a network of Docker's subnet: %v", err)
	}
	if err := Start(ctx, names[0]); err != nil {
		t.Fatal(err)
	}
	if nets, _ := networks(ctx, names[0]); nets[auto].IPAddress == "" || nets[net].IPAddress != want[names[0]] {
		t.Errorf("container %s started again with networks %+v, expected an address on %s and its own on %s", names[0], nets, auto, net)
	}
}

// A container whose kept address another took while it was stopped
// starts again all the same, at another address (Docker refuses it the
// kept one: "Address already in use"). Needs Docker and an image with
// sleep (the harness's kind node image, once built): skipped without them.
func TestStartAfterAddressTaken(t *testing.T) {
	image := nodeImage(t)
	ctx := context.Background()
	net, name, squatter := "ccm-harness-taken-test", "ccm-harness-taken-test-1", "ccm-harness-taken-test-2"
	addr := testNetwork(t, net, "172.31.253.0/24", []string{name, squatter})
	run := func(n string, args ...string) {
		args = append(append([]string{"run", "-d", "--name", n, "--network", net}, args...), "--entrypoint", "sleep", image, "600")
		if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
			t.Fatalf("docker run: %v: %s", err, out)
		}
	}
	run(name)
	kept := addr(name)
	if err := Stop(ctx, name); err != nil {
		t.Fatal(err)
	}
	run(squatter, "--ip", kept)
	if err := Start(ctx, name); err != nil {
		t.Fatalf("Start after another container took the kept address %s: %v", kept, err)
	}
	if got := addr(name); got == "" || got == kept {
		t.Errorf("container %s started again at %q, expected an address other than %s (the squatter's)", name, got, kept)
	}
}

// testNetwork makes Docker network net with subnet, and removes the
// containers, then it and the other networks named, before the test and
// after; it returns a container's address on net.
func testNetwork(t *testing.T, net, subnet string, containers []string, others ...string) func(container string) string {
	t.Helper()
	// The networks after the containers: Docker keeps a network that
	// has any.
	cleanup := func() {
		_ = exec.Command("docker", append([]string{"rm", "--force"}, containers...)...).Run()
		_ = exec.Command("docker", append([]string{"network", "rm", net}, others...)...).Run()
	}
	cleanup()
	t.Cleanup(cleanup)
	if out, err := exec.Command("docker", "network", "create", "--subnet", subnet, net).CombinedOutput(); err != nil {
		t.Skipf("docker network create: %v: %s", err, out)
	}
	return func(container string) string {
		nets, err := networks(context.Background(), container)
		if err != nil {
			t.Fatal(err)
		}
		return nets[net].IPAddress
	}
}

// nodeImage is an image with sleep in it, the harness's kind node image;
// the test is skipped without Docker or before one is built (a fresh CI's
// unit target).
func nodeImage(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker")
	}
	out, err := exec.Command("docker", "images", "--format", "{{.Repository}}:{{.Tag}}", "ccm-harness.local/kind-node").Output()
	images := strings.Fields(string(out))
	if err != nil || len(images) == 0 {
		t.Skip("no kind node image built yet")
	}
	return images[0]
}

// A stop Docker does not answer is given up after killTry, saying so,
// rather than waited on until the caller's deadline: a Docker (here a
// script) whose stop never returns.
func TestStopNoAnswer(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\ncase \"$1\" in\ninspect) echo '{}' ;;\nstop) exec sleep 60 ;;\nesac\n"
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	killTry = 200 * time.Millisecond
	t.Cleanup(func() { killTry = 30 * time.Second })
	start := time.Now()
	err := Stop(context.Background(), "held")
	if err == nil || !strings.Contains(err.Error(), "docker stop --time 0 held: no answer in 200ms") {
		t.Errorf("Stop of a container whose stop Docker does not answer: %v, want no answer in 200ms", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Stop waited %s", d)
	}
}

// State names a container's status, restarts and last log line, and says
// so when Docker does not know the container.
func TestState(t *testing.T) {
	image := nodeImage(t)
	name := "ccm-harness-state-test"
	_ = exec.Command("docker", "rm", "--force", name).Run()
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "--force", name).Run() })
	if out, err := exec.Command("docker", "run", "--name", name, "--entrypoint", "sh", image, "-c", "echo booting; exit 3").CombinedOutput(); err == nil {
		t.Fatalf("docker run of a command exiting 3 succeeded: %s", out)
	}
	if got, want := State(name), `status exited, restarts 0, exit code 3; its last log line: "booting"`; got != want {
		t.Errorf("State of an exited container: %q, want %q", got, want)
	}
	if got := State(name + "-none"); !strings.HasPrefix(got, "state unknown: docker container inspect") || !strings.Contains(strings.ToLower(got), "no such") {
		t.Errorf("State of no container: %q, want state unknown and no such container", got)
	}
}
