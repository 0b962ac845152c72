// Command ccm-harness brings test clusters up and down outside the e2e
// suite: `up` leaves a cluster running with a kubeconfig for kubectl,
// `down` removes it, and `binaries` builds the cached components.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/cluster/binaries"
	"sigs.k8s.io/ccm-harness/cluster/local"
	"sigs.k8s.io/ccm-harness/providers"
	_ "sigs.k8s.io/ccm-harness/providers/fake"
	_ "sigs.k8s.io/ccm-harness/providers/vsphere"
)

func main() {
	// Ctrl-C and SIGTERM cancel the context: a bring-up in progress then
	// fails and cleans up what it started.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "ccm-harness: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	name           string
	provider       string
	ccmVersion     string
	providerConfig string
	nodes          int
	binDir         string
	artifacts      string
	apiserverPort  int
	wait           time.Duration
}

func newRoot() *cobra.Command {
	o := &options{}
	root := &cobra.Command{
		Use:           "ccm-harness",
		Short:         "Bring up clusters to test cloud-controller-managers against",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&o.name, "name", "ccm-harness", "cluster name")

	up := &cobra.Command{
		Use:   "up",
		Short: "Start a local cluster with the provider's cloud and CCM, and leave it running",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return o.up(cmd.Context()) },
	}
	up.Flags().StringVar(&o.provider, "provider", "fake", "provider profile ("+strings.Join(providers.Names(), ", ")+")")
	up.Flags().StringVar(&o.ccmVersion, "ccm-version", os.Getenv("CCM_VERSION"), "CCM version, one of those pinned for the provider (default: the first pinned)")
	up.Flags().StringVar(&o.providerConfig, "provider-config", "", "provider config file")
	up.Flags().IntVar(&o.nodes, "nodes", 3, "nodes to register")
	up.Flags().StringVar(&o.binDir, "bin-dir", os.Getenv("BIN_DIR"), "directory of ready-made binaries (default: build them into the cache)")
	up.Flags().StringVar(&o.artifacts, "artifacts", envOr("ARTIFACTS", "_artifacts"), "where component logs go")
	up.Flags().IntVar(&o.apiserverPort, "apiserver-port", 0, "serve the API on this port (default: a free one)")
	up.Flags().DurationVar(&o.wait, "wait", 2*time.Minute, "how long the CCM may take to initialize the nodes; 0 returns once they are registered")

	down := &cobra.Command{
		Use:   "down",
		Short: "Stop a cluster started with up and remove its state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := local.New().Down(cmd.Context(), o.name); err != nil {
				return err
			}
			fmt.Printf("cluster %s is down\n", o.name)
			return nil
		},
	}

	bins := &cobra.Command{
		Use:   "binaries",
		Short: "Build the components a local cluster of the provider runs into the cache, and print their paths",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			profile, err := o.profile()
			if err != nil {
				return err
			}
			comps := append([]binaries.Component{binaries.Etcd, binaries.KubeAPIServer, binaries.KubeControllerManager, binaries.Kwok, profile.CCM}, profile.CloudBinaries...)
			src := &binaries.Source{Logf: logf}
			paths, err := src.Paths(cmd.Context(), comps...)
			if err != nil {
				return err
			}
			for _, c := range comps {
				fmt.Printf("%-32s %s\n", c.Name, paths[c.Name])
			}
			return nil
		},
	}
	bins.Flags().StringVar(&o.provider, "provider", "fake", "provider profile ("+strings.Join(providers.Names(), ", ")+")")
	bins.Flags().StringVar(&o.ccmVersion, "ccm-version", os.Getenv("CCM_VERSION"), "CCM version, one of those pinned for the provider (default: the first pinned)")
	root.AddCommand(up, down, bins)
	return root
}

// profile is the chosen provider with the chosen CCM version.
func (o *options) profile() (providers.Profile, error) {
	p, err := providers.Get(o.provider)
	if err != nil {
		return providers.Profile{}, err
	}
	return p.WithCCMVersion(o.ccmVersion)
}

func (o *options) up(ctx context.Context) error {
	profile, err := o.profile()
	if err != nil {
		return err
	}
	var cfg []byte
	if o.providerConfig != "" {
		if cfg, err = os.ReadFile(o.providerConfig); err != nil {
			return fmt.Errorf("provider config: %w", err)
		}
	}
	artifacts, err := filepath.Abs(o.artifacts)
	if err != nil {
		return err
	}
	var opts []local.Option
	if o.apiserverPort != 0 {
		opts = append(opts, local.WithAPIServerPort(o.apiserverPort))
	}
	start := time.Now()
	c, err := local.New(opts...).Up(ctx, cluster.Spec{
		Name:           o.name,
		Profile:        profile,
		ProviderConfig: cfg,
		Nodes:          o.nodes,
		ArtifactsDir:   artifacts,
		Binaries:       &binaries.Source{Dir: o.binDir, Logf: logf},
		Detached:       true,
		Logf:           logf,
	})
	if err != nil {
		return err
	}
	if o.wait > 0 {
		waitStart := time.Now()
		if err := c.WaitInitialized(ctx, o.wait); err != nil {
			// A cluster whose CCM cannot do its job is no cluster to leave
			// running.
			if derr := local.New().Down(context.WithoutCancel(ctx), c.Name); derr != nil {
				logf("cluster %s: take down: %v", c.Name, derr)
			}
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
		logf("%-28s %6.2fs", fmt.Sprintf("%d nodes initialized", o.nodes), time.Since(waitStart).Seconds())
	}
	fmt.Printf("cluster %s is up in %.1fs: Kubernetes %s, provider %s (%s), %d nodes\n", c.Name, time.Since(start).Seconds(), c.KubernetesVersion, profile.Name, profile.CCM, o.nodes)
	fmt.Printf("  kubectl --kubeconfig %s get nodes\n", c.Kubeconfig)
	fmt.Printf("  logs: %s\n", filepath.Join(artifacts, "logs", c.Name))
	fmt.Printf("  ccm-harness down --name %s\n", c.Name)
	return nil
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
