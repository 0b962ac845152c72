package local

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
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
	"sigs.k8s.io/ccm-harness/cluster/binaries"
	"sigs.k8s.io/ccm-harness/cluster/process"
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

	procs process.Group
	pki   *certs
	bins  map[string]string
	cloud providers.Cloud

	etcdURL      string
	apiserverURL string
	kubeconfig   string
	client       kubernetes.Interface

	stateMu sync.Mutex
	steps   []cluster.Step
}

func (in *instance) logDir() string { return filepath.Join(in.spec.ArtifactsDir, "logs", in.spec.Name) }

// step runs fn and records how long it took.
func (in *instance) step(name string, fn func() error) error {
	start := time.Now()
	err := fn()
	d := time.Since(start)
	if err != nil {
		return err
	}
	in.steps = append(in.steps, cluster.Step{Name: name, Duration: d})
	in.logf("%-28s %6.2fs", name, d.Seconds())
	return nil
}

func (in *instance) up(ctx context.Context) (*cluster.Cluster, error) {
	spec := in.spec
	// A bad provider config is said before anything starts.
	var err error
	if in.cloud, err = spec.Profile.NewCloud(spec.ProviderConfig); err != nil {
		return nil, err
	}
	comps := append([]binaries.Component{binaries.Etcd, binaries.KubeAPIServer, binaries.KubeControllerManager, binaries.Kwok, spec.Profile.CCM},
		spec.Profile.CloudBinaries...)
	if err := in.step("binaries ready", func() (err error) {
		in.bins, err = spec.Binaries.Paths(ctx, comps...)
		return err
	}); err != nil {
		return nil, err
	}
	start := time.Now()
	if err := in.step("certificates", func() (err error) {
		in.pki, err = newCerts(filepath.Join(in.dir, "pki"))
		return err
	}); err != nil {
		return nil, err
	}
	if err := in.step("etcd ready", func() error { return in.startEtcd(ctx) }); err != nil {
		return nil, err
	}
	if err := in.step("kube-apiserver ready", func() error { return in.startAPIServer(ctx) }); err != nil {
		return nil, err
	}
	var version string
	if err := in.step("cluster bootstrap", func() (err error) {
		version, err = in.bootstrap(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	if err := in.step("cloud ready", func() error {
		return in.cloud.Start(ctx, providers.CloudEnv{
			Dir: filepath.Join(in.dir, "cloud"), LogDir: in.logDir(), Processes: &in.procs, Binaries: spec.Binaries,
			Kubeconfig: in.kubeconfig,
		})
	}); err != nil {
		return nil, err
	}
	var managers []cluster.Manager
	if err := in.step("managers and kwok ready", func() error {
		g, gctx := errgroup.WithContext(ctx)
		var kcm, ccm *process.Process
		g.Go(func() (err error) { kcm, err = in.startKCM(gctx); return err })
		g.Go(func() (err error) { ccm, err = in.startCCM(gctx); return err })
		g.Go(func() error { return in.startKwok(gctx) })
		if err := g.Wait(); err != nil {
			return err
		}
		managers = []cluster.Manager{
			manager{name: cluster.KubeControllerManager, group: &in.procs, proc: kcm},
			manager{name: cluster.CloudControllerManager, group: &in.procs, proc: ccm},
		}
		return nil
	}); err != nil {
		return nil, err
	}
	pool := &nodePool{client: in.client, cloud: in.cloud.Instances()}
	if err := in.step(fmt.Sprintf("%d nodes registered", spec.Nodes), func() error {
		g, gctx := errgroup.WithContext(ctx)
		for i := 1; i <= spec.Nodes; i++ {
			name := "node-" + strconv.Itoa(i)
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
	in.steps = append(in.steps, cluster.Step{Name: "total", Duration: time.Since(start)})
	in.saveState(in.procs.Records())

	c := &cluster.Cluster{
		Name:              spec.Name,
		Kubeconfig:        in.kubeconfig,
		KubernetesVersion: version,
		Profile:           spec.Profile,
		Cloud:             in.cloud,
		Managers:          managers,
		Steps:             in.steps,
		Health:            in.procs.Dead,
	}
	if pool.cloud != nil {
		c.Nodes = pool
	}
	return c, nil
}

func (in *instance) teardown() {
	in.procs.StopAll(10 * time.Second)
	_ = os.RemoveAll(in.dir)
}

func (in *instance) saveState(records []process.Record) {
	in.stateMu.Lock()
	defer in.stateMu.Unlock()
	data, _ := json.MarshalIndent(state{Name: in.spec.Name, Kubeconfig: in.kubeconfig, Processes: records}, "", "  ")
	tmp := filepath.Join(in.dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err == nil {
		_ = os.Rename(tmp, filepath.Join(in.dir, stateFile))
	}
}

func (in *instance) startEtcd(ctx context.Context) error {
	clientPort, err := process.FreePort()
	if err != nil {
		return err
	}
	peerPort, err := process.FreePort()
	if err != nil {
		return err
	}
	p := in.pki
	clientURL := "https://127.0.0.1:" + strconv.Itoa(clientPort)
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
			"--log-level=warn",
		},
		LogDir: in.logDir(),
		Ready:  in.probe(clientURL+"/health", p.admin),
	})
	in.etcdURL = clientURL
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
	_, err := in.procs.Start(ctx, process.Spec{
		Name: "kube-apiserver",
		Path: in.bins["kube-apiserver"],
		Args: []string{
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
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
			"--requestheader-client-ca-file=" + p.caFile,
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
		},
		LogDir:       in.logDir(),
		Ready:        in.probe(in.apiserverURL+"/readyz", p.admin),
		ReadyTimeout: 90 * time.Second,
	})
	return err
}

func (in *instance) startKCM(ctx context.Context) (*process.Process, error) {
	port, err := process.FreePort()
	if err != nil {
		return nil, err
	}
	p := in.pki
	kubeconfig, err := in.writeKubeconfig("kube-controller-manager", p.kcm)
	if err != nil {
		return nil, err
	}
	url := "https://127.0.0.1:" + strconv.Itoa(port)
	return in.procs.Start(ctx, process.Spec{
		Name: "kube-controller-manager",
		Path: in.bins["kube-controller-manager"],
		Args: append(managerArgs(kubeconfig, port, p.kcmServing, p.caFile),
			"--cloud-provider=external",
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
		),
		LogDir: in.logDir(),
		Ready:  in.probe(url+"/healthz", p.admin),
	})
}

func (in *instance) startCCM(ctx context.Context) (*process.Process, error) {
	port, err := process.FreePort()
	if err != nil {
		return nil, err
	}
	p := in.pki
	kubeconfig, err := in.writeKubeconfig("cloud-controller-manager", p.ccm)
	if err != nil {
		return nil, err
	}
	cfg, err := in.cloud.CCMConfig()
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(in.dir, "cloud-config")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return nil, err
	}
	url := "https://127.0.0.1:" + strconv.Itoa(port)
	args := append(managerArgs(kubeconfig, port, p.ccmServing, p.caFile),
		"--cloud-provider="+in.spec.Profile.CloudProvider,
		"--cloud-config="+cfgPath,
		"--use-service-account-credentials=false",
		"--node-monitor-period="+in.timing.Monitor.String(),
		// The webhook server is off: nothing here calls it, and it would
		// take a fixed port.
		"--webhook-secure-port=0",
		// Names the cluster's resources in the cloud (LB tags, routes).
		"--cluster-name="+in.spec.Name,
	)
	if in.spec.Profile.Has(providers.Routes) {
		// The route controller runs only where the CCM believes it
		// allocates node CIDRs; kube-controller-manager's node-ipam does.
		args = append(args, "--configure-cloud-routes=true", "--allocate-node-cidrs=true", "--cluster-cidr="+clusterCIDR)
	} else {
		args = append(args, "--configure-cloud-routes=false")
	}
	var env []string
	if e, ok := in.cloud.(providers.CCMEnvironment); ok {
		env = e.CCMEnv()
	}
	return in.procs.Start(ctx, process.Spec{
		Name:   "cloud-controller-manager",
		Path:   in.bins[in.spec.Profile.CCM.Name],
		Args:   append(args, in.spec.Profile.CCMArgs...),
		Env:    env,
		LogDir: in.logDir(),
		Ready:  in.probe(url+"/healthz", p.admin),
	})
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
		"--leader-elect=false",
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
	cfg := clientcmdConfig(in.spec.Name, in.apiserverURL, in.pki.caFile, identity)
	path := filepath.Join(in.dir, name+".kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}
