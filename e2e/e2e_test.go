// Package e2e is the Ginkgo suite: it brings a cluster up with the chosen
// runtime and provider, runs the scenarios against it, writes JUnit for Prow
// and testgrid, and tears the cluster down, on success, failure or Ctrl-C.
//
//	go test ./e2e -args --provider=fake --cluster=local --artifacts=_artifacts
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubernetes/test/e2e/framework"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/cluster/binaries"
	"sigs.k8s.io/ccm-harness/cluster/local"
	"sigs.k8s.io/ccm-harness/providers"
	_ "sigs.k8s.io/ccm-harness/providers/fake"
	_ "sigs.k8s.io/ccm-harness/providers/vsphere"
	"sigs.k8s.io/ccm-harness/reports"
	"sigs.k8s.io/ccm-harness/scenarios"
)

var (
	clusterKind    = flag.String("cluster", envOr("CLUSTER", "local"), "cluster runtime: local")
	nodeCount      = flag.Int("nodes", 3, "nodes to register at start")
	binDir         = flag.String("bin-dir", os.Getenv("BIN_DIR"), "directory holding ready-made etcd, kube-apiserver, kube-controller-manager, kwok and CCM binaries (default: build them into the cache)")
	providerConfig = flag.String("provider-config", "", "provider config file (fake: region, zones, faults to inject; vsphere: region, zones, credentials, ipFamilies, faults)")
	ccmVersion     = flag.String("ccm-version", os.Getenv("CCM_VERSION"), "CCM version, one of those pinned for the provider (default: the first pinned)")
	artifacts      = flag.String("artifacts", envOr("ARTIFACTS", "_artifacts"), "where JUnit, logs and reports go")
	waitScale      = flag.Float64("wait-scale", 1, "multiplies every scenario timeout (negative controls shorten them)")
)

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func TestMain(m *testing.M) {
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	// The e2e framework's --provider selects our provider profile, so
	// kubetest2's ginkgo tester, which passes --provider, works unchanged.
	for _, name := range providers.Names() {
		framework.RegisterProvider(name, func() (framework.ProviderInterface, error) { return framework.NullProvider{}, nil })
	}
	_ = flag.Set("provider", envOr("PROVIDER", "fake"))
	flag.Parse()
	framework.TestContext.ReportDir = *artifacts
	framework.TestContext.ReportPrefix = framework.TestContext.Provider + "-" + *clusterKind + "_"
	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

func TestE2E(t *testing.T) {
	gomega.RegisterFailHandler(framework.Fail)
	suiteConfig, reporterConfig := framework.CreateGinkgoConfig()
	// Scenarios share one cluster and restart its managers: run in order
	// of definition is not needed, but one at a time is.
	passed := ginkgo.RunSpecs(t, "CCM conformance", suiteConfig, reporterConfig)
	finishRun(t, passed)
}

// run is what the suite learned for its artifacts: the metadata testgrid
// reads and the secrets no artifact may hold.
var run = struct {
	dir      string
	metadata map[string]string
	secrets  []string
}{metadata: map[string]string{}}

// finishRun runs once every report is written: it scrubs secrets from the
// artifacts, then leaves finished.json and the HTML report beside them.
func finishRun(t *testing.T, passed bool) {
	if run.dir == "" {
		return
	}
	if n, err := reports.Redact(run.dir, run.secrets); err != nil {
		t.Errorf("redact artifacts: %v", err)
	} else if n > 0 {
		t.Logf("redacted secrets from %d artifact files", n)
	}
	if err := reports.WriteFinished(run.dir, time.Now(), passed, run.metadata); err != nil {
		t.Errorf("write finished.json: %v", err)
	}
	page, err := reports.WriteRunReport(run.dir)
	if err != nil {
		t.Errorf("write the HTML report: %v", err)
		return
	}
	fmt.Printf("report: %s\n", page)
}

var _ = ginkgo.BeforeSuite(func(ctx context.Context) {
	profile, err := providers.Get(framework.TestContext.Provider)
	framework.ExpectNoError(err)
	profile, err = profile.WithCCMVersion(*ccmVersion)
	framework.ExpectNoError(err)
	var rt cluster.Runtime
	switch *clusterKind {
	case "local":
		rt = local.New()
	default:
		framework.Failf("unknown --cluster %q (known: local)", *clusterKind)
	}
	var cfg []byte
	if *providerConfig != "" {
		cfg, err = os.ReadFile(*providerConfig)
		framework.ExpectNoError(err, "read --provider-config")
	}
	absArtifacts, err := filepath.Abs(*artifacts)
	framework.ExpectNoError(err)
	run.dir = absArtifacts
	framework.ExpectNoError(reports.WriteStarted(absArtifacts, time.Now()))
	run.metadata[reports.KeyProvider] = profile.Name
	run.metadata[reports.KeyCluster] = *clusterKind
	run.metadata[reports.KeyCCM] = profile.CCM.Name
	// testgrid's column version: the CCM under test at its version. Our own
	// CCM reports the Kubernetes release of the library it is built on.
	jobVersion := strings.Replace(profile.CCM.String(), " ", "@", 1)
	if !strings.Contains(jobVersion, "@") {
		jobVersion += "@" + binaries.ModuleVersion("k8s.io/kubernetes")
	}
	run.metadata[reports.KeyJobVersion] = jobVersion
	framework.ExpectNoError(reports.WriteMetadata(absArtifacts, run.metadata))
	logf := func(format string, args ...any) { framework.Logf(format, args...) }
	spec := cluster.Spec{
		Name:           "e2e-" + rand.String(6),
		Profile:        profile,
		ProviderConfig: cfg,
		Nodes:          *nodeCount,
		ArtifactsDir:   absArtifacts,
		Binaries:       &binaries.Source{Dir: *binDir, Logf: logf},
		Logf:           logf,
	}
	framework.Logf("bringing up a %s cluster %s with provider %s (%s) and %d nodes", *clusterKind, spec.Name, profile.Name, profile.CCM, spec.Nodes)
	c, err := rt.Up(ctx, spec)
	// Registered before checking err: a failed Up cleans itself, and Down
	// is idempotent, so Ctrl-C at any point leaves nothing behind.
	ginkgo.DeferCleanup(func(ctx context.Context) {
		framework.Logf("tearing down cluster %s", spec.Name)
		framework.ExpectNoError(rt.Down(ctx, spec.Name))
	})
	framework.ExpectNoError(err, "bring up the cluster")
	framework.TestContext.KubeConfig = c.Kubeconfig
	run.metadata[reports.KeyKubernetesVersion] = c.KubernetesVersion
	framework.ExpectNoError(reports.WriteMetadata(absArtifacts, run.metadata))
	if sk, ok := c.Cloud.(providers.SecretKeeper); ok {
		run.secrets = sk.Secrets()
	}
	// With no kubeconfig at flag time the framework defaulted Host, which
	// would override the kubeconfig's server.
	framework.TestContext.Host = ""

	timeouts := scenarios.DefaultTimeouts
	timeouts.NodeInit = scaled(timeouts.NodeInit)
	timeouts.NodeLifecycle = scaled(timeouts.NodeLifecycle)
	timeouts.LoadBalancer = scaled(timeouts.LoadBalancer)
	env := &scenarios.Env{Cluster: c, Timeouts: timeouts}

	// Bring-up is measured to "nodes initialized by the CCM"; not reaching
	// it is [node-init]'s failure to report, not the suite's.
	cs := clientFor(c.Kubeconfig)
	start := time.Now()
	if err := c.WaitInitialized(ctx, timeouts.NodeInit); err != nil {
		framework.Logf("initial nodes not initialized: %v", err)
	} else {
		env.InitialNodesInitialized = time.Since(start)
		total := c.Steps[len(c.Steps)-1].Duration // the runtime's "total" step
		framework.Logf("bring-up: control plane and %d nodes initialized by the CCM in %.2fs (%.2fs to registration, %.2fs more to initialization)",
			spec.Nodes, (total + env.InitialNodesInitialized).Seconds(), total.Seconds(), env.InitialNodesInitialized.Seconds())
	}
	writeBringUp(absArtifacts, c, env)
	framework.Logf("kubeconfig: %s (kubectl --kubeconfig %s get nodes)", c.Kubeconfig, c.Kubeconfig)
	scenarios.SetEnv(env)
	// Runs before the teardown registered above: whatever the specs left
	// in the cloud is a leak of the CCM's, named here.
	ginkgo.DeferCleanup(func(ctx context.Context) {
		if c.Cloud != nil {
			framework.ExpectNoError(scenarios.CheckNoLeaks(ctx, cs, c.Cloud.Inspector(), timeouts.LoadBalancer), "cloud resources at the end of the suite")
		}
	})
})

// A component that crashed explains a spec's failure better than the
// timeout it caused, so every spec ends by asking.
var _ = ginkgo.AfterEach(func() {
	if c := scenarios.Cluster(); c != nil && c.Health != nil {
		framework.ExpectNoError(c.Health(), "cluster components")
	}
})

func scaled(d time.Duration) time.Duration { return time.Duration(float64(d) * *waitScale) }

func clientFor(kubeconfig string) kubernetes.Interface {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	framework.ExpectNoError(err)
	cs, err := kubernetes.NewForConfig(cfg)
	framework.ExpectNoError(err)
	return cs
}

// writeBringUp leaves the bring-up timings beside the JUnit.
func writeBringUp(dir string, c *cluster.Cluster, env *scenarios.Env) {
	var b strings.Builder
	fmt.Fprintf(&b, "cluster %s, Kubernetes %s, provider %s (%s)\n", c.Name, c.KubernetesVersion, c.Profile.Name, c.Profile.CCM)
	for _, s := range c.Steps {
		fmt.Fprintf(&b, "%-28s %7.2fs\n", s.Name, s.Duration.Seconds())
	}
	fmt.Fprintf(&b, "%-28s %7.2fs\n", "nodes initialized after", env.InitialNodesInitialized.Seconds())
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, "bringup.txt"), []byte(b.String()), 0o644)
}
