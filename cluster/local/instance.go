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
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/cluster/audit"
	"sigs.k8s.io/ccm-harness/cluster/incluster"
	"sigs.k8s.io/ccm-harness/internal/process"
	"sigs.k8s.io/ccm-harness/manifests"
	"sigs.k8s.io/ccm-harness/providers"
)

// Network ranges of the simulated cluster. They are only ever data in API
// objects: no packet is sent to them. Services may be dual-stack (the
// API server's range has both families); pod CIDRs, which routes follow,
// are IPv4 alone, so kube-controller-manager is given the IPv4 range.
const (
	serviceCIDR   = "10.96.0.0/16"
	serviceCIDRv6 = "fd00:10:96::/112"
	clusterCIDR   = "10.244.0.0/16"
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
		DualStackServices: true,
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
	var electionArgs []string
	if in.spec.CoordinatedLeaderElection {
		// Beta from v1.33 and off by default, as is its LeaseCandidate API.
		electionArgs = []string{"--feature-gates=CoordinatedLeaderElection=true", "--runtime-config=coordination.k8s.io/v1beta1=true"}
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
			"--service-cluster-ip-range=" + serviceCIDR + "," + serviceCIDRv6,
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
		}, append(auditArgs, electionArgs...)...),
		LogDir: in.logDir(),
		Ready:  in.probe(in.apiserverURL+"/readyz", p.admin),
		// Its post-start hooks ran for over 90 s, making progress, when
		// make test brought up three HA control planes beside five other
		// suites on a 2-core machine compiling on a cold cache; one that
		// fails exits, and is said at once.
		ReadyTimeout: 3 * time.Minute,
	})
	return err
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
