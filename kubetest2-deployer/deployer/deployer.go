// Package deployer is the harness as a kubetest2 deployer: `kubetest2
// ccm-harness --build --up --test=... --down` brings up the clusters `make
// e2e` and `ccm-harness up` bring up, with the same runtime, provider
// profiles and binary cache, so a Prow job written for kubetest2 tests a
// CCM with this harness.
package deployer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kubetest2/pkg/artifacts"
	"sigs.k8s.io/kubetest2/pkg/types"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/cluster/binaries"
	"sigs.k8s.io/ccm-harness/cluster/local"
	"sigs.k8s.io/ccm-harness/providers"
	_ "sigs.k8s.io/ccm-harness/providers/fake"
	_ "sigs.k8s.io/ccm-harness/providers/vsphere"
	"sigs.k8s.io/ccm-harness/reports"
)

// Name is the deployer's name: `kubetest2 ccm-harness` runs the binary
// kubetest2-ccm-harness.
const Name = "ccm-harness"

// runtimes are the values --cluster accepts.
var runtimes = []string{"local"}

type flags struct {
	provider       string
	cluster        string
	ccmVersion     string
	nodes          int
	providerConfig string
	binDir         string
	clusterName    string
	wait           time.Duration
}

// Deployer brings one cluster up and down for kubetest2.
type Deployer struct {
	common types.Options
	flags  flags
	rt     *local.Runtime

	// ctx ends when Down is called, so that an Up still in progress (kubetest2
	// calls Down from its signal handler) stops and cleans up after itself.
	ctx    context.Context
	cancel context.CancelFunc

	// mu keeps Up, Down and the dumps from running at once.
	mu      sync.Mutex
	profile providers.Profile
	config  []byte
	cluster *cluster.Cluster
	secrets []string
}

var (
	_ types.DeployerWithInit       = (*Deployer)(nil)
	_ types.DeployerWithKubeconfig = (*Deployer)(nil)
	_ types.DeployerWithVersion    = (*Deployer)(nil)
	_ types.DeployerWithProvider   = (*Deployer)(nil)
	_ types.DeployerWithPostTester = (*Deployer)(nil)
)

// New is kubetest2's NewDeployer. Its flags must not repeat kubetest2's
// own (--up, --down, --build, --test, --artifacts, --run-id, --rundir, ...):
// kubetest2 panics on a clash.
func New(common types.Options) (types.Deployer, *pflag.FlagSet) {
	ctx, cancel := context.WithCancel(context.Background())
	d := &Deployer{common: common, rt: local.New(), ctx: ctx, cancel: cancel}
	fs := pflag.NewFlagSet(Name, pflag.ContinueOnError)
	fs.StringVar(&d.flags.provider, "provider", envOr("PROVIDER", "fake"), "provider profile ("+strings.Join(providers.Names(), ", ")+")")
	fs.StringVar(&d.flags.cluster, "cluster", envOr("CLUSTER", "local"), "cluster runtime ("+strings.Join(runtimes, ", ")+")")
	fs.StringVar(&d.flags.ccmVersion, "ccm-version", os.Getenv("CCM_VERSION"), "CCM version, one of those pinned for the provider (default: the first pinned)")
	fs.IntVar(&d.flags.nodes, "nodes", 3, "nodes to register at --up")
	fs.StringVar(&d.flags.providerConfig, "provider-config", "", "provider config file")
	fs.StringVar(&d.flags.binDir, "bin-dir", os.Getenv("BIN_DIR"), "directory of ready-made etcd, kube-apiserver, kube-controller-manager, kwok, CCM and cloud binaries (default: those --build staged in the run dir, else the cache, building what is missing)")
	fs.StringVar(&d.flags.clusterName, "cluster-name", "", "cluster name, lower-case letters, digits and '-', at most 42 characters (default: kt2- and the run ID); give the same to a later --down or --test of a cluster left up")
	fs.DurationVar(&d.flags.wait, "wait", 2*time.Minute, "how long --up waits for the CCM to initialize the nodes")
	return d, fs
}

// Init checks the flags before kubetest2 builds or brings up anything, so
// bad input costs one line, not a half-made cluster.
func (d *Deployer) Init() error {
	if !slices.Contains(runtimes, d.flags.cluster) {
		return fmt.Errorf("--cluster %q is not a runtime this deployer has (known: %s)", d.flags.cluster, strings.Join(runtimes, ", "))
	}
	profile, err := d.profileOf()
	if err != nil {
		return err
	}
	d.profile = profile
	if d.flags.providerConfig != "" {
		if d.config, err = os.ReadFile(d.flags.providerConfig); err != nil {
			return fmt.Errorf("--provider-config: %w (name a readable provider config file, or leave it unset)", err)
		}
	}
	if d.flags.nodes < 0 {
		return fmt.Errorf("--nodes %d is negative (give 0 or more)", d.flags.nodes)
	}
	// With the profile, nodes and artifacts set, only the name is left to
	// be wrong.
	if err := d.spec(nil).Validate(); err != nil {
		return fmt.Errorf("--cluster-name: %w", err)
	}
	if d.flags.binDir != "" {
		// Only looks: a binary directory is never built into.
		src := &binaries.Source{Dir: d.flags.binDir}
		if _, err := src.Paths(d.ctx, components(profile)...); err != nil {
			return err
		}
	}
	// The suite takes its defaults from these variables, and kubetest2
	// hands the tester this process's environment. The ginkgo tester at
	// the pinned kubetest2 passes no --provider (it ignores Provider()).
	// CLUSTER=existing makes the suite test the deployer's cluster, whose
	// kubeconfig kubetest2 gives it, rather than bring up its own.
	env := map[string]string{"PROVIDER": profile.Name, "CCM_VERSION": d.flags.ccmVersion, "CLUSTER": "existing"}
	for k, v := range env {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return d.addMetadata(map[string]string{
		reports.KeyJobVersion: d.Version(),
		reports.KeyProvider:   profile.Name,
		reports.KeyCluster:    d.flags.cluster,
		reports.KeyCCM:        profile.CCM.Name,
	})
}

// addMetadata adds keys to the metadata.json kubetest2 has written in
// $ARTIFACTS: Prow merges it into finished.json, where testgrid takes the
// column version from job-version, as it does from the suite's own run.
func (d *Deployer) addMetadata(md map[string]string) error {
	path := filepath.Join(artifacts.BaseDir(), "metadata.json")
	all := map[string]string{}
	if data, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(data, &all); err != nil {
			return fmt.Errorf("%s: %w (kubetest2 writes it; remove it if another tool left it)", path, err)
		}
	}
	maps.Copy(all, md)
	data, err := json.Marshal(all)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func (d *Deployer) profileOf() (providers.Profile, error) {
	p, err := providers.Get(d.flags.provider)
	if err != nil {
		return providers.Profile{}, fmt.Errorf("--provider: %w", err)
	}
	return p.WithCCMVersion(d.flags.ccmVersion)
}

// components are what a cluster of profile runs, as the runtime resolves
// them before it starts anything.
func components(profile providers.Profile) []binaries.Component {
	return append([]binaries.Component{binaries.Etcd, binaries.KubeAPIServer, binaries.KubeControllerManager, binaries.Kwok, profile.CCM},
		profile.CloudBinaries...)
}

func (d *Deployer) spec(src *binaries.Source) cluster.Spec {
	return cluster.Spec{
		Name:           d.name(),
		Profile:        d.profile,
		ProviderConfig: d.config,
		Nodes:          d.flags.nodes,
		ArtifactsDir:   artifacts.BaseDir(),
		Binaries:       src,
		// Attached when this invocation also takes the cluster down: then
		// even a kubetest2 killed outright leaves nothing running. `--up`
		// alone leaves it for a later `--down`.
		Detached: !d.common.ShouldDown(),
		Logf:     klog.Infof,
	}
}

// name is --cluster-name, else one derived from the run ID, which Prow
// sets to the job's ID: a later invocation with the same --run-id finds
// the same cluster.
func (d *Deployer) name() string {
	if d.flags.clusterName != "" {
		return d.flags.clusterName
	}
	return nameFor(d.common.RunID())
}

var notDNS = regexp.MustCompile(`[^a-z0-9]+`)

// nameFor makes a cluster name of a run ID: "kt2-" and the ID in
// lower-case letters, digits and '-', cut to 42 characters with a hash of
// the whole ID kept, so that long IDs sharing a prefix differ.
func nameFor(runID string) string {
	name := "kt2-" + strings.Trim(notDNS.ReplaceAllString(strings.ToLower(runID), "-"), "-")
	if len(name) <= 42 {
		return strings.TrimRight(name, "-")
	}
	sum := sha256.Sum256([]byte(runID))
	return strings.TrimRight(name[:33], "-") + "-" + hex.EncodeToString(sum[:4])
}

// Up brings the cluster up and returns once the CCM has initialized every
// node. A failed Up leaves nothing running.
func (d *Deployer) Up() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx.Err() != nil {
		return fmt.Errorf("cluster %s: not brought up: kubetest2 was interrupted", d.name())
	}
	src := d.source()
	start := time.Now()
	c, err := d.rt.Up(d.ctx, d.spec(src))
	if err != nil {
		return err
	}
	if err := c.WaitInitialized(d.ctx, d.flags.wait); err != nil {
		// The state that explains the failure goes to the artifacts before
		// the cluster goes: a cluster whose CCM cannot do its job is no
		// cluster to test.
		d.cluster = c
		if derr := d.dump(context.WithoutCancel(d.ctx)); derr != nil {
			klog.Warningf("cluster %s: dump: %v", c.Name, derr)
		}
		d.cluster = nil
		if derr := d.rt.Down(context.WithoutCancel(d.ctx), c.Name); derr != nil {
			klog.Warningf("cluster %s: take down: %v", c.Name, derr)
		}
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	d.cluster = c
	if sk, ok := c.Cloud.(providers.SecretKeeper); ok {
		d.secrets = sk.Secrets()
	}
	if err := d.addMetadata(map[string]string{reports.KeyKubernetesVersion: c.KubernetesVersion}); err != nil {
		klog.Warningf("cluster %s: metadata: %v", c.Name, err)
	}
	klog.Infof("cluster %s is up in %.1fs: Kubernetes %s, provider %s (%s), %d nodes initialized; kubeconfig %s",
		c.Name, time.Since(start).Seconds(), c.KubernetesVersion, d.profile.Name, d.profile.CCM, d.flags.nodes, c.Kubeconfig)
	return nil
}

// source is where Up finds binaries.
func (d *Deployer) source() *binaries.Source {
	dir := d.binaryDir()
	if dir != "" {
		klog.Infof("cluster binaries from %s", dir)
	}
	return &binaries.Source{Dir: dir, Logf: klog.Infof}
}

// binaryDir is where the cluster's binaries come from: --bin-dir, else
// the run dir's bin/ once Build has staged them there (or will, in this
// invocation); "" means the cache.
func (d *Deployer) binaryDir() string {
	if d.flags.binDir != "" {
		return d.flags.binDir
	}
	if d.common.ShouldBuild() {
		return d.stagedBinDir()
	}
	if st, err := os.Stat(d.stagedBinDir()); err == nil && st.IsDir() {
		return d.stagedBinDir()
	}
	return ""
}

// Down dumps the cluster's state to the artifacts and removes the
// cluster: processes, state and cloud. It works from another invocation
// than Up's, and after a failed or interrupted Up.
func (d *Deployer) Down() error {
	d.cancel()
	d.mu.Lock()
	defer d.mu.Unlock()
	ctx := context.Background()
	name := d.name()
	if up, _ := d.isUp(); up {
		if err := d.dump(ctx); err != nil {
			klog.Warningf("cluster %s: dump: %v", name, err)
		}
	}
	err := d.rt.Down(ctx, name)
	d.cluster = nil
	// The components' logs are final only now; they leave with the
	// artifacts, so the cloud's credentials must not be in them.
	if _, serr := os.Stat(d.logDir()); serr == nil {
		if n, rerr := reports.Redact(d.logDir(), d.secrets); rerr != nil {
			klog.Warningf("cluster %s: redact logs: %v", name, rerr)
		} else if n > 0 {
			klog.Infof("cluster %s: redacted secrets from %d log files", name, n)
		}
	}
	if err != nil {
		return err
	}
	klog.Infof("cluster %s is down", name)
	return nil
}

// IsUp reports whether the cluster's API answers.
func (d *Deployer) IsUp() (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.isUp()
}

func (d *Deployer) isUp() (bool, error) {
	kubeconfig, err := d.kubeconfig()
	if err != nil {
		return false, nil
	}
	cs, err := clientFor(kubeconfig)
	if err != nil {
		return false, err
	}
	_, err = cs.Discovery().ServerVersion()
	return err == nil, nil
}

// Kubeconfig is the cluster's admin kubeconfig, which kubetest2 hands the
// tester as KUBECONFIG.
func (d *Deployer) Kubeconfig() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.kubeconfig()
}

func (d *Deployer) kubeconfig() (string, error) {
	if d.cluster != nil {
		return d.cluster.Kubeconfig, nil
	}
	// A cluster another invocation left up keeps its kubeconfig in its
	// state folder (README: "What a run leaves").
	p := filepath.Join(local.DefaultStateDir(), d.name(), "admin.kubeconfig")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("cluster %s is not up: no kubeconfig at %s (bring it up with --up, or name a running cluster with --cluster-name)", d.name(), p)
	}
	return p, nil
}

// Provider is the provider profile, what the e2e framework's --provider
// carries.
func (d *Deployer) Provider() string { return d.flags.provider }

// Version is what the cluster runs under test: the CCM at its version, as
// the suite's job-version in metadata.json says it for testgrid.
func (d *Deployer) Version() string {
	p, err := d.profileOf()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	v := strings.Replace(p.CCM.String(), " ", "@", 1)
	if !strings.Contains(v, "@") {
		// The harness's own CCM is built on the control plane's release.
		v += "@" + binaries.ModuleVersion("k8s.io/kubernetes")
	}
	return v
}

// PostTest keeps the cluster's state as the test left it when no Down
// follows in this invocation (Down dumps it otherwise). The test's own
// error stays kubetest2's result.
func (d *Deployer) PostTest(testErr error) error {
	if d.common.ShouldDown() {
		return nil
	}
	if err := d.DumpClusterLogs(); err != nil {
		klog.Warningf("cluster %s: dump: %v", d.name(), err)
	}
	return nil
}

func clientFor(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = 10 * time.Second
	return kubernetes.NewForConfig(cfg)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
