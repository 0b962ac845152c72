// Command ccm-harness brings test clusters up and down outside the e2e
// suite: `up` leaves a cluster running with a kubeconfig for kubectl,
// `down` removes it, `binaries` builds the cached components, `grid`
// puts several runs' results side by side, and `matrix` runs the suite
// for every Kubernetes release and CCM version the skew policy allows.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/cluster/existing"
	"sigs.k8s.io/ccm-harness/cluster/kind/nodeimage"
	"sigs.k8s.io/ccm-harness/cluster/local"
	"sigs.k8s.io/ccm-harness/conformance"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/oci"
	"sigs.k8s.io/ccm-harness/options"
	"sigs.k8s.io/ccm-harness/reports"
	"sigs.k8s.io/ccm-harness/scenarios/labels"
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

func newRoot() *cobra.Command {
	o := options.New()
	var name string
	root := &cobra.Command{
		Use:           "ccm-harness",
		Short:         "Bring up clusters to test cloud-controller-managers against",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&name, "name", "ccm-harness", "cluster name")

	up := &cobra.Command{
		Use:   "up",
		Short: "Start a local cluster with the provider's cloud and CCM, and leave it running",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cluster.CheckName(name); err != nil {
				return fmt.Errorf("--name: %w", err)
			}
			opts := *o
			// Whatever $CLUSTER, $LIFECYCLE_NODES and $JOIN_HOOK say (a
			// suite's, for the cluster it judges).
			opts.Cluster, opts.LifecycleNodes, opts.JoinHook = options.Local, "", ""
			return up(cmd.Context(), opts, name)
		},
	}
	// up leaves a cluster for kubectl: only the local runtime makes one
	// that outlives this process.
	o.Bind(up.Flags(), options.FlagCluster, options.FlagKubeconfig, options.FlagLifecycleNodes, options.FlagJoinHook)

	join := &cobra.Command{
		Use:   "join NODE",
		Short: "Add a node to a cluster started with up, as a machine whose kubelet joins it: its instance made in the cloud, then the node registered (a --join-hook for the suite with --cluster=existing)",
		Long: "Add a node to a cluster started with up (the same --name, --provider and --provider-config), as a machine whose kubelet\n" +
			"joins it: its instance made in the cloud, then the node registered tainted uninitialized, with the labels in\n" +
			"$" + existing.NodeLabelsEnv + " (k=v,...). It is the join hook of a suite that judges such a cluster as someone else's:\n" +
			"  --join-hook='ccm-harness join --name NAME --provider=PROVIDER'",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cluster.CheckName(name); err != nil {
				return fmt.Errorf("--name: %w", err)
			}
			opts := *o
			// As up: the hook runs in the environment of the suite it
			// serves, which sets these for the cluster it judges.
			opts.Cluster, opts.LifecycleNodes, opts.JoinHook = options.Local, "", ""
			return joinNode(cmd.Context(), opts, name, args[0])
		},
	}
	o.Bind(join.Flags(), options.FlagCluster, options.FlagKubeconfig, options.FlagLifecycleNodes, options.FlagJoinHook, options.FlagNodes,
		options.FlagArtifacts, options.FlagWait, options.FlagAPIServerPort)

	down := &cobra.Command{
		Use:   "down",
		Short: "Stop a cluster started with up and remove its state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cluster.CheckName(name); err != nil {
				return fmt.Errorf("--name: %w", err)
			}
			err := local.New().Down(cmd.Context(), name)
			if errors.Is(err, cluster.ErrNoCluster) {
				// As `kind delete cluster`: taking down what is not up
				// is done, but the user hears which clusters there are.
				fmt.Println(err)
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Printf("cluster %s is down\n", name)
			return nil
		},
	}

	var labelFilter string
	var migrationOnly bool
	bins := &cobra.Command{
		Use:   "binaries",
		Short: "Build the components a cluster of the provider runs into the cache, and print their paths (with --cluster=kind, the node image's tag too)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Nodes of an existing cluster build nothing.
			opts := *o
			opts.LifecycleNodes, opts.JoinHook = "", ""
			s, err := opts.Resolve(logf)
			if err != nil {
				return err
			}
			// What the leader-migration specs run besides, if the filter
			// selects one.
			migration, err := labels.MigrationSelected(labelFilter)
			if err != nil {
				return err
			}
			comps := s.Components(migration)
			if migrationOnly {
				// Only what the migration specs add: a build beside the
				// cluster's own, which another process makes meanwhile.
				own := s.Components(false)
				comps = slices.DeleteFunc(comps, func(c binaries.Component) bool {
					return slices.ContainsFunc(own, func(o binaries.Component) bool { return o.Name == c.Name })
				})
			}
			paths, err := s.Binaries.Paths(cmd.Context(), comps...)
			if err != nil {
				return err
			}
			for _, c := range comps {
				fmt.Printf("%-32s %s\n", c.Name, paths[c.Name])
			}
			if opts.Cluster == options.Kind && !migrationOnly {
				// What a kind cluster made with kind's own command line
				// runs with no registry (kind create cluster --image).
				ref, err := nodeimage.Ensure(cmd.Context(), nodeimage.Options{Binaries: s.Binaries, Logf: logf, KubernetesVersion: s.Spec("components").KubernetesVersion})
				if err != nil {
					return err
				}
				fmt.Printf("%-32s %s\n", "kind-node-image", ref)
			}
			return nil
		},
	}
	o.Bind(bins.Flags(), options.FlagKubeconfig, options.FlagLifecycleNodes, options.FlagJoinHook, options.FlagNodes, options.FlagArtifacts, options.FlagWait, options.FlagAPIServerPort)
	bins.Flags().StringVar(&labelFilter, "label-filter", "", "the suite's Ginkgo label filter: the leader-migration specs' managers are built only if it selects one of them (empty selects every spec)")
	bins.Flags().BoolVar(&migrationOnly, "leader-migration-only", false, "build only the leader-migration specs' managers, not the cluster's components: a build beside theirs (make e2e runs it in the background)")
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
	report := &cobra.Command{
		Use:   "report ARTIFACTS_DIR",
		Short: "Check a run's conformance report against its JUnit, and print it",
		Long: "Check the conformance report a run wrote (ARTIFACTS_DIR/" + conformance.File + ", the --artifacts or $ARTIFACTS of the run)\n" +
			"against conformance/schema.json and against the run's own JUnit and metadata, so that a report edited by hand is caught,\n" +
			"then print it: a row per capability, each failure and known difference by spec ID.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := conformance.Check(args[0]); err != nil {
				return fmt.Errorf("report: %w", err)
			}
			r, err := conformance.Read(filepath.Join(args[0], conformance.File))
			if err != nil {
				return fmt.Errorf("report: %w", err)
			}
			r.WriteTable(os.Stdout)
			return nil
		},
	}
	root.AddCommand(up, join, down, bins, grid, pack, report, newMatrix(o))
	return root
}

// up brings a local cluster up and leaves it running for kubectl.
func up(ctx context.Context, o options.Options, name string) error {
	s, err := o.Resolve(logf)
	if err != nil {
		return err
	}
	start := time.Now()
	c, err := s.Up(ctx, name, options.Detached())
	if err != nil {
		return err
	}
	fmt.Printf("cluster %s is up in %.1fs: Kubernetes %s, provider %s (%s), %d nodes\n", c.Name, time.Since(start).Seconds(), c.KubernetesVersion, s.Profile.Name, s.Profile.CCM, s.Nodes)
	fmt.Printf("  kubectl --kubeconfig %s get nodes\n", c.Kubeconfig)
	fmt.Printf("  logs: %s\n", s.LogDir(c.Name))
	fmt.Printf("  ccm-harness down --name %s\n", c.Name)
	return nil
}

// joinNode adds node to the running cluster called name, with the labels
// a join hook is given.
func joinNode(ctx context.Context, o options.Options, name, node string) error {
	if errs := validation.IsDNS1123Subdomain(node); len(errs) > 0 {
		return fmt.Errorf("node name %q: %s", node, strings.Join(errs, "; "))
	}
	labels := map[string]string{}
	if v := os.Getenv(existing.NodeLabelsEnv); v != "" {
		for _, kv := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return fmt.Errorf("$%s: %q is not key=value", existing.NodeLabelsEnv, kv)
			}
			labels[k] = val
		}
	}
	s, err := o.Resolve(logf)
	if err != nil {
		return err
	}
	c, err := s.Attach(ctx, name)
	if errors.Is(err, cluster.ErrNoCluster) {
		return fmt.Errorf("no cluster %s is up to join (start one with ccm-harness up --name %s)", name, name)
	}
	if err != nil {
		return err
	}
	if c.Nodes == nil {
		return fmt.Errorf("cluster %s: provider %s makes no instances here, so no node can join", name, s.Profile.Name)
	}
	if _, err := c.Nodes.Add(ctx, node, cluster.WithLabels(labels)); err != nil {
		return err
	}
	fmt.Printf("node %s joined cluster %s\n", node, name)
	return nil
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
