// Command ccm-harness brings test clusters up and down outside the e2e
// suite: `up` leaves a cluster running with a kubeconfig for kubectl,
// `down` removes it, `binaries` builds the cached components, and `grid`
// puts several runs' results side by side.
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
	"sigs.k8s.io/ccm-harness/cluster/oci"
	"sigs.k8s.io/ccm-harness/providers"
	_ "sigs.k8s.io/ccm-harness/providers/fake"
	_ "sigs.k8s.io/ccm-harness/providers/vsphere"
	"sigs.k8s.io/ccm-harness/reports"
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
	name       string
	provider   string
	ccmVersion string
	ccmImage   string
	// cloudConfig is what the profile's cloud gets: the provider config,
	// or, for an external profile, its cloudConfig.
	cloudConfig    []byte
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
	up.Flags().StringVar(&o.ccmImage, "ccm-image", os.Getenv("CCM_IMAGE"), "run the CCM from this container image (docker-archive:PATH, oci:DIR, or a registry reference)")
	up.Flags().StringVar(&o.providerConfig, "provider-config", "", "provider config file (for --provider=external, the profile file)")
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
			// What the leader-migration specs run besides.
			for _, c := range []binaries.Component{profile.InTreeKCM, profile.OlderCCM} {
				if c.Name != "" {
					comps = append(comps, c)
				}
			}
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
	bins.Flags().StringVar(&o.providerConfig, "provider-config", "", "provider config file (for --provider=external, the profile file)")
	bins.Flags().StringVar(&o.ccmImage, "ccm-image", os.Getenv("CCM_IMAGE"), "unpack the CCM from this container image instead")
	var packTag, packOut string
	pack := &cobra.Command{
		Use:   "pack BINARY",
		Short: "Write a container image tarball (docker save format) whose entrypoint is BINARY, with no Docker",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := oci.Pack(args[0], filepath.Base(args[0]), packTag, packOut); err != nil {
				return fmt.Errorf("pack %s: %w", args[0], err)
			}
			fmt.Printf("image %s: docker-archive:%s\n", packTag, packOut)
			return nil
		},
	}
	pack.Flags().StringVar(&packTag, "tag", "ccm-harness.local/ccm:dev", "the image's tag")
	pack.Flags().StringVar(&packOut, "out", "ccm.tar", "the tarball to write")
	var gridOut string
	grid := &cobra.Command{
		Use:   "grid --out grid.html ARTIFACTS_DIR...",
		Short: "Write a testgrid-like page of several runs: a row per spec, a column per run",
		Long: "Write a testgrid-like page of several runs from their artifact folders (each the --artifacts or $ARTIFACTS of\n" +
			"one run, holding its junit*.xml and metadata.json): a row per spec, a column per run, oldest first.",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("grid: no artifact folders given (name one or more, e.g. ccm-harness grid --out grid.html _artifacts /tmp/run2)")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, dirs []string) error {
			if err := reports.WriteGrid(gridOut, dirs); err != nil {
				return fmt.Errorf("grid: %w", err)
			}
			fmt.Printf("grid of %d runs: %s\n", len(dirs), gridOut)
			return nil
		},
	}
	grid.Flags().StringVar(&gridOut, "out", "grid.html", "the page to write")
	root.AddCommand(up, down, bins, grid, pack)
	return root
}

// profile is the chosen provider with the chosen CCM version or image.
func (o *options) profile() (providers.Profile, error) {
	var cfg []byte
	if o.providerConfig != "" {
		var err error
		if cfg, err = os.ReadFile(o.providerConfig); err != nil {
			return providers.Profile{}, fmt.Errorf("provider config: %w", err)
		}
	}
	p, cfg, err := providers.Resolve(o.provider, cfg)
	if err != nil {
		return providers.Profile{}, err
	}
	o.cloudConfig = cfg
	if o.ccmImage != "" && o.ccmVersion != "" {
		return providers.Profile{}, fmt.Errorf("--ccm-image and --ccm-version both given: an image is its own version, give one")
	}
	if p, err = p.WithCCMVersion(o.ccmVersion); err != nil {
		return providers.Profile{}, err
	}
	return p.WithCCMImage(o.ccmImage), nil
}

func (o *options) up(ctx context.Context) error {
	profile, err := o.profile()
	if err != nil {
		return err
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
		ProviderConfig: o.cloudConfig,
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
		if err := c.CheckClaims(ctx, claimsTimeout); err != nil {
			if derr := local.New().Down(context.WithoutCancel(ctx), c.Name); derr != nil {
				logf("cluster %s: take down: %v", c.Name, derr)
			}
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	fmt.Printf("cluster %s is up in %.1fs: Kubernetes %s, provider %s (%s), %d nodes\n", c.Name, time.Since(start).Seconds(), c.KubernetesVersion, profile.Name, profile.CCM, o.nodes)
	fmt.Printf("  kubectl --kubeconfig %s get nodes\n", c.Kubeconfig)
	fmt.Printf("  logs: %s\n", filepath.Join(artifacts, "logs", c.Name))
	fmt.Printf("  ccm-harness down --name %s\n", c.Name)
	return nil
}

// claimsTimeout is how long a CCM may take, once it has initialized the
// nodes, to show every controller its profile claims.
const claimsTimeout = 15 * time.Second

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
