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

// Package kind is the runtime whose nodes are real: a kind cluster (through
// sigs.k8s.io/kind's library) whose kubelets run pods and whose kube-proxy
// carries Service traffic, so the [datapath] specs can send packets through
// the cloud's load balancers. The cluster is made for the CCM under test:
// kubelets and kube-controller-manager run with --cloud-provider=external,
// so nodes register tainted uninitialized; there is no default CNI (a
// bridge on each node instead, so pods on different nodes reach each other
// only over the cloud's routes, which the runtime copies from the cloud
// into the nodes as a cloud's network fabric would); kubeadm's CoreDNS
// serves cluster DNS once the nodes are initialized. The CCM and the cloud
// run on the host, as with the local runtime, and the cloud's instances
// mirror the node containers.
//
// The node image is built on the machine, with no registry (package
// nodeimage). kind needs a Docker engine that can run privileged
// containers.
package kind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/nodecontainer"
)

// Runtime makes kind clusters.
type Runtime struct {
	stateRoot string
	nodeImage string

	running cluster.Running[*instance]
}

var (
	_ cluster.Runtime         = (*Runtime)(nil)
	_ cluster.ComponentLister = (*Runtime)(nil)
)

// Components are what a kind cluster of spec runs on the host: the CCM
// and what the cloud runs. The nodes' binaries are in the node image,
// which nodeimage builds.
func (r *Runtime) Components(spec cluster.Spec) []binaries.Component { return components(spec) }

func components(spec cluster.Spec) []binaries.Component {
	return append([]binaries.Component{spec.Profile.CCM}, spec.Profile.CloudBinaries...)
}

// Option configures a Runtime.
type Option func(*Runtime)

// WithStateDir keeps the host side of each cluster (kubeconfig, the
// cloud's state, the CCM's certificates) under dir/<name>.
func WithStateDir(dir string) Option { return func(r *Runtime) { r.stateRoot = dir } }

// WithNodeImage runs the nodes from ref instead of the image built by
// package nodeimage.
func WithNodeImage(ref string) Option { return func(r *Runtime) { r.nodeImage = ref } }

// New returns a kind runtime.
func New(opts ...Option) *Runtime {
	r := &Runtime{stateRoot: filepath.Join(cluster.StateDir(), "kind")}
	for _, o := range opts {
		o(r)
	}
	return r
}

// kubeconfigFile is where kind writes the cluster's admin kubeconfig,
// leaving the user's ~/.kube/config alone.
const kubeconfigFile = "admin.kubeconfig"

// Up makes the kind cluster; see cluster.Runtime.
func (r *Runtime) Up(ctx context.Context, spec cluster.Spec) (*cluster.Cluster, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if spec.Managers != nil {
		return nil, fmt.Errorf("cluster %s: the kind runtime runs one CCM beside kubeadm's kube-controller-manager; HA control planes (the [leader-migration] specs) run with --cluster=local", spec.Name)
	}
	if spec.Nodes < 1 {
		return nil, fmt.Errorf("cluster %s: a kind cluster needs at least its control-plane node (--nodes=1 or more)", spec.Name)
	}
	dir := filepath.Join(r.stateRoot, spec.Name)
	if err := r.claim(spec.Name, dir); err != nil {
		return nil, err
	}
	in := &instance{spec: spec, dir: dir, nodeImage: r.nodeImage, logf: spec.Logfn(), steps: cluster.Steps{Logf: spec.Logfn()}}
	in.procs.Detached = spec.Detached
	in.procs.OnChange = in.saveState
	c, err := in.up(ctx)
	if err != nil {
		in.teardown()
		return nil, fmt.Errorf("cluster %s: %w", spec.Name, err)
	}
	r.running.Add(spec.Name, in)
	return c, nil
}

// claim refuses a name whose kind cluster exists and clears what a harness
// that died without `down` left on the host.
func (r *Runtime) claim(name, dir string) error {
	names, err := provider().List()
	if err != nil {
		return fmt.Errorf("cannot list kind clusters: %w (is Docker running?)", err)
	}
	for _, n := range names {
		if n == name {
			return fmt.Errorf("kind cluster %s exists already; delete it first with `kind delete cluster --name %s`, or pick another name", name, name)
		}
	}
	if st, err := cluster.ReadState(dir); err == nil {
		st.StopRecorded()
	}
	if err := cluster.ResetStateDir(dir); err != nil {
		return fmt.Errorf("cluster %s: %w", name, err)
	}
	return nil
}

// Down deletes the kind cluster and stops the host's processes (the CCM
// and the cloud).
func (r *Runtime) Down(ctx context.Context, name string) error {
	if in, ok := r.running.Take(name); ok {
		in.teardown()
		return nil
	}
	// Without the harness's state, the kind cluster of that name is
	// someone else's: it is left alone.
	dir, err := cluster.FindStateDir(r.stateRoot, name)
	if err != nil {
		return err
	}
	st, err := cluster.ReadState(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cluster %s: %w (remove %s by hand once its processes are gone)", name, err, dir)
	}
	if st != nil {
		st.StopRecorded()
	}
	if err := provider().Delete(name, filepath.Join(dir, kubeconfigFile)); err != nil {
		// A node killed while its runc froze a pod's cgroup cannot be
		// killed until it is thawed (nodecontainer.Stop): remove what
		// is left, thawing it, and delete again.
		left, _ := provider().ListNodes(name)
		for _, n := range left {
			_ = nodecontainer.Remove(ctx, n.String())
		}
		if err := provider().Delete(name, filepath.Join(dir, kubeconfigFile)); err != nil {
			return fmt.Errorf("kind delete cluster %s: %w", name, err)
		}
	}
	if st != nil {
		if err := st.RedactLogs(); err != nil {
			return err
		}
	}
	if err := cluster.RemoveStateDir(dir); err != nil {
		return err
	}
	// The runtime's folder goes with its last cluster.
	_ = os.Remove(r.stateRoot)
	return nil
}

// provider is kind's Docker provider; kind reaches Docker through its CLI.
func provider(opts ...kindcluster.ProviderOption) *kindcluster.Provider {
	return kindcluster.NewProvider(append([]kindcluster.ProviderOption{kindcluster.ProviderWithDocker()}, opts...)...)
}
