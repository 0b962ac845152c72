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

// Package nodeimage builds the kind node image with no container registry:
// a Debian root file system from debootstrap, kind's own base-image files
// from the pinned kind module, the Kubernetes binaries built from the
// pinned module, and every image the nodes run (control plane, kube-proxy,
// pause, CoreDNS, agnhost) made from those binaries and loaded into the image's
// containerd. The result is kept in Docker under a tag that names its
// inputs, so it is built once per recipe.
package nodeimage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/binaries/cache"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
	"sigs.k8s.io/ccm-harness/internal/filelock"
)

// recipe changes whenever what Build makes changes, so that a node image
// cached under the old tag is not used.
const recipe = "8"

const (
	// Suite is the Debian release of the nodes; the host's packages
	// registry serves it.
	Suite = "bookworm"
	// DefaultMirror is where debootstrap fetches packages;
	// $CCM_HARNESS_DEBIAN_MIRROR overrides it.
	DefaultMirror = "http://deb.debian.org/debian"
	// Repository is the node image's name in Docker; tags name versions.
	Repository = "ccm-harness.local/kind-node"
)

// packages are what kind's base image installs, less what only rootless
// or storage tests need, plus Debian's containerd, runc and CNI plugins,
// which kind builds from source.
var packages = []string{
	"systemd", "systemd-sysv", "dbus", "conntrack", "iptables", "nftables", "iproute2", "ethtool",
	"util-linux", "mount", "kmod", "libseccomp2", "pigz", "ca-certificates", "procps",
	"containerd", "runc", "containernetworking-plugins",
	// Not the node's: the agnhost image's tools (agnhostTools).
	"busybox", "curl", "netcat-openbsd", "socat", "wget",
}

// Options say how to build.
type Options struct {
	// Binaries builds the Kubernetes binaries the image carries.
	Binaries *binaries.Source
	// Mirror is the Debian mirror; default $CCM_HARNESS_DEBIAN_MIRROR,
	// else DefaultMirror.
	Mirror string
	// Logf reports progress; may be nil.
	Logf func(format string, args ...any)
	// KubernetesVersion is the nodes' release, one of
	// pins.KubernetesReleases; "" for go.mod's.
	KubernetesVersion string
}

// release is the nodes' Kubernetes release.
func (o Options) release() string {
	if o.KubernetesVersion != "" {
		return o.KubernetesVersion
	}
	return pins.ModuleVersion(pins.Kubernetes)
}

func (o Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// components are the binaries the image is made of: a release's, at the
// nodes' release, and the test server, etcd, pause and crictl, whatever
// it is.
func (o Options) components() ([]binaries.Component, error) {
	comps := []binaries.Component{binaries.Etcd, binaries.Agnhost, binaries.Pause, binaries.Crictl, binaries.CoreDNS}
	for _, c := range []binaries.Component{binaries.Kubelet, binaries.Kubeadm, binaries.Kubectl, binaries.KubeAPIServer,
		binaries.KubeControllerManager, binaries.KubeScheduler, binaries.KubeProxy} {
		at, err := c.At(o.KubernetesVersion)
		if err != nil {
			return nil, err
		}
		comps = append(comps, at)
	}
	return comps, nil
}

// Ref is the tag of the node image the current recipe makes of release.
func Ref(release string) (string, error) {
	kind, err := KindVersion()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintln(h, recipe, Suite, strings.Join(packages, ","), kind, release,
		pins.ModuleVersion("go.etcd.io/etcd/server/v3"), binaries.CoreDNS.Versions)
	return Repository + ":" + release + "-" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// KindVersion is the version of sigs.k8s.io/kind whose base-image files
// the node image carries: the one go.mod requires, whose library makes the
// clusters.
func KindVersion() (string, error) {
	if v := pins.ModuleVersion("sigs.k8s.io/kind"); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("no pinned version of sigs.k8s.io/kind (is internal/binaries/pins/versions.go intact?)")
}

// Ensure returns the node image's reference, building it first if Docker
// does not hold it.
func Ensure(ctx context.Context, o Options) (string, error) {
	ref, err := Ref(o.release())
	if err != nil {
		return "", err
	}
	if err := docker(ctx, nil, "version", "--format", "{{.Server.Version}}"); err != nil {
		return "", fmt.Errorf("the kind runtime needs a Docker engine, and `docker version` fails: %w (start dockerd; on a machine whose sandbox lacks CAP_SYS_RESOURCE, .ci/docker-setup shows how)", err)
	}
	if docker(ctx, nil, "image", "inspect", "--format", "{{.Id}}", ref) == nil {
		return ref, nil
	}
	// One build per image on the machine: make test's kind suites start
	// at once, and on a cold cache each would debootstrap the same image.
	// The one that waited finds it built.
	dir := ""
	if o.Binaries != nil {
		dir = o.Binaries.CacheDir
	}
	tag := ref[strings.LastIndex(ref, ":")+1:]
	unlock, err := filelock.Lock(ctx, cache.New(dir).Lock("kind-node-image-"+tag), "kind node image "+ref+", which another process is building")
	if err != nil {
		return "", err
	}
	defer unlock()
	if docker(ctx, nil, "image", "inspect", "--format", "{{.Id}}", ref) == nil {
		return ref, nil
	}
	start := time.Now()
	o.logf("building kind node image %s (first run only: about 3 minutes)", ref)
	if err := build(ctx, o, ref); err != nil {
		return "", fmt.Errorf("building kind node image %s: %w", ref, err)
	}
	o.logf("built kind node image %s in %s", ref, time.Since(start).Round(time.Second))
	return ref, nil
}

func build(ctx context.Context, o Options, ref string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("debootstrap needs root: run as root once to build it, or `docker load` a node image tagged %s built elsewhere", ref)
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return fmt.Errorf("debootstrap is not installed: apt-get install debootstrap")
	}
	kindDir, err := kindModuleDir(ctx)
	if err != nil {
		return err
	}
	comps, err := o.components()
	if err != nil {
		return err
	}
	bins, err := o.Binaries.Paths(ctx, comps...)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "ccm-harness-nodeimage-")
	if err != nil {
		return err
	}
	defer removeRoot(tmp)
	root := filepath.Join(tmp, "rootfs")

	mirror := o.Mirror
	if mirror == "" {
		mirror = os.Getenv("CCM_HARNESS_DEBIAN_MIRROR")
	}
	if mirror == "" {
		mirror = DefaultMirror
	}
	o.logf("debootstrap %s from %s", Suite, mirror)
	cmd := exec.CommandContext(ctx, "debootstrap", "--variant=minbase", "--include="+strings.Join(packages, ","), Suite, root, mirror)
	// Stopped (Ctrl-C), debootstrap unmounts what it mounted in the root
	// on SIGTERM; SIGKILL would leave its /proc mounted.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("debootstrap %s from %s failed (%v); is the mirror reachable? (set CCM_HARNESS_DEBIAN_MIRROR to another): %s", Suite, mirror, err, lastLines(out, 5))
	}
	required, err := requiredImages(ctx, bins["kubeadm"], o.release())
	if err != nil {
		return err
	}
	if err := configure(root, kindDir, o.release(), bins, required); err != nil {
		return err
	}
	imgs, err := nodeImages(root, bins, required)
	if err != nil {
		return err
	}
	imageDir := filepath.Join(tmp, "images")
	if err := os.MkdirAll(imageDir, 0o755); err != nil {
		return err
	}
	for i, img := range imgs {
		if err := img.write(root, filepath.Join(imageDir, fmt.Sprintf("%02d.tar", i))); err != nil {
			return err
		}
	}
	o.logf("importing the root file system into Docker")
	stage := ref + "-stage"
	tarCmd := exec.CommandContext(ctx, "tar", "--numeric-owner", "-C", root, "-cf", "-", ".")
	pipe, err := tarCmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := tarCmd.Start(); err != nil {
		return err
	}
	importErr := docker(ctx, pipe, append(append([]string{"import"}, imageChanges...), "-", stage)...)
	// Unblocks a tar whose reader gave up.
	pipe.Close()
	if err := tarCmd.Wait(); err != nil && importErr == nil {
		importErr = fmt.Errorf("tar of the root file system: %w", err)
	}
	if importErr != nil {
		return importErr
	}
	defer docker(context.Background(), nil, "image", "rm", "--force", stage) //nolint:errcheck // best effort
	o.logf("loading %d images into the node image's containerd", len(imgs))
	return preload(ctx, stage, ref, imageDir, len(imgs))
}

// imageChanges are the node image's settings, as kind's base image has
// them but for its STOPSIGNAL, which `docker import` and `docker commit`
// cannot set: kind removes nodes with `docker rm --force`, which does not
// ask.
var imageChanges = []string{
	"--change", `ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]`,
	"--change", "ENV container=docker",
}

// preload runs containerd in a container of stage, imports the images
// into it, as kind's node image build does, and commits the result as ref.
func preload(ctx context.Context, stage, ref, imageDir string, n int) error {
	name := "ccm-harness-nodeimage-" + fmt.Sprint(time.Now().UnixNano())
	if err := docker(ctx, nil, "run", "--detach", "--privileged", "--name", name,
		"--volume", imageDir+":/kind/images:ro", "--entrypoint", "/usr/bin/containerd", stage); err != nil {
		return err
	}
	defer docker(context.Background(), nil, "rm", "--force", "--volumes", name) //nolint:errcheck // best effort
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := docker(ctx, nil, "exec", name, "ctr", "version")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("containerd in the image build container did not answer within 30s: %w", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for i := 0; i < n; i++ {
		if err := docker(ctx, nil, "exec", name, "ctr", "--namespace=k8s.io", "images", "import",
			"--label=io.cri-containerd.pinned=pinned", "--all-platforms", "--no-unpack", fmt.Sprintf("/kind/images/%02d.tar", i)); err != nil {
			return err
		}
	}
	if err := docker(ctx, nil, "stop", "--time", "30", name); err != nil {
		return err
	}
	return docker(ctx, nil, append(append([]string{"commit"}, imageChanges...), name, ref)...)
}

// requiredImages asks kubeadm which images its control plane runs.
func requiredImages(ctx context.Context, kubeadm, release string) (map[string]string, error) {
	out, err := exec.CommandContext(ctx, kubeadm, "config", "images", "list", "--kubernetes-version", release).Output()
	if err != nil {
		return nil, fmt.Errorf("kubeadm config images list: %w", err)
	}
	refs := map[string]string{}
	for _, line := range strings.Fields(string(out)) {
		repo := line
		if i := strings.LastIndex(repo, ":"); i > 0 {
			repo = repo[:i]
		}
		refs[path.Base(repo)] = line
	}
	for _, want := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "etcd", "pause", "coredns"} {
		if refs[want] == "" {
			return nil, fmt.Errorf("kubeadm %s lists no %s image: %s", release, want, out)
		}
	}
	return refs, nil
}

// kindModuleDir is where the pinned kind module's files are, downloaded
// through the module proxy like any module.
func kindModuleDir(ctx context.Context) (string, error) {
	v, err := KindVersion()
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, "go", "mod", "download", "-json", "sigs.k8s.io/kind@"+v).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download sigs.k8s.io/kind@%s: %w", v, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("go mod download sigs.k8s.io/kind@%s named no directory (%v): %s", v, err, out)
	}
	return mod.Dir, nil
}

// docker runs the docker CLI, kind's own way to reach the engine; its
// error carries what docker said.
func docker(ctx context.Context, stdin io.Reader, args ...string) error {
	cmd := exec.CommandContext(ctx, "docker", args...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("docker %s: %v: %s", args[0], err, lastLines(out.Bytes(), 3))
	}
	return nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// removeRoot removes dir, first unmounting what is mounted under it: a
// debootstrap stopped mid-way leaves the root's /proc mounted (stopped
// make test runs left three), which os.RemoveAll cannot remove.
func removeRoot(dir string) {
	if data, err := os.ReadFile("/proc/self/mounts"); err == nil {
		var mounts []string
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], dir+"/") {
				mounts = append(mounts, f[1])
			}
		}
		// The deepest first.
		slices.SortFunc(mounts, func(a, b string) int { return len(b) - len(a) })
		for _, m := range mounts {
			_ = syscall.Unmount(m, syscall.MNT_DETACH)
		}
	}
	_ = os.RemoveAll(dir)
}
