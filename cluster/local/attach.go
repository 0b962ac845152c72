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

package local

import (
	"context"
	"fmt"
	"path/filepath"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/cluster/audit"
	"sigs.k8s.io/ccm-harness/providers"
)

var _ cluster.Attacher = (*Runtime)(nil)

// Attach joins the running cluster spec names, which another process
// brought up: its kubeconfig and audit log from the state it keeps, its
// cloud through the provider's Attach, a node pool of its own (the pool
// keeps nothing but the client and the cloud), and its Health from the
// recorded processes.
func (r *Runtime) Attach(ctx context.Context, spec cluster.Spec) (*cluster.Cluster, error) {
	if err := cluster.CheckName(spec.Name); err != nil {
		return nil, err
	}
	dir, err := cluster.FindStateDir(r.stateRoot, spec.Name)
	if err != nil {
		return nil, err
	}
	st, err := cluster.ReadState(dir)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", spec.Name, err)
	}
	if err := cluster.Dead(dir); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", spec.Name, err)
	}
	cloud, err := spec.Profile.NewCloud(spec.ProviderConfig)
	if err != nil {
		return nil, err
	}
	a, ok := cloud.(providers.Attacher)
	if !ok {
		return nil, fmt.Errorf("cluster %s: provider %s's cloud cannot be joined by another process: run the suite in one process (PROCS=1)", spec.Name, spec.Profile.Name)
	}
	if err := a.Attach(ctx, providers.CloudEnv{
		Dir: filepath.Join(dir, "cloud"), AdminDir: filepath.Join(dir, cluster.AdminDirName), LogDir: st.LogDir,
		Binaries: spec.Binaries, Kubeconfig: st.Kubeconfig,
	}); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", spec.Name, err)
	}
	client, err := adminClient(st.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", spec.Name, err)
	}
	log := audit.LogOf(st.Audit)
	c := &cluster.Cluster{
		Name:              spec.Name,
		Kubeconfig:        st.Kubeconfig,
		KubernetesVersion: st.KubernetesVersion,
		Profile:           spec.Profile,
		Cloud:             cloud,
		DualStackServices: true,
		Health:            func() error { return cluster.Dead(dir) },
		Refusals:          log.Refusals,
		APIUses:           log.APIUses,
	}
	if inst := cloud.Instances(); inst != nil {
		c.Nodes = &nodePool{client: client, cloud: inst}
	}
	return c, nil
}
