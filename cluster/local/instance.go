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
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/kubernetes"
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

// Network ranges of the simulated cluster. They are only ever data in API
// objects: no packet is sent to them.
const (
	serviceCIDR = "10.96.0.0/16"
	clusterCIDR = "10.244.0.0/16"
)

// instance is one local cluster being brought up or running.
type instance struct {
	spec          cluster.Spec
	dir           string
	timing        Timing
	apiserverPort int
	logf          func(string, ...any)
	// ha runs the managers with leader election.
	ha bool

	procs process.Group
	pki   *certs
	bins  map[string]string
	cloud providers.Cloud

	etcdURL      string
	apiserverURL string
	kubeconfig   string
	client       kubernetes.Interface
	version      string

	stateMu sync.Mutex
	steps   cluster.Steps

	// The managers run from images, and the manifests applied for them.
	inCluster     []*incluster.Manager
	manifestsOnce sync.Once
	manifestsErr  error
	workload      *manifests.Workload
	// audit is the API server's audit log, read for the CCM's refusals.
	audit audit.Log
}

func (in *instance) logDir() string { return in.spec.LogDir() }

func (in *instance) up(ctx context.Context) (*cluster.Cluster, error) {
	spec := in.spec
	// A bad provider config is said before anything starts.
	var err error
	if in.cloud, err = spec.Profile.NewCloud(spec.ProviderConfig); err != nil {
		return nil, err
	}
	comps := components(spec)
	if err := in.steps.Do("binaries ready", func() (err error) {
		in.bins, err = spec.Binaries.Paths(ctx, comps...)
		return err
	}); err != nil {
		return nil, err
	}
	start := time.Now()
	if err := in.steps.Do("certificates", func() (err error) {
		in.pki, err = newCerts(filepath.Join(in.dir, "pki"))
		return err
	}); err != nil {
		return nil, err
	}
	// kube-apiserver starts once etcd serves: its etcd clients that find
	// no listener back off for a second, which costs more than the 0.2 s
	// a fast-electing etcd takes to start.
	if err := in.steps.Do("etcd and kube-apiserver ready", func() error {
		clientURL, err := in.etcdClientURL()
		if err != nil {
			return err
		}
		if err := in.startEtcd(ctx, clientURL); err != nil {
			return err
		}
		return in.startAPIServer(ctx)
	}); err != nil {
		return nil, err
	}
	if err := in.steps.Do("cluster bootstrap", func() (err error) {
		in.version, err = in.bootstrap(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	if err := in.steps.Do("cloud ready", func() error {
		admin, err := cluster.MakeAdminDir(in.dir)
		if err != nil {
			return err
		}
		return in.cloud.Start(ctx, providers.CloudEnv{
			Dir: filepath.Join(in.dir, "cloud"), AdminDir: admin, LogDir: in.logDir(), Processes: &in.procs, Binaries: spec.Binaries,
			Kubeconfig: in.kubeconfig, KwokLabel: kwokLabel + "=" + kwokManaged,
		})
	}); err != nil {
		return nil, err
	}
	// Nodes without instances are for a CCM that claims none; one that
	// does would wait for instances nobody makes.
	if in.cloud.Instances() == nil && spec.Nodes > 0 && spec.Profile.Has(providers.Instances) {
		return nil, fmt.Errorf("provider %s's cloud cannot make the instances behind nodes here: drop the instances claim, or test a cluster of that cloud with CLUSTER=existing", spec.Profile.Name)
	}
	specs := spec.Managers
	if specs == nil {
		specs = defaultManagers()
	}
	var managers []cluster.Manager
	if err := in.steps.Do("managers and kwok ready", func() error {
		g, gctx := errgroup.WithContext(ctx)
		started := make([]*cluster.ProcessManager, len(specs))
		for i, ms := range specs {
			g.Go(func() (err error) { started[i], err = in.startManager(gctx, ms); return err })
		}
		g.Go(func() error { return in.startKwok(gctx) })
		if err := g.Wait(); err != nil {
			return cluster.Diagnosed(ctx, in.cloud, err)
		}
		for _, m := range started {
			managers = append(managers, m)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	pool := &nodePool{client: in.client, cloud: in.cloud.Instances()}
	if err := in.steps.Do(fmt.Sprintf("%d nodes registered", spec.Nodes), func() error {
		g, gctx := errgroup.WithContext(ctx)
		for i := 1; i <= spec.Nodes; i++ {
			name := "node-" + strconv.Itoa(i)
			if pool.cloud == nil {
				g.Go(func() error { return registerWithoutCloud(gctx, in.client, name, i) })
				continue
			}
			g.Go(func() error { _, err := pool.Add(gctx, name); return err })
		}
		return g.Wait()
	}); err != nil {
		return nil, err
	}
	// A component can pass its health check and die a moment later (a CCM
	// whose controllers fail to start); better said now than as a timeout.
	if err := in.procs.Dead(); err != nil {
		return nil, err
	}
	in.saveState(in.procs.Records())

	c := &cluster.Cluster{
		Name:              spec.Name,
		Kubeconfig:        in.kubeconfig,
		KubernetesVersion: in.version,
		Profile:           spec.Profile,
		Cloud:             in.cloud,
		Managers:          managers,
		ControlPlane:      controlPlane{in},
		Steps:             in.steps.Total(start),
		Health:            in.procs.Dead,
		Refusals:          in.audit.Refusals,
		APIUses:           in.audit.APIUses,
	}
	if pool.cloud != nil {
		c.Nodes = pool
	}
	if in.ha {
		c.LeaderElection = cluster.LeaderElection{Lease: in.timing.LeaderLease, Renew: in.timing.LeaderRenew, Retry: in.timing.LeaderRetry}
	}
	return c, nil
}

func (in *instance) teardown() {
	in.procs.StopAll(10 * time.Second)
	for _, m := range in.inCluster {
		m.Stop()
	}
	if err := in.state(nil).RedactLogs(); err != nil {
		in.logf("%v", err)
	}
	_ = cluster.RemoveStateDir(in.dir)
}

func (in *instance) saveState(records []process.Record) {
	in.stateMu.Lock()
	defer in.stateMu.Unlock()
	_ = in.state(records).Write(in.dir)
}

func (in *instance) state(records []process.Record) cluster.State {
	st := cluster.State{Name: in.spec.Name, Kubeconfig: in.kubeconfig, Processes: records, LogDir: in.logDir(),
		KubernetesVersion: in.version, Audit: in.audit.Source()}
	if in.cloud != nil {
		st.Secrets = cluster.SecretsOf(in.cloud)
	}
	return st
}

// etcdClientURL picks etcd's client URL, which kube-apiserver needs
// before etcd runs.
func (in *instance) etcdClientURL() (string, error) {
	port, err := process.FreePort()
	if err != nil {
		return "", err
	}
	in.etcdURL = "https://127.0.0.1:" + strconv.Itoa(port)
	return in.etcdURL, nil
}

func (in *instance) startEtcd(ctx context.Context, clientURL string) error {
	peerPort, err := process.FreePort()
	if err != nil {
		return err
	}
	p := in.pki
	peerURL := "https://127.0.0.1:" + strconv.Itoa(peerPort)
	_, err = in.procs.Start(ctx, process.Spec{
		Name: "etcd",
		Path: in.bins["etcd"],
		Args: []string{
			"--name=etcd",
			"--data-dir=" + filepath.Join(in.dir, "etcd"),
			"--listen-client-urls=" + clientURL,
			"--advertise-client-urls=" + clientURL,
			"--listen-peer-urls=" + peerURL,
			"--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=etcd=" + peerURL,
			"--cert-file=" + p.etcd.cert, "--key-file=" + p.etcd.key,
			"--client-cert-auth", "--trusted-ca-file=" + p.caFile,
			"--peer-cert-file=" + p.etcd.cert, "--peer-key-file=" + p.etcd.key,
			"--peer-client-cert-auth", "--peer-trusted-ca-file=" + p.caFile,
			// A throwaway cluster's data is worth no fsync; on slow disks
			// fsync dominates bring-up.
			"--unsafe-no-fsync",
			// A lone member has no peer to lose an election to, so a short
			// timeout only shortens its first election: 0.2 s, not 0.5-1 s.
			"--heartbeat-interval=10",
			"--election-timeout=100",
			"--log-level=warn",
		},
		LogDir: in.logDir(),
		Ready:  in.probe(clientURL+"/health", p.admin),
	})
	return err
}

func (in *instance) startAPIServer(ctx context.Context) error {
	port := in.apiserverPort
	if port == 0 {
		var err error
		if port, err = process.FreePort(); err != nil {
			return err
		}
	} else if err := process.CheckPortFree(port, "--apiserver-port"); err != nil {
		return err
	}
	p := in.pki
	in.apiserverURL = "https://127.0.0.1:" + strconv.Itoa(port)
	// The CCM's every request is audited: from an image it runs as a
	// ServiceAccount, and what it was refused is the RBAC its manifests
	// lack; either way, the deprecated APIs it calls are what breaks it
	// against the next release. A CCM binary runs as CCMUser, with the
	// harness's grants.
	policy := filepath.Join(in.dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(audit.Policy), 0o600); err != nil {
		return err
	}
	auditLog := filepath.Join(in.logDir(), audit.LogName)
	auditArgs := []string{
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + auditLog,
		"--audit-log-format=json",
	}
	if in.spec.Profile.CCM.Image == "" {
		in.audit.SetBinary(auditLog, CCMUser)
	}
	_, err := in.procs.Start(ctx, process.Spec{
		Name: "kube-apiserver",
		Path: in.bins["kube-apiserver"],
		Args: append([]string{
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			// No endpoints for Service kubernetes: they would hold this
			// loopback address, which v1.37 refuses at start ("may not be
			// in the loopback range") and no pod here reaches anyway (a
			// CCM in a container is given the address itself).
			"--endpoint-reconciler-type=none",
			"--secure-port=" + strconv.Itoa(port),
			"--etcd-servers=" + in.etcdURL,
			"--etcd-cafile=" + p.caFile, "--etcd-certfile=" + p.apiserverEtcd.cert, "--etcd-keyfile=" + p.apiserverEtcd.key,
			"--tls-cert-file=" + p.apiserver.cert, "--tls-private-key-file=" + p.apiserver.key,
			"--client-ca-file=" + p.caFile,
			"--authorization-mode=RBAC",
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + p.saPub,
			"--service-account-signing-key-file=" + p.saKey,
			"--service-cluster-ip-range=" + serviceCIDR,
			"--requestheader-client-ca-file=" + p.frontProxyCAFile,
			"--requestheader-allowed-names=front-proxy-client",
			"--requestheader-username-headers=X-Remote-User",
			"--requestheader-group-headers=X-Remote-Group",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--proxy-client-cert-file=" + p.frontProxy.cert,
			"--proxy-client-key-file=" + p.frontProxy.key,
			"--allow-privileged=true",
			"--profiling=false",
			"--cert-dir=" + filepath.Join(in.dir, "apiserver"),
			"--v=1",
		}, auditArgs...),
		LogDir:       in.logDir(),
		Ready:        in.probe(in.apiserverURL+"/readyz", p.admin),
		ReadyTimeout: 90 * time.Second,
	})
	return err
}

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

// probe returns a readiness check that GETs url over TLS with the given
// client identity and wants 200.
func (in *instance) probe(url string, identity keyPair) func(context.Context) error {
	client := in.httpClient(identity)
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
		}
		return nil
	}
}

func (in *instance) httpClient(identity keyPair) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(in.pki.ca.CertPEM)
	cert, err := tls.LoadX509KeyPair(identity.cert, identity.key)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if err == nil {
		cfg.Certificates = []tls.Certificate{cert}
	}
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: cfg,
			DialContext:     (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		},
	}
}

// writeKubeconfig writes a kubeconfig for identity and returns its path.
func (in *instance) writeKubeconfig(name string, identity keyPair) (string, error) {
	data, err := clientcmd.Write(*clientcmdConfig(in.spec.Name, in.apiserverURL, in.pki.caFile, identity))
	if err != nil {
		return "", err
	}
	path := filepath.Join(in.dir, name+".kubeconfig")
	return path, writeWhole(path, data)
}

// writeWhole writes a file that processes may be reading: whole, beside
// it, then renamed into place. The managers of an HA control plane start
// at once, each writing its kind's kubeconfig as it starts: written in
// place, a file is read empty by a member starting meanwhile ("no
// configuration has been provided").
func writeWhole(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
