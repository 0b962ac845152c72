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

// Package local is the default runtime: etcd, kube-apiserver,
// kube-controller-manager and the CCM run as processes on loopback, and
// nodes are simulated: each is a Node object registered the way a kubelet
// started with --cloud-provider=external registers itself, kept alive
// (status, lease heartbeats) by kwok. Nothing needs Docker.
package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/internal/binaries"
)

// Runtime starts local clusters.
type Runtime struct {
	stateRoot     string
	apiserverPort int
	timing        Timing

	running cluster.Running[*instance]
}

var (
	_ cluster.Runtime         = (*Runtime)(nil)
	_ cluster.ComponentLister = (*Runtime)(nil)
)

// Components are what a local cluster of spec runs: the control plane,
// kwok, the CCM, what the cloud runs, and the managers spec names.
func (r *Runtime) Components(spec cluster.Spec) []binaries.Component { return components(spec) }

func components(spec cluster.Spec) []binaries.Component {
	comps := append([]binaries.Component{binaries.Etcd, spec.AtRelease(binaries.KubeAPIServer), spec.AtRelease(binaries.KubeControllerManager), binaries.Kwok, spec.Profile.CCM},
		spec.Profile.CloudBinaries...)
	for _, m := range spec.Managers {
		if m.Binary.Name != "" {
			comps = append(comps, m.Binary)
		}
	}
	return comps
}

// Option configures a Runtime.
type Option func(*Runtime)

// WithStateDir keeps cluster state (certificates, kubeconfigs, etcd data)
// under dir/<name> instead of cluster.StateDir().
func WithStateDir(dir string) Option { return func(r *Runtime) { r.stateRoot = dir } }

// WithAPIServerPort serves the API on a fixed port instead of a free one.
func WithAPIServerPort(port int) Option { return func(r *Runtime) { r.apiserverPort = port } }

// WithTiming overrides how fast node failures are noticed.
func WithTiming(t Timing) Option { return func(r *Runtime) { r.timing = t } }

// Timing sets how quickly a silent node is noticed. Real clusters wait
// about a minute; a test cluster cannot afford to, and the scenarios do not
// depend on the exact figures, only on the sequence they drive.
type Timing struct {
	// NodeLease is the node lease duration kwok keeps (it renews at a
	// quarter of it).
	NodeLease time.Duration
	// NodeGrace is kube-controller-manager's --node-monitor-grace-period.
	NodeGrace time.Duration
	// Monitor is the managers' --node-monitor-period.
	Monitor time.Duration
	// LeaderLease, LeaderRenew and LeaderRetry are the leader-election
	// lease duration, renew deadline and retry period of the managers of
	// an HA control plane: how soon a standby takes over a dead leader's
	// controllers.
	LeaderLease, LeaderRenew, LeaderRetry time.Duration
}

// DefaultTiming notices a silent node in about 16 s, and a dead leader in
// about 6.
var DefaultTiming = Timing{
	NodeLease: 8 * time.Second, NodeGrace: 16 * time.Second, Monitor: time.Second,
	LeaderLease: 6 * time.Second, LeaderRenew: 4 * time.Second, LeaderRetry: time.Second,
}

// upstreamLeaderElection is the managers' own default leader election
// (k8s.io/component-base's), for managers that lead alone.
var upstreamLeaderElection = cluster.LeaderElection{Lease: 15 * time.Second, Renew: 10 * time.Second, Retry: 2 * time.Second}

// New returns a local runtime.
func New(opts ...Option) *Runtime {
	r := &Runtime{stateRoot: cluster.StateDir(), timing: DefaultTiming}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Up starts a cluster; see cluster.Runtime.
func (r *Runtime) Up(ctx context.Context, spec cluster.Spec) (*cluster.Cluster, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	dir := filepath.Join(r.stateRoot, spec.Name)
	if err := r.claim(spec.Name, dir); err != nil {
		return nil, err
	}
	in := &instance{spec: spec, dir: dir, timing: r.timing, apiserverPort: r.apiserverPort, logf: spec.Logfn(), steps: cluster.Steps{Logf: spec.Logfn()}, ha: spec.Managers != nil}
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

// claim refuses a name whose cluster is still running and clears the
// remains of one that died without `down`.
func (r *Runtime) claim(name, dir string) error {
	if st, err := cluster.ReadState(dir); err == nil {
		for _, p := range st.Processes {
			if p.Alive() {
				return fmt.Errorf("cluster %s is already up (kubeconfig %s); take it down first with `ccm-harness down --name %s`", name, st.Kubeconfig, name)
			}
		}
	}
	if err := cluster.ResetStateDir(dir); err != nil {
		return fmt.Errorf("cluster %s: %w", name, err)
	}
	return nil
}

// Down stops the cluster's processes and removes its state. A name with no
// state folder is ErrNoCluster, and nothing is removed.
func (r *Runtime) Down(ctx context.Context, name string) error {
	if err := cluster.CheckName(name); err != nil {
		return err
	}
	if in, ok := r.running.Take(name); ok {
		in.teardown()
		return nil
	}
	dir, err := cluster.FindStateDir(r.stateRoot, name)
	if err != nil {
		return err
	}
	st, err := cluster.ReadState(dir)
	if errors.Is(err, os.ErrNotExist) {
		return cluster.RemoveStateDir(dir) // nothing ran
	}
	if err != nil {
		return fmt.Errorf("cluster %s: %w (remove %s by hand once its processes are gone)", name, err, dir)
	}
	st.StopRecorded()
	if err := st.RedactLogs(); err != nil {
		return err
	}
	return cluster.RemoveStateDir(dir)
}
