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

package nodeimage

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"sigs.k8s.io/ccm-harness/internal/oci"

	imageutils "k8s.io/kubernetes/test/utils/image"
)

// kindFiles are the files of kind's base image (images/base/files in the
// kind module) the node image carries, with their modes. Left out: the
// fuse-overlayfs unit (rootless only) and containerd's config, which is
// ours (containerdConfig).
var kindFiles = map[string]os.FileMode{
	"usr/local/bin/entrypoint":                             0o755,
	"usr/local/bin/clean-install":                          0o755,
	"kind/bin/create-kubelet-cgroup-v2.sh":                 0o755,
	"kind/bin/mount-product-files.sh":                      0o755,
	"kind/bin/undo-mount-hacks.sh":                         0o755,
	"etc/crictl.yaml":                                      0o644,
	"etc/default/kubelet":                                  0o644,
	"etc/sysctl.d/10-network-magic.conf":                   0o644,
	"etc/sysctl.d/10-network-security.conf":                0o644,
	"etc/systemd/system/containerd.service":                0o644,
	"etc/systemd/system/kubelet.service":                   0o644,
	"etc/systemd/system/kubelet.slice":                     0o644,
	"etc/systemd/system/undo-mount-hacks.service":          0o644,
	"etc/systemd/system/kubelet.service.d/10-kubeadm.conf": 0o644,
	"etc/systemd/system/kubelet.service.d/11-kind.conf":    0o644,
}

// containerdConfig is kind's, for Debian's containerd 1.6: the same CRI
// settings, with no fuse-overlayfs proxy and no product_uuid hook, and
// Debian's CNI plugin directory. restrict_oom_score_adj is on, as kind
// has it for rootless nodes: a node whose sandbox lacks CAP_SYS_RESOURCE
// (this project's CI machines) cannot give a container an OOM score below
// its own, and without it no pod sandbox starts.
const containerdConfig = `version = 2

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "%s"
  tolerate_missing_hugepages_controller = true
  restrict_oom_score_adj = true
[plugins."io.containerd.grpc.v1.cri".containerd]
  discard_unpacked_layers = true
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    SystemdCgroup = true
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "/usr/lib/cni"
  conf_dir = "/etc/cni/net.d"
`

// configure turns the debootstrap root file system into a kind node, as
// kind's base and node image Dockerfiles do.
func configure(root, kindDir, release string, bins, required map[string]string) error {
	for rel, mode := range kindFiles {
		if err := copyFile(filepath.Join(kindDir, "images", "base", "files", rel), filepath.Join(root, rel), mode); err != nil {
			return fmt.Errorf("kind base-image file: %w", err)
		}
	}
	// Only what kind's units ask for starts at boot.
	for _, pattern := range []string{
		"lib/systemd/system/multi-user.target.wants/*", "etc/systemd/system/*.wants/*",
		"lib/systemd/system/local-fs.target.wants/*", "lib/systemd/system/sockets.target.wants/*udev*",
		"lib/systemd/system/sockets.target.wants/*initctl*", "lib/systemd/system/basic.target.wants/*",
		"lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service",
	} {
		matches, _ := filepath.Glob(filepath.Join(root, pattern))
		for _, m := range matches {
			if err := os.Remove(m); err != nil {
				return err
			}
		}
	}
	wants := filepath.Join(root, "etc/systemd/system/multi-user.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		return err
	}
	for _, unit := range []string{"kubelet.service", "containerd.service", "undo-mount-hacks.service"} {
		if err := os.Symlink("/etc/systemd/system/"+unit, filepath.Join(wants, unit)); err != nil {
			return err
		}
	}
	links := map[string]string{
		"etc/systemd/system/systemd-binfmt.service": "/dev/null",
		// kind's unit starts /usr/local/bin/containerd.
		"usr/local/bin/containerd": "/usr/bin/containerd",
	}
	for at, target := range links {
		if err := os.Symlink(target, filepath.Join(root, at)); err != nil {
			return err
		}
	}
	journald, err := os.OpenFile(filepath.Join(root, "etc/systemd/journald.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = journald.WriteString("ReadKMsg=no\n")
	if cerr := journald.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	for _, dir := range []string{"etc/kubernetes/manifests", "etc/cni/net.d"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			return err
		}
	}
	for _, b := range []string{"kubelet", "kubeadm", "kubectl", "crictl"} {
		if err := copyFile(bins[b], filepath.Join(root, "usr/bin", b), 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{
		"kind/version":               release,
		"etc/containerd/config.toml": fmt.Sprintf(containerdConfig, required["pause"]),
	}
	for rel, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(root, rel), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// nodeImages are the images the nodes run, under the names they are asked
// for by: kubeadm's static pods and its kube-proxy and CoreDNS addons,
// containerd's sandbox, and the e2e framework's backend pods.
func nodeImages(root string, bins, required map[string]string) ([]image, error) {
	imgs := []image{}
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"} {
		bin := "/usr/local/bin/" + c
		imgs = append(imgs, image{Ref: required[c], Files: map[string]string{bin: bins[c]}, Entrypoint: []string{bin}})
	}
	proxy := image{
		Ref:        required["kube-proxy"],
		Files:      map[string]string{"/usr/local/bin/kube-proxy": bins["kube-proxy"]},
		Links:      map[string]string{},
		Entrypoint: []string{"/usr/local/bin/kube-proxy"},
	}
	// kube-proxy programs iptables through the iptables commands: the
	// nftables flavour, as on the node, with its extension modules.
	for _, f := range []string{"/usr/sbin/xtables-nft-multi", "/etc/protocols", "/etc/services", "/etc/ethertypes"} {
		src, err := oci.InRoot(root, f)
		if err != nil {
			return nil, fmt.Errorf("kube-proxy image: %w", err)
		}
		proxy.Files[f] = src
	}
	ext := oci.LibDirs()[1] + "/xtables"
	mods, err := filepath.Glob(filepath.Join(root, ext, "*.so"))
	if err != nil || len(mods) == 0 {
		return nil, fmt.Errorf("kube-proxy image: no iptables extensions in %s", filepath.Join(root, ext))
	}
	for _, m := range mods {
		proxy.Files[ext+"/"+filepath.Base(m)] = m
	}
	for _, cmd := range []string{"iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore"} {
		proxy.Links["/usr/sbin/"+cmd] = "xtables-nft-multi"
	}
	imgs = append(imgs, proxy,
		image{Ref: required["pause"], Files: map[string]string{"/pause": bins["pause"]}, Entrypoint: []string{"/pause"}},
		// kubeadm's Deployment runs it with -conf and its Corefile.
		image{Ref: required["coredns"], Files: map[string]string{"/coredns": bins["coredns"]}, Entrypoint: []string{"/coredns"}},
	)
	agnhost, err := agnhostImage(root, bins["agnhost"])
	if err != nil {
		return nil, err
	}
	return append(imgs, agnhost), nil
}

// agnhostTools are the tools of upstream's agnhost image (Alpine's, with
// curl, netcat-openbsd, socat and bash added) that Kubernetes' own e2e
// runs in its exec pods (`echo hostName | nc -v -t -w 2 …`, `curl …`,
// `wget -T 5 …`, `nslookup …`), each taken from the node's Debian root with
// the libraries it needs; busybox gives the shell and Alpine's small
// commands, as Alpine's does, but not the shell, which is bash: busybox's
// may run its own applets before what PATH finds (its nc, without -v,
// before netcat-openbsd's). Debian's dynamic busybox, not busybox-static,
// whose glibc cannot load the resolver it needs in a container. GNU wget,
// not busybox's: bookworm's busybox 1.35.0 dies of SIGSEGV on wget's -T,
// before any I/O (`busybox wget -T 5 -qO- …`, exit code 139), which
// upstream's source-ranges spec runs from its pods.
var agnhostTools = map[string]string{
	"/bin/busybox":                       "/bin/busybox",
	"/usr/bin/wget":                      "/usr/bin/wget",
	"/bin/bash":                          "/bin/bash",
	"/usr/bin/curl":                      "/usr/bin/curl",
	"/usr/bin/nc":                        "/bin/nc.openbsd",
	"/usr/bin/socat":                     "/usr/bin/socat",
	"/etc/ssl/certs/ca-certificates.crt": "/etc/ssl/certs/ca-certificates.crt",
	"/etc/protocols":                     "/etc/protocols",
	"/etc/services":                      "/etc/services",
}

// busyboxApplets are the commands busybox answers for in the agnhost
// image: what scripts of the e2e framework call.
var busyboxApplets = []string{"cat", "cp", "date", "dd", "echo", "env", "grep", "head", "hostname", "id",
	"ip", "kill", "ln", "ls", "mkdir", "mv", "nslookup", "ping", "ps", "rm", "sed", "seq", "sleep", "sort", "stat",
	"tail", "tee", "test", "timeout", "touch", "tr", "true", "false", "uname", "wc", "which", "xargs"}

// agnhostImage is the e2e framework's test server, built from source, as
// an image with upstream's tools beside it.
func agnhostImage(root, agnhost string) (image, error) {
	img := image{Ref: AgnhostImage(), Files: map[string]string{"/agnhost": agnhost}, Links: map[string]string{"/agnhost-2": "agnhost"},
		Entrypoint: []string{"/agnhost"}, Cmd: []string{"pause"}}
	for dst, src := range agnhostTools {
		f, err := oci.InRoot(root, src)
		if err != nil {
			return image{}, fmt.Errorf("agnhost image: %w", err)
		}
		img.Files[dst] = f
	}
	for _, a := range busyboxApplets {
		img.Links["/bin/"+a] = "busybox"
	}
	img.Links["/bin/sh"] = "bash"
	// GNU wget tries 20 times where busybox's tries once: a spec that
	// checks a pod is refused (the source-ranges spec's `wget -T 5` from
	// its drop pod) would wait minutes for each try of its poll.
	rc := filepath.Join(root, "etc", "ccm-harness", "agnhost-wgetrc")
	if err := os.MkdirAll(filepath.Dir(rc), 0o755); err != nil {
		return image{}, err
	}
	if err := os.WriteFile(rc, []byte("# ccm-harness: tries as busybox's wget does, once\ntries = 1\n"), 0o644); err != nil {
		return image{}, err
	}
	img.Files["/etc/wgetrc"] = rc
	return img, nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, mode)
}

// AgnhostImage is the agnhost image the e2e framework's jigs run.
func AgnhostImage() string { return imageutils.GetE2EImage(imageutils.Agnhost) }
