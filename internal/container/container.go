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

// Package container runs one container of an unpacked image (internal/oci)
// in an OCI runtime, Debian's runc or crun, as a kubelet runs a
// hostNetwork pod's container: the image's own root file system (so a
// dynamically linked entrypoint loads the image's libraries, not the
// host's), the host's network, the user, working directory and
// environment of the image or the pod, the pod's volumes, and the host's
// resolv.conf and hosts. The root is the shared unpacked image, so it is
// mounted read-only, as CCM manifests ask with readOnlyRootFilesystem;
// /tmp is a tmpfs.
//
// The container runs in the foreground under the runtime, started like
// any component (internal/process): its output is the component's log, a
// stop signals the runtime, which forwards it. The container is its own
// session, so the process's Cleanup deletes it from the runtime's state:
// nothing survives a stop, or a `down` after the harness was killed.
package container

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"sigs.k8s.io/ccm-harness/internal/oci"
	"sigs.k8s.io/ccm-harness/internal/process"
)

// Runtimes are the OCI runtimes the harness looks for, in order.
var Runtimes = []string{"runc", "crun"}

// Mount is a host file or folder in the container, as a pod's volume, or
// an empty tmpfs.
type Mount struct {
	Source, Destination string
	ReadOnly            bool
	Tmpfs               bool
}

// Spec is one container.
type Spec struct {
	// ID names the container in the runtime's state; unique in StateRoot.
	ID    string
	Image *oci.Image
	// Command and Args replace the image's entrypoint and cmd, as a pod's
	// do.
	Command, Args []string
	// Env is added to the image's, replacing variables of the same name.
	Env []string
	// RunAsUser and RunAsGroup replace the image's user, as a pod's
	// securityContext does.
	RunAsUser, RunAsGroup *int64
	Mounts                []Mount
	// Bundle is the folder that gets the runtime's config.json.
	Bundle string
	// StateRoot is the runtime's --root: a cluster keeps its containers
	// in one, apart from anything else on the machine.
	StateRoot string
}

// Runtime is the path of the first of Runtimes on PATH.
func Runtime() (string, error) {
	for _, r := range Runtimes {
		if p, err := exec.LookPath(r); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no OCI runtime: neither %s is on PATH, and a CCM image runs in one (install it: apt-get install runc), or run the CCM from a binary (ccm.binary in a profile file)", strings.Join(Runtimes, " nor "))
}

// Process writes the bundle and says how to run the container as a
// component named name: in the foreground under the runtime, deleted from
// the runtime's state when it stops.
func (s Spec) Process(name, logDir string, ready func(context.Context) error) (process.Spec, error) {
	rt, err := s.bundle()
	if err != nil {
		return process.Spec{}, err
	}
	return process.Spec{
		Name:    name,
		Path:    rt,
		Args:    []string{"--root", s.StateRoot, "run", "--bundle", s.Bundle, s.ID},
		LogDir:  logDir,
		Ready:   ready,
		Cleanup: []string{rt, "--root", s.StateRoot, "delete", "--force", s.ID},
	}, nil
}

// Output runs the container to its end and returns what it printed: for
// a one-off question to the image, such as --help.
func (s Spec) Output(ctx context.Context) ([]byte, error) {
	rt, err := s.bundle()
	if err != nil {
		return nil, err
	}
	defer exec.Command(rt, "--root", s.StateRoot, "delete", "--force", s.ID).Run() //nolint:errcheck // gone already, normally
	return exec.CommandContext(ctx, rt, "--root", s.StateRoot, "run", "--bundle", s.Bundle, s.ID).CombinedOutput()
}

// bundle writes config.json and returns the runtime to run it with.
func (s Spec) bundle() (string, error) {
	rt, err := Runtime()
	if err != nil {
		return "", err
	}
	cfg, err := s.config()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(s.Bundle, 0o755); err != nil {
		return "", err
	}
	if err := os.MkdirAll(s.StateRoot, 0o700); err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", err
	}
	return rt, os.WriteFile(filepath.Join(s.Bundle, "config.json"), data, 0o644)
}

// config is the OCI runtime configuration, modelled on `runc spec`'s
// default with the network namespace left out.
func (s Spec) config() (*specs.Spec, error) {
	img := s.Image
	argv, err := img.Command(s.Command, s.Args)
	if err != nil {
		return nil, err
	}
	uid, gid, err := s.user()
	if err != nil {
		return nil, err
	}
	cwd := img.WorkingDir
	if cwd == "" {
		cwd = "/"
	}
	if p, err := oci.InRoot(img.Root, cwd); err != nil {
		return nil, fmt.Errorf("image %s: working directory %s does not exist in the image: create it in the image or set another WorkingDir", img.Ref, cwd)
	} else if st, err := os.Stat(p); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("image %s: working directory %s is not a folder in the image", img.Ref, cwd)
	}
	caps := []string{"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"}
	if uid != 0 {
		caps = nil
	}
	mounts := []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc"},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}},
		{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
		{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/sys", Type: "bind", Source: "/sys", Options: []string{"rbind", "nosuid", "noexec", "nodev", "ro"}},
		{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777"}},
		// A hostNetwork pod gets the node's resolver and hosts.
		{Destination: "/etc/resolv.conf", Type: "bind", Source: "/etc/resolv.conf", Options: []string{"rbind", "ro"}},
		{Destination: "/etc/hosts", Type: "bind", Source: "/etc/hosts", Options: []string{"rbind", "ro"}},
	}
	for _, m := range s.Mounts {
		if m.Tmpfs {
			mounts = append(mounts, specs.Mount{Destination: m.Destination, Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=755"}})
			continue
		}
		opts := []string{"rbind", "rprivate"}
		if m.ReadOnly {
			opts = append(opts, "ro")
		}
		mounts = append(mounts, specs.Mount{Destination: m.Destination, Type: "bind", Source: m.Source, Options: opts})
	}
	return &specs.Spec{
		Version: specs.Version,
		Process: &specs.Process{
			User:            specs.User{UID: uid, GID: gid},
			Args:            argv,
			Env:             environ(img.Env, s.Env),
			Cwd:             cwd,
			Capabilities:    &specs.LinuxCapabilities{Bounding: caps, Effective: caps, Permitted: caps},
			NoNewPrivileges: true,
		},
		Root:   &specs.Root{Path: img.Root, Readonly: true},
		Mounts: mounts,
		Linux: &specs.Linux{
			// No network or UTS namespace: the host's, as hostNetwork.
			Namespaces: []specs.LinuxNamespace{{Type: specs.PIDNamespace}, {Type: specs.IPCNamespace}, {Type: specs.MountNamespace}},
			MaskedPaths: []string{"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
				"/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"},
			ReadonlyPaths: []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"},
		},
	}, nil
}

// environ is base with add's variables set, PATH defaulted as runtimes do.
func environ(base, add []string) []string {
	var out []string
	idx := map[string]int{}
	set := func(kv string) {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[k]; ok {
			out[i] = kv
			return
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	set("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	for _, kv := range base {
		set(kv)
	}
	for _, kv := range add {
		set(kv)
	}
	return out
}

// user is the uid and gid the process runs as: the pod's, or the image's
// user looked up in the image's own /etc/passwd and /etc/group, as a
// runtime does.
func (s Spec) user() (uint32, uint32, error) {
	img := s.Image
	name, group, _ := strings.Cut(img.User, ":")
	var uid, gid uint32
	if name != "" {
		u, g, err := lookup(img, "/etc/passwd", name)
		if err != nil {
			return 0, 0, err
		}
		uid, gid = u, g
	}
	if group != "" {
		g, _, err := lookup(img, "/etc/group", group)
		if err != nil {
			return 0, 0, err
		}
		gid = g
	}
	if s.RunAsUser != nil {
		uid = uint32(*s.RunAsUser)
	}
	if s.RunAsGroup != nil {
		gid = uint32(*s.RunAsGroup)
	}
	return uid, gid, nil
}

// lookup finds name (or a number) in the image's passwd or group file:
// the id, and for passwd the primary group.
func lookup(img *oci.Image, file, name string) (uint32, uint32, error) {
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return uint32(n), uint32(n), nil
	}
	what := map[string]string{"/etc/passwd": "user", "/etc/group": "group"}[file]
	notFound := fmt.Errorf("image %s: %s %q is not in the image's %s: add it there, or give a numeric id (USER 65532)", img.Ref, what, name, file)
	p, err := oci.InRoot(img.Root, file)
	if err != nil {
		return 0, 0, notFound
	}
	f, err := os.Open(p)
	if err != nil {
		return 0, 0, notFound
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 3 || fields[0] != name {
			continue
		}
		id, err := strconv.ParseUint(fields[2], 10, 32)
		if err != nil {
			return 0, 0, fmt.Errorf("image %s: %s: %s has id %q", img.Ref, file, name, fields[2])
		}
		primary := id
		if len(fields) > 3 {
			if g, err := strconv.ParseUint(fields[3], 10, 32); err == nil {
				primary = g
			}
		}
		return uint32(id), uint32(primary), nil
	}
	return 0, 0, notFound
}
