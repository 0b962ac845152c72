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
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
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
	"sigs.k8s.io/ccm-harness/options"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/reports"
)

// Name is the deployer's name: `kubetest2 ccm-harness` runs the binary
// kubetest2-ccm-harness.
const Name = "ccm-harness"

// Deployer brings one cluster up and down for kubetest2.
type Deployer struct {
	common types.Options
	// opts are the options every door shares (package options);
	// --artifacts is kubetest2's own, and the cluster is always local.
	opts        *options.Options
	clusterName string

	// ctx ends when Down is called, so that an Up still in progress (kubetest2
	// calls Down from its signal handler) stops and cleans up after itself.
	ctx    context.Context
	cancel context.CancelFunc

	// mu keeps Up, Down and the dumps from running at once.
	mu      sync.Mutex
	setup   *options.Setup
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
	d := &Deployer{common: common, opts: options.New(), ctx: ctx, cancel: cancel}
	fs := pflag.NewFlagSet(Name, pflag.ContinueOnError)
	// A deployer's cluster outlives its process between --up and --down:
	// only the local runtime's does, from its state folder.
	d.opts.Cluster = options.Local
	// Only a local cluster outlives the deployer between --up and --down.
	d.opts.Runtimes = []string{options.Local}
	d.opts.Bind(fs, options.FlagArtifacts, options.FlagKubeconfig, options.FlagAPIServerPort, options.FlagLifecycleNodes, options.FlagJoinHook)
	fs.StringVar(&d.clusterName, "cluster-name", "", "cluster name, lower-case letters, digits and '-', at most 42 characters (default: kt2- and the run ID); give the same to a later --down or --test of a cluster left up")
	return d, fs
}

// Init checks the flags before kubetest2 builds or brings up anything, so
// bad input costs one line, not a half-made cluster.
func (d *Deployer) Init() error {
	if d.opts.Cluster != options.Local {
		return fmt.Errorf("--cluster %q is not a runtime this deployer has (known: %s): only a local cluster outlives the deployer between --up and --down", d.opts.Cluster, options.Local)
	}
	if err := cluster.CheckName(d.name()); err != nil {
		return fmt.Errorf("--cluster-name: %w", err)
	}
	o := *d.opts
	o.Artifacts = artifacts.BaseDir()
	if d.common.ShouldBuild() && o.BinDir == "" {
		// Up runs what Build stages.
		o.BinDir = d.stagedBinDir()
	} else if o.BinDir == "" {
		if st, err := os.Stat(d.stagedBinDir()); err == nil && st.IsDir() {
			o.BinDir = d.stagedBinDir()
		}
	}
	setup, err := o.Resolve(klog.Infof)
	if err != nil {
		return err
	}
	d.setup = setup
	if d.opts.BinDir != "" {
		// Only looks: a binary directory is never built into.
		if _, err := setup.Binaries.Paths(d.ctx, setup.Components(false)...); err != nil {
			return err
		}
	}
	if setup.BinDir != "" {
		klog.Infof("cluster binaries from %s", setup.BinDir)
	}
	// The suite takes its defaults from these variables, and kubetest2
	// hands the tester this process's environment. The ginkgo tester at
	// the pinned kubetest2 passes no --provider (it ignores Provider()).
	// CLUSTER=existing makes the suite test the deployer's cluster, whose
	// kubeconfig kubetest2 gives it, rather than bring up its own.
	env := map[string]string{"PROVIDER": d.opts.Provider, "PROVIDER_CONFIG": absOrEmpty(d.opts.ProviderConfig),
		"CCM_VERSION": d.opts.CCMVersion, "CCM_IMAGE": d.opts.CCMImage, "CLUSTER": options.Existing}
	for k, v := range env {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return d.addMetadata(setup.Metadata())
}

// absOrEmpty is p made absolute, as the tester may run elsewhere.
func absOrEmpty(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
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

// name is --cluster-name, else one derived from the run ID, which Prow
// sets to the job's ID: a later invocation with the same --run-id finds
// the same cluster.
func (d *Deployer) name() string {
	if d.clusterName != "" {
		return d.clusterName
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
	start := time.Now()
	// Its managers lead by a lease, as deployed ones do: the suite judges
	// the cluster as an existing one, and sees by it that its CCM runs.
	opts := []options.UpOption{options.Leased()}
	// Attached when this invocation also takes the cluster down: then even
	// a kubetest2 killed outright leaves nothing running. `--up` alone
	// leaves it for a later `--down`.
	if !d.common.ShouldDown() {
		opts = append(opts, options.Detached())
	}
	// The state that explains a failed wait goes to the artifacts before
	// the cluster goes.
	opts = append(opts, options.OnFailure(func(ctx context.Context, c *cluster.Cluster) {
		d.cluster = c
		if err := d.dump(ctx); err != nil {
			klog.Warningf("cluster %s: dump: %v", c.Name, err)
		}
		d.cluster = nil
	}))
	c, err := d.setup.Up(d.ctx, d.name(), opts...)
	if err != nil {
		return err
	}
	d.cluster = c.Cluster
	if sk, ok := c.Cloud.(providers.SecretKeeper); ok {
		d.secrets = sk.Secrets()
	}
	if err := d.addMetadata(map[string]string{reports.KeyKubernetesVersion: c.KubernetesVersion,
		reports.KeyFeatures: c.Profile.FeaturesOf(c.Cloud).String()}); err != nil {
		klog.Warningf("cluster %s: metadata: %v", c.Name, err)
	}
	klog.Infof("cluster %s is up in %.1fs: Kubernetes %s, provider %s (%s), %d nodes initialized; kubeconfig %s",
		c.Name, time.Since(start).Seconds(), c.KubernetesVersion, d.setup.Profile.Name, d.setup.Profile.CCM, d.setup.Nodes, c.Kubeconfig)
	return nil
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
	if d.setup == nil {
		return nil // Init failed or never ran: nothing was brought up
	}
	if up, _ := d.isUp(); up {
		if err := d.dump(ctx); err != nil {
			klog.Warningf("cluster %s: dump: %v", name, err)
		}
	}
	// A --down of its own knows the cloud's credentials from the state.
	secrets := d.secrets
	if st, err := cluster.ReadState(d.stateDir()); err == nil {
		secrets = append(secrets, st.Secrets...)
	}
	err := d.setup.Down(ctx, name)
	if errors.Is(err, cluster.ErrNoCluster) {
		// An Up that failed has cleaned up after itself.
		klog.Infof("%v", err)
		err = nil
	}
	d.cluster = nil
	// The components' logs are final only now; they leave with the
	// artifacts, so the cloud's credentials must not be in them.
	if _, serr := os.Stat(d.logDir()); serr == nil {
		if n, rerr := reports.Redact(d.logDir(), secrets); rerr != nil {
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

// stateDir is the cluster's state folder, which the local runtime keeps
// between kubetest2's invocations.
func (d *Deployer) stateDir() string { return filepath.Join(cluster.StateDir(), d.name()) }

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
	// state folder (docs/development.md, "Caches and state").
	p := filepath.Join(d.stateDir(), "admin.kubeconfig")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("cluster %s is not up: no kubeconfig at %s (bring it up with --up, or name a running cluster with --cluster-name)", d.name(), p)
	}
	return p, nil
}

// Provider is the provider profile, what the e2e framework's --provider
// carries.
func (d *Deployer) Provider() string { return d.opts.Provider }

// Version is what the cluster runs under test: the CCM at its version, as
// the suite's job-version in metadata.json says it for testgrid.
func (d *Deployer) Version() string {
	s := d.setup
	if s == nil {
		var err error
		if s, err = d.opts.Resolve(nil); err != nil {
			return "unknown (" + err.Error() + ")"
		}
	}
	return s.JobVersion()
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
