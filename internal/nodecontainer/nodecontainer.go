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

// Package nodecontainer powers a machine that is a Docker container, such
// as a kind node: off at once, as a machine losing power, on again, and
// gone. The kind runtime's node pool uses it, and so does fakecloud when
// its instances are a cluster's node containers (--docker-machines).
package nodecontainer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Stop stops the container name at once (SIGKILL). A kill that lands
// while a kind node's own runc creates a pod's container can leave that
// container's cgroup frozen (runc freezes it to update its devices, and
// dies with the node before thawing it): its process can then neither run
// nor die, and Docker answers "tried to kill container, but did not
// receive an exit event" for as long as it stays frozen, seen on a busy
// machine in make test. Such cgroups are thawed and the stop tried once
// more.
//
// The container keeps its addresses, as a stopped machine keeps its
// private IP, on networks made with subnets of their own (elsewhere Docker
// refuses a chosen address, and it may come back at another): Docker frees a stopped container's address, and the next
// container to start on the network (another node started again first)
// takes the lowest free one, so a node would come back at another's
// address, which its instance and its Node do not say. Once stopped, the
// container is connected again with the addresses it had, which Docker
// then gives it when it starts.
func Stop(ctx context.Context, name string) error {
	nets, err := networks(ctx, name)
	if err != nil {
		return err
	}
	if err := withThaw(ctx, name, "stop", "--time", "0", name); err != nil {
		return err
	}
	for net, a := range nets {
		// Docker's default networks take no address of the user's.
		if a.IPAddress == "" || net == "bridge" || net == "host" || net == "none" {
			continue // stopped already, or no address to keep
		}
		if err := docker(ctx, "network", "disconnect", net, name); err != nil {
			return fmt.Errorf("keeping the addresses of stopped container %s: %w", name, err)
		}
		args := []string{"network", "connect", "--ip", a.IPAddress}
		if a.GlobalIPv6Address != "" {
			args = append(args, "--ip6", a.GlobalIPv6Address)
		}
		if err := docker(ctx, append(args, net, name)...); err != nil {
			// Connected again at any address rather than not at all.
			if cerr := docker(ctx, "network", "connect", net, name); cerr != nil {
				return fmt.Errorf("stopped container %s: connecting it to network %s again: %w", name, net, cerr)
			}
			// Docker takes addresses of the user's only on a network
			// made with subnets of the user's (kind's own network
			// has none): there the container may come back elsewhere,
			// as before; make the network with --subnet to keep them.
			if strings.Contains(err.Error(), "user configured subnets") {
				continue
			}
			return fmt.Errorf("keeping the addresses of stopped container %s: %w", name, err)
		}
	}
	return nil
}

// endpoint is a container's place on a Docker network, as docker inspect
// shows it.
type endpoint struct {
	IPAddress         string
	GlobalIPv6Address string
}

// networks are the container's networks and its addresses on them.
func networks(ctx context.Context, name string) (map[string]endpoint, error) {
	out, err := exec.CommandContext(ctx, "docker", "inspect", "--format", "{{json .NetworkSettings.Networks}}", name).Output()
	if err != nil {
		return nil, fmt.Errorf("docker inspect %s: %w", name, err)
	}
	var nets map[string]endpoint
	if err := json.Unmarshal(out, &nets); err != nil {
		return nil, fmt.Errorf("docker inspect %s: its networks: %w", name, err)
	}
	return nets, nil
}

// Start starts the container name; a kind node's systemd boots and its
// kubelet reports again. Starting a running container does nothing.
//
// An address Stop kept is no reservation: Docker gives it to a container
// that starts on the network while this one is stopped (a node another
// spec adds), and then refuses this start with "Address already in use",
// seen in make test's e2e-kind. The container is then connected again at
// any address and started: a machine that comes back at another address
// is a finding a spec can name, one that does not come back at all stops
// the suite.
func Start(ctx context.Context, name string) error {
	err := docker(ctx, "start", name)
	if err == nil || !strings.Contains(err.Error(), "Address already in use") {
		return err
	}
	nets, nerr := networks(ctx, name)
	if nerr != nil {
		return fmt.Errorf("%w (and then: %v)", err, nerr)
	}
	for net := range nets {
		if net == "bridge" || net == "host" || net == "none" {
			continue
		}
		if derr := docker(ctx, "network", "disconnect", net, name); derr != nil {
			return fmt.Errorf("%w (and then, releasing its kept address: %v)", err, derr)
		}
		if cerr := docker(ctx, "network", "connect", net, name); cerr != nil {
			return fmt.Errorf("%w (and then, connecting it to network %s at any address: %v)", err, net, cerr)
		}
	}
	if serr := docker(ctx, "start", name); serr != nil {
		return fmt.Errorf("%w (and again at any address: %v)", err, serr)
	}
	return nil
}

// Remove removes the container name and its volumes, running or not.
func Remove(ctx context.Context, name string) error {
	return withThaw(ctx, name, "rm", "--force", "--volumes", name)
}

// killTry bounds one try of a command that kills a container. Docker
// answers a kill its container's frozen cgroup holds with an error after
// about 12 s (seen here); a stop that has not answered after killTry is
// taken as held too, so that its cgroups are thawed rather than waited on
// until the caller's deadline. Docker goes on with the stop meanwhile,
// and a stop of a stopped container succeeds: trying again is safe. A
// variable for the tests.
var killTry = 30 * time.Second

// withThaw runs a docker command that kills the container name, and, if
// it fails or does not answer within killTry, again after thawing the
// frozen cgroups under the container.
func withThaw(ctx context.Context, name string, args ...string) error {
	try := func() error {
		tctx, cancel := context.WithTimeout(ctx, killTry)
		defer cancel()
		err := docker(tctx, args...)
		if err != nil && tctx.Err() != nil && ctx.Err() == nil {
			return fmt.Errorf("docker %s: no answer in %s", strings.Join(args, " "), killTry)
		}
		return err
	}
	err := try()
	if err == nil {
		return nil
	}
	thawed, terr := Thaw(ctx, name)
	if terr != nil || thawed == 0 {
		return err
	}
	if err := try(); err != nil {
		return fmt.Errorf("%w (after thawing %d frozen cgroups of the container)", err, thawed)
	}
	return nil
}

// Thaw thaws every frozen cgroup under the container name, for cgroup
// v1's freezer and v2 alike, with Docker's cgroupfs or systemd driver,
// and says how many it thawed.
func Thaw(ctx context.Context, name string) (int, error) {
	out, err := exec.CommandContext(ctx, "docker", "inspect", "--format", "{{.Id}}", name).Output()
	if err != nil {
		return 0, err
	}
	id := strings.TrimSpace(string(out))
	thawed := 0
	for _, root := range []string{
		"/sys/fs/cgroup/freezer/docker/" + id, "/sys/fs/cgroup/freezer/system.slice/docker-" + id + ".scope",
		"/sys/fs/cgroup/docker/" + id, "/sys/fs/cgroup/system.slice/docker-" + id + ".scope",
	} {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			frozen, thaw := "", ""
			switch d.Name() {
			case "freezer.state":
				frozen, thaw = "FROZEN", "THAWED"
			case "cgroup.freeze":
				frozen, thaw = "1", "0"
			default:
				return nil
			}
			if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == frozen {
				if os.WriteFile(path, []byte(thaw), 0) == nil {
					thawed++
				}
			}
			return nil
		})
	}
	return thawed, nil
}

func docker(ctx context.Context, args ...string) error {
	if out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("docker %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// Exists tells whether Docker has a container called name; an error is
// Docker not answering (busy, or not running), which says neither.
func Exists(ctx context.Context, name string) (bool, error) {
	out, err := exec.CommandContext(ctx, "docker", "container", "inspect", "--format", "{{.Id}}", name).CombinedOutput()
	switch {
	case err == nil:
		return true, nil
	case bytes.Contains(bytes.ToLower(out), []byte("no such container")):
		return false, nil
	default:
		return false, fmt.Errorf("docker container inspect %s: %v: %s", name, err, bytes.TrimSpace(out))
	}
}

// Addresses are the addresses of the containers names, by name, its IPv4
// address first and its global IPv6 address after it where it has one
// (a dual-stack kind cluster's nodes), read with one docker inspect: a
// container that is stopped has none, and one that does not exist is not
// in the map. One command for them all, as each costs about a tenth of a
// second of CPU (the network fabric of a kind cluster reads its nodes'
// addresses every few seconds). A container on several networks: its
// first network's.
func Addresses(ctx context.Context, names []string) (map[string][]string, error) {
	out := map[string][]string{}
	if len(names) == 0 {
		return out, nil
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", append([]string{"container", "inspect", "--format",
		"{{.Name}}{{range .NetworkSettings.Networks}} {{.IPAddress}}|{{.GlobalIPv6Address}}{{end}}"}, names...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	// Those that do not exist make it fail, after the others' lines.
	if err != nil && !bytes.Contains(bytes.ToLower(stderr.Bytes()), []byte("no such container")) {
		return nil, fmt.Errorf("docker container inspect: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		name := strings.TrimPrefix(f[0], "/")
		var ips []string
		// (a stopped container's addresses are empty: "|")
		if len(f) > 1 {
			v4, v6, _ := strings.Cut(f[1], "|")
			if v4 != "" {
				ips = append(ips, v4)
				if v6 != "" {
					ips = append(ips, v6)
				}
			}
		}
		out[name] = ips
	}
	return out, nil
}

// State says what Docker knows of a container that is not doing what it
// should (its status, restarts, exit code and error, and its last log
// line), for an error message: "state unknown: ..." if Docker does not
// answer either. Its own 15 s bound, as the caller's context has often
// run out.
func State(name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "container", "inspect", "--format",
		"status {{.State.Status}}, restarts {{.RestartCount}}, exit code {{.State.ExitCode}}{{with .State.Error}}, error {{.}}{{end}}", name).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("state unknown: docker container inspect: %v: %s", err, bytes.TrimSpace(out))
	}
	state := string(bytes.TrimSpace(out))
	logs, _ := exec.CommandContext(ctx, "docker", "logs", "--tail", "1", name).CombinedOutput()
	if last := bytes.TrimSpace(logs); len(last) > 0 {
		state += fmt.Sprintf("; its last log line: %q", last)
	}
	return state
}
