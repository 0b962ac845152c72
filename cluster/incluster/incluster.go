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

// Package incluster runs a controller manager from its container image on
// this machine as it runs in a cluster: in an OCI runtime
// (internal/container) with the host's network, as the ServiceAccount its
// manifests name, with the projected token, CA and namespace a kubelet
// mounts and KUBERNETES_SERVICE_HOST and _PORT set, so a CCM that builds
// its clients with rest.InClusterConfig works, and one that takes the
// harness's --kubeconfig gets none: every request it makes is the
// ServiceAccount's, under the RBAC its manifests grant.
package incluster

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/ccm-harness/cluster/serviceaccount"
	"sigs.k8s.io/ccm-harness/internal/container"
	"sigs.k8s.io/ccm-harness/internal/oci"
	"sigs.k8s.io/ccm-harness/internal/process"
	"sigs.k8s.io/ccm-harness/manifests"
)

// Spec is one manager to run from its image.
type Spec struct {
	// Name is the component's name; with Cluster, the container's ID.
	Name, Cluster string
	Image         *oci.Image
	// Args are the manager's flags. Files they name, and the files of
	// Folders that exist, are copied world-readable, as a Secret volume's are, and
	// mounted at their own paths read-only: the image's user, often not
	// root, reads them as a pod reads its volumes.
	Args    []string
	Folders []string
	// Writable are folders the manager writes (a --cert-dir), mounted
	// read-write and writable by any user, as an emptyDir.
	Writable []string
	Env      []string
	// APIServer is host:port of the cluster's API as the host reaches it.
	APIServer string
	// CA is the PEM of the CA that signed the API's serving certificate.
	CA     []byte
	Client kubernetes.Interface
	// Workload is the CCM's as its manifests ship it (ApplyManifests):
	// the manager runs as its CCM container, with its volumes and as its
	// ServiceAccount, the image, Args and Env substituted.
	Workload *manifests.Workload
	// Dir holds the container's bundle, its copies of files, its volumes
	// and its projected token; StateRoot is the runtime's state, one per
	// cluster; NodeRoot stands for the node's file system, for hostPath
	// folders this machine lacks.
	Dir, StateRoot, NodeRoot, LogDir string
	Ready                            func(context.Context) error
	Logf                             func(string, ...any)
}

// Manager is a started manager; Stop it after its process stops, to end
// the token refresh.
type Manager struct {
	Process    *process.Process
	projection *serviceaccount.Projection
}

// Stop ends the token's refresh.
func (m *Manager) Stop() {
	if m.projection != nil {
		m.projection.Stop()
	}
}

// ApplyManifests applies a provider's manifests (manifests), or
// upstream's recommended RBAC when it ships none, all but the CCM's
// workload, and returns that workload: the provider's, or the harness's
// default under the one ServiceAccount the manifests define.
func ApplyManifests(ctx context.Context, rc *rest.Config, data []byte) (*manifests.Workload, error) {
	if data == nil {
		data = manifests.Upstream
	}
	objs, err := manifests.Parse(data)
	if err != nil {
		return nil, err
	}
	w, objs, err := manifests.SplitWorkload(objs)
	if err != nil {
		return nil, err
	}
	if w == nil {
		ns, sa, err := manifests.ServiceAccount(objs)
		if err != nil {
			return nil, err
		}
		w = manifests.DefaultWorkload(ns, sa)
	}
	return w, manifests.Apply(ctx, rc, objs)
}

// kubeconfigFlags are the flags a manager reads a kubeconfig from; in a
// cluster it has none and falls back to the in-cluster config.
var kubeconfigFlags = []string{"--kubeconfig", "--authentication-kubeconfig", "--authorization-kubeconfig"}

// Start projects the ServiceAccount and starts the container in g.
func Start(ctx context.Context, g *process.Group, s Spec) (*Manager, error) {
	host, port, err := net.SplitHostPort(s.APIServer)
	if err != nil {
		return nil, fmt.Errorf("manager %s: API server address %q: %w", s.Name, s.APIServer, err)
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		return nil, err
	}
	w := s.Workload
	proj, err := serviceaccount.Project(ctx, s.Client, w.Namespace(), w.ServiceAccount(), s.CA, filepath.Join(s.Dir, "serviceaccount"), s.Logf)
	if err != nil {
		return nil, fmt.Errorf("manager %s: %w", s.Name, err)
	}
	m := &Manager{projection: proj}
	fail := func(err error) (*Manager, error) {
		m.Stop()
		return nil, fmt.Errorf("manager %s: %w", s.Name, err)
	}
	var args []string
	var paths []string
	cloudConfig, err := manifests.CloudConfig(s.Args)
	if err != nil {
		return fail(err)
	}
	for _, a := range s.Args {
		name, value, _ := strings.Cut(a, "=")
		if containsFlag(kubeconfigFlags, name) {
			continue
		}
		if st, err := os.Stat(value); err == nil && st.Mode().IsRegular() {
			paths = append(paths, value)
		}
		args = append(args, a)
	}
	for _, f := range s.Folders {
		// A cloud that runs nothing here has no folder.
		if _, err := os.Stat(f); err == nil {
			paths = append(paths, f)
		}
	}
	tmpl, config, err := w.Substitute(s.Image.Ref, args, s.Env, cloudConfig)
	if err != nil {
		return fail(err)
	}
	if config != nil {
		if err := manifests.WriteConfig(ctx, s.Client, config); err != nil {
			return fail(err)
		}
	}
	pc := &podContainer{client: s.Client, namespace: w.Namespace(), pod: &tmpl.Spec, c: &tmpl.Spec.Containers[w.Container],
		dir: s.Dir, nodeRoot: s.NodeRoot, serviceAccount: proj.Dir}
	env, err := pc.env(ctx)
	if err != nil {
		return fail(err)
	}
	volumes, err := pc.mounts(ctx)
	if err != nil {
		return fail(err)
	}
	mounts := []container.Mount{{Source: proj.Dir, Destination: serviceaccount.MountPath, ReadOnly: true}}
	for _, p := range paths {
		copyPath := filepath.Join(s.Dir, "files", p)
		if err := copyReadable(p, copyPath); err != nil {
			return fail(err)
		}
		mounts = append(mounts, container.Mount{Source: copyPath, Destination: p, ReadOnly: true})
	}
	for _, p := range s.Writable {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return fail(err)
		}
		if err := os.Chmod(p, 0o1777); err != nil {
			return fail(err)
		}
		mounts = append(mounts, container.Mount{Source: p, Destination: p})
	}
	mounts = append(mounts, volumes...)
	destinations := append(paths, s.Writable...)
	for _, v := range volumes {
		destinations = append(destinations, v.Destination)
	}
	mounts = append(shadowTops(s.Image.Root, destinations), mounts...)
	command, cargs := pc.argv(env)
	uid, gid := pc.user()
	cs := container.Spec{
		ID:      s.Cluster + "-" + s.Name,
		Image:   s.Image,
		Command: command,
		Args:    cargs,
		Env: append([]string{
			"KUBERNETES_SERVICE_HOST=" + host,
			"KUBERNETES_SERVICE_PORT=" + port,
		}, env...),
		RunAsUser: uid, RunAsGroup: gid,
		Mounts:    mounts,
		Bundle:    filepath.Join(s.Dir, "bundle"),
		StateRoot: s.StateRoot,
	}
	ps, err := cs.Process(s.Name, s.LogDir, s.Ready)
	if err != nil {
		return fail(err)
	}
	if m.Process, err = g.Start(ctx, ps); err != nil {
		m.Stop()
		return nil, err
	}
	return m, nil
}

func containsFlag(flags []string, name string) bool {
	for _, f := range flags {
		if f == name {
			return true
		}
	}
	return false
}

// shadowTops are tmpfs mounts over the top folders of paths that the
// image lacks, so that the runtime makes the mount points in them rather
// than in the shared unpacked image.
func shadowTops(root string, paths []string) []container.Mount {
	seen := map[string]bool{}
	var out []container.Mount
	for _, p := range paths {
		top := "/" + strings.SplitN(strings.TrimPrefix(filepath.Clean(p), "/"), "/", 2)[0]
		if seen[top] {
			continue
		}
		seen[top] = true
		if _, err := oci.InRoot(root, top); err == nil {
			continue
		}
		out = append(out, container.Mount{Destination: top, Tmpfs: true})
	}
	return out
}

// copyReadable copies a file, or a folder's files, to dst readable by any
// user, as a kubelet writes a Secret volume (mode 0644).
func copyReadable(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if info, err := d.Info(); err == nil && info.Mode()&0o111 != 0 {
			mode = 0o755
		}
		return os.WriteFile(target, data, mode)
	})
}
