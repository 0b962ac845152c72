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
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/cluster/audit"
	"sigs.k8s.io/ccm-harness/cluster/incluster"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/oci"
	"sigs.k8s.io/ccm-harness/internal/process"
	"sigs.k8s.io/ccm-harness/manifests"
	"sigs.k8s.io/ccm-harness/providers"
)

// defaultManagers are a cluster's when its spec names none: one of each,
// without leader election.
func defaultManagers() []cluster.ManagerSpec {
	return []cluster.ManagerSpec{
		{Name: cluster.KubeControllerManager, Kind: cluster.KubeControllerManager},
		{Name: cluster.CloudControllerManager, Kind: cluster.CloudControllerManager},
	}
}

// complete fills a manager spec's defaults.
func (in *instance) complete(spec cluster.ManagerSpec) (cluster.ManagerSpec, error) {
	return complete(in.spec, spec)
}

// complete fills a manager spec's defaults: kube-controller-manager of the
// control plane's release (the cluster's --kubernetes-version, not go.mod's)
// with an external cloud provider, or the profile's CCM.
func complete(c cluster.Spec, spec cluster.ManagerSpec) (cluster.ManagerSpec, error) {
	switch spec.Kind {
	case cluster.KubeControllerManager:
		if spec.Binary.Name == "" {
			spec.Binary = c.AtRelease(binaries.KubeControllerManager)
		}
		if spec.CloudProvider == "" {
			spec.CloudProvider = "external"
		}
	case cluster.CloudControllerManager:
		if spec.Binary.Name == "" {
			spec.Binary = c.Profile.CCM
		}
		spec.CloudProvider = c.Profile.CloudProvider
	default:
		return spec, fmt.Errorf("manager %s: kind %q is neither %s nor %s", spec.Name, spec.Kind, cluster.KubeControllerManager, cluster.CloudControllerManager)
	}
	return spec, nil
}

// startManager runs a controller manager as a control-plane member would:
// its own port and serving certificate, the identity of its kind, and
// leader election when the control plane is HA.
func (in *instance) startManager(ctx context.Context, spec cluster.ManagerSpec) (*cluster.ProcessManager, error) {
	spec, err := in.complete(spec)
	if err != nil {
		return nil, err
	}
	bins, err := in.spec.Binaries.Paths(ctx, spec.Binary)
	if err != nil {
		return nil, fmt.Errorf("manager %s: %w", spec.Name, err)
	}
	port, err := process.FreePort()
	if err != nil {
		return nil, err
	}
	p := in.pki
	identity, serving := p.kcm, p.kcmServing
	if spec.Kind == cluster.CloudControllerManager {
		identity, serving = p.ccm, p.ccmServing
	}
	kubeconfig, err := in.writeKubeconfig(spec.Kind, identity)
	if err != nil {
		return nil, err
	}
	args := managerArgs(kubeconfig, port, serving, p.caFile)
	if in.ha || in.spec.Leased {
		le := cluster.LeaderElection{Lease: in.timing.LeaderLease, Renew: in.timing.LeaderRenew, Retry: in.timing.LeaderRetry}
		if !in.ha {
			// One manager of each, leading only to show it runs (up's
			// clusters, judged as existing ones): the upstream defaults.
			// The HA timing's renew deadline of 4 s is missed on two
			// busy cores, and a manager that misses it exits, with
			// nothing to start it again.
			le = upstreamLeaderElection
		}
		args = append(args,
			"--leader-elect=true",
			"--leader-elect-lease-duration="+le.Lease.String(),
			"--leader-elect-renew-deadline="+le.Renew.String(),
			"--leader-elect-retry-period="+le.Retry.String(),
		)
	} else {
		args = append(args, "--leader-elect=false")
	}
	var env []string
	// A manager of an HA control plane is a static pod: when it loses its
	// lease it exits, and its kubelet starts it again. On two busy cores
	// an API server may take longer than the renew deadline's half (a
	// lease request's timeout) to answer: a release N
	// kube-controller-manager that exited so and stayed down left its
	// controllers to nobody. The specs judge what the managers run,
	// whoever restarts: two at once is still a conflict.
	var restartWhen func(string) bool
	if in.ha {
		restartWhen = lostLease
	}
	// Under coordinated leader election a kube-controller-manager is a
	// candidate, and exits whenever it yields its lease to one the API
	// server prefers; its kubelet would start it again. One with a cloud
	// provider in-tree is v1.30 or older, before the election.
	if in.spec.CoordinatedLeaderElection && spec.Kind == cluster.KubeControllerManager && !spec.InTree() {
		args = append(args, "--feature-gates=CoordinatedLeaderElection=true")
		restartWhen = lostLease
	}
	if spec.Kind == cluster.KubeControllerManager {
		args = append(args,
			"--allocate-node-cidrs=true",
			"--cluster-cidr="+clusterCIDR,
			"--node-cidr-mask-size=24",
			"--service-cluster-ip-range="+serviceCIDR,
			"--cluster-signing-cert-file="+p.caFile,
			"--cluster-signing-key-file="+p.caKey,
			"--root-ca-file="+p.caFile,
			"--service-account-private-key-file="+p.saKey,
			"--use-service-account-credentials=true",
			"--node-monitor-period="+in.timing.Monitor.String(),
			"--node-monitor-grace-period="+in.timing.NodeGrace.String(),
			"--cloud-provider="+spec.CloudProvider,
		)
	}
	if spec.Kind == cluster.CloudControllerManager || spec.InTree() {
		cloudArgs, cloudEnv, err := in.cloudArgs(spec)
		if err != nil {
			return nil, err
		}
		args, env = append(args, cloudArgs...), cloudEnv
	}
	switch {
	case spec.LeaderMigration != nil:
		path := filepath.Join(in.dir, spec.Name+"-leader-migration.yaml")
		if err := os.WriteFile(path, spec.LeaderMigration, 0o600); err != nil {
			return nil, err
		}
		args = append(args, "--enable-leader-migration", "--leader-migration-config="+path)
	case spec.LeaderMigrationDefault:
		args = append(args, "--enable-leader-migration")
	}
	if spec.Kind == cluster.CloudControllerManager {
		args = append(args, in.spec.Profile.CCMArgs...)
	}
	url := "https://127.0.0.1:" + strconv.Itoa(port)
	args = append(args, spec.Args...)
	ready := in.probe(url+"/healthz", p.admin)
	var proc *process.Process
	if img := in.spec.Binaries.Image(spec.Binary); img != nil {
		proc, err = in.startInCluster(ctx, spec.Name, img, args, env, ready)
	} else {
		proc, err = in.procs.Start(ctx, process.Spec{
			Name:   spec.Name,
			Path:   bins[spec.Binary.Name],
			Args:   args,
			Env:    env,
			LogDir: in.logDir(),
			Ready:  ready,
			// The CCM under test, out of reach of the cloud's admin
			// credentials; kube-controller-manager runs the harness's own
			// in-tree provider.
			Unprivileged: spec.Kind == cluster.CloudControllerManager,
			RestartWhen:  restartWhen,
		})
	}
	if err != nil {
		return nil, err
	}
	return &cluster.ProcessManager{ManagerSpec: spec, Group: &in.procs, Proc: proc, Endpoint: cluster.Endpoint{URL: url, Client: in.httpClient(p.admin)}}, nil
}

// startInCluster runs a manager from its image as its pod would run
// (cluster/incluster): under the ServiceAccount of the provider's
// manifests, applied before the first such manager starts.
func (in *instance) startInCluster(ctx context.Context, name string, img *oci.Image, args, env []string, ready func(context.Context) error) (*process.Process, error) {
	w, err := in.applyManifests(ctx)
	if err != nil {
		return nil, err
	}
	m, err := incluster.Start(ctx, &in.procs, incluster.Spec{
		Name: name, Cluster: in.spec.Name, Image: img,
		Args: args, Env: env,
		// The cloud's files (its token, its CA), which its config names.
		Folders:   []string{filepath.Join(in.dir, "cloud")},
		APIServer: strings.TrimPrefix(in.apiserverURL, "https://"),
		CA:        in.pki.ca.CertPEM, Client: in.client,
		Workload: w,
		Dir:      filepath.Join(in.dir, "containers", name), StateRoot: filepath.Join(in.dir, "runc"),
		NodeRoot: filepath.Join(in.dir, "node"), LogDir: in.logDir(),
		Ready: ready, Logf: in.logf,
	})
	if err != nil {
		return nil, err
	}
	in.stateMu.Lock()
	in.inCluster = append(in.inCluster, m)
	in.stateMu.Unlock()
	return m.Process, nil
}

// applyManifests applies the provider's manifests, or upstream's
// recommended RBAC, once, and returns the CCM's workload.
func (in *instance) applyManifests(ctx context.Context) (*manifests.Workload, error) {
	in.manifestsOnce.Do(func() {
		rc, err := clientcmd.BuildConfigFromFlags("", in.kubeconfig)
		var w *manifests.Workload
		if err == nil {
			w, err = incluster.ApplyManifests(ctx, rc, in.spec.Profile.Manifests)
		}
		in.stateMu.Lock()
		in.workload, in.manifestsErr = w, err
		in.stateMu.Unlock()
		if err == nil {
			in.audit.Set(filepath.Join(in.logDir(), audit.LogName), w.Namespace(), w.ServiceAccount())
		}
	})
	in.stateMu.Lock()
	defer in.stateMu.Unlock()
	return in.workload, in.manifestsErr
}

// cloudArgs are the flags and environment of a manager that runs cloud
// controllers: a CCM, or kube-controller-manager with an in-tree provider.
func (in *instance) cloudArgs(spec cluster.ManagerSpec) ([]string, []string, error) {
	cfgPath := in.spec.Profile.CCMConfigFile
	if cfgPath == "" {
		cfgPath = filepath.Join(in.dir, "cloud-config")
		if _, err := os.Stat(cfgPath); err != nil {
			cfg, err := in.cloud.CCMConfig()
			if err != nil {
				return nil, nil, err
			}
			if err := writeWhole(cfgPath, cfg); err != nil {
				return nil, nil, err
			}
		}
	}
	var args []string
	if spec.Kind == cluster.CloudControllerManager {
		args = append(cluster.CCMFlags(in.spec.Profile, cfgPath, in.spec.Name, clusterCIDR),
			"--node-monitor-period="+in.timing.Monitor.String())
	} else {
		args = []string{
			"--cloud-config=" + cfgPath,
			"--cluster-name=" + in.spec.Name,
			// Releases that still have cloud providers in-tree keep them
			// behind this gate.
			"--feature-gates=DisableCloudProviders=false",
			"--configure-cloud-routes=" + strconv.FormatBool(in.spec.Profile.Has(providers.Routes)),
		}
	}
	var env []string
	if e, ok := in.cloud.(providers.CCMEnvironment); ok {
		env = e.CCMEnv()
	}
	return args, env, nil
}

// managerArgs are the flags kube-controller-manager and every CCM share.
func managerArgs(kubeconfig string, port int, serving keyPair, caFile string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + serving.cert,
		"--tls-private-key-file=" + serving.key,
		"--client-ca-file=" + caFile,
		"--v=2",
	}
}

// controlPlane starts managers beside a running cluster's.
type controlPlane struct{ in *instance }

func (c controlPlane) Start(ctx context.Context, spec cluster.ManagerSpec) (cluster.Manager, error) {
	for _, r := range c.in.procs.Records() {
		if r.Name == spec.Name {
			return nil, fmt.Errorf("manager %s: a process of that name runs already", spec.Name)
		}
	}
	m, err := c.in.startManager(ctx, spec)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// lostLease reports whether a manager's last run, in its log, lost a
// lease: its main one ("leaderelection lost", kube-controller-manager
// v1.37's "leaderelection lost/stopped"), as one does that yields to a
// candidate the API server's coordinated leader election prefers or
// misses its renew deadline, or the migration lease ("migration
// leaderelection lost"). Not its last lines: v1.37 says which of its
// controllers it stops after.
func lostLease(log string) bool {
	data, err := os.ReadFile(log)
	if err != nil {
		return false
	}
	run := data[bytes.LastIndex(data, []byte("\n=== "))+1:]
	return bytes.Contains(run, []byte(`leaderelection lost`))
}
