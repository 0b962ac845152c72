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

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sigs.k8s.io/ccm-harness/cluster/audit"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
	"sigs.k8s.io/ccm-harness/matrix"
	"sigs.k8s.io/ccm-harness/options"
	"sigs.k8s.io/ccm-harness/reports"
	"sigs.k8s.io/ccm-harness/scenarios/labels"
	"sigs.k8s.io/ccm-harness/skew"
)

// matrixFlags are the matrix's own choices, beside the options every door
// shares.
type matrixFlags struct {
	clusters, ccms []string
	outside        bool
	suite          string
	labelFilter    string
	list           bool
}

func newMatrix(o *options.Options) *cobra.Command {
	var f matrixFlags
	cmd := &cobra.Command{
		Use:   "matrix",
		Short: "Run the suite for every (Kubernetes release, CCM version) the version skew policy allows, and grid the runs",
		Long: "Run the e2e suite once per cell: a cluster of each Kubernetes release the harness builds, with each pinned\n" +
			"version of the provider's CCM of the same minor or one older (the version skew policy), or with --ccm-image the\n" +
			"image at its release (--ccm-version); with --outside-policy\n" +
			"also the CCM one minor newer, marked outside the policy rather than passed or failed. Each cell is an ordinary\n" +
			"run folder under --artifacts; the matrix ends with the builds' times, a line per cell, the specs that pass in\n" +
			"one cell and fail in another, and grid.html (a row per spec, a column per cell).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMatrix(cmd.Context(), *o, f, cmd.OutOrStdout())
		},
	}
	o.Bind(cmd.Flags(), options.FlagKubeconfig, options.FlagWait, options.FlagAPIServerPort, options.FlagKubernetes,
		options.FlagAllowNewerCCM, options.FlagLifecycleNodes, options.FlagJoinHook)
	cmd.Flags().StringSliceVar(&f.clusters, "kubernetes-versions", nil, "the clusters' releases, or their minors (default: every release the harness builds, "+strings.Join(pins.KubernetesReleases, ", ")+")")
	cmd.Flags().StringSliceVar(&f.ccms, "ccm-versions", nil, "the CCM versions (default: every version pinned for the provider)")
	cmd.Flags().BoolVar(&f.outside, "outside-policy", false, "also run each CCM one minor newer than the cluster, outside the version skew policy; such a cell's failures are no finding")
	cmd.Flags().StringVar(&f.suite, "suite", "_output/bin/e2e.test", "the e2e suite binary (make build writes it)")
	cmd.Flags().StringVar(&f.labelFilter, "label-filter", "", "the suite's Ginkgo label filter, for every cell")
	cmd.Flags().BoolVar(&f.list, "list", false, "print the cells, a line each (Kubernetes release, CCM version, skew), and run nothing")
	return cmd
}

func runMatrix(ctx context.Context, o options.Options, f matrixFlags, out io.Writer) error {
	if f.list {
		return listCells(o, f, out)
	}
	if o.Cluster == options.Existing {
		return fmt.Errorf("matrix: --cluster=existing runs the cluster's own release; the matrix makes its clusters (use local or kind)")
	}
	suite, err := filepath.Abs(f.suite)
	if err != nil {
		return err
	}
	if st, err := os.Stat(suite); err != nil || st.IsDir() {
		return fmt.Errorf("matrix: the suite %s is missing (run make build, or name it with --suite)", f.suite)
	}
	base, cells, err := resolveCells(o, f)
	if err != nil {
		return err
	}
	root := base.ArtifactsDir
	fmt.Fprintf(out, "matrix of provider %s: %d cells, runs under %s\n", base.Profile.Name, len(cells), root)
	for _, c := range cells {
		fmt.Fprintf(out, "  %s\n", c)
	}

	// Every cell's components first, each timed: a cold build of a
	// release takes minutes, and says so once, not inside a cell's run.
	migration, err := labels.MigrationSelected(f.labelFilter)
	if err != nil {
		return err
	}
	built := map[string]bool{}
	var builds []string
	for _, c := range cells {
		s, err := cellOptions(o, base, c).Resolve(logf)
		if err != nil {
			return fmt.Errorf("matrix: %s: %w", c, err)
		}
		for _, comp := range s.Components(migration) {
			key := comp.String()
			if built[key] {
				continue
			}
			built[key] = true
			start := time.Now()
			if _, err := s.Binaries.Paths(ctx, comp); err != nil {
				return fmt.Errorf("matrix: %s: %w", c, err)
			}
			builds = append(builds, fmt.Sprintf("  %-60s %s", key, time.Since(start).Round(time.Second)))
		}
	}
	fmt.Fprintf(out, "components of every cell, each with the time it took (0s: in the cache):\n%s\n", strings.Join(builds, "\n"))

	runs := map[string]*reports.Run{}
	var dirs, lines, apiUses []string
	failed := 0
	for i, c := range cells {
		dir := filepath.Join(root, c.Name())
		fmt.Fprintf(out, "[%d/%d] %s\n", i+1, len(cells), c)
		start := time.Now()
		w := &prefixWriter{w: out, prefix: "  " + c.Name() + " | "}
		runErr := runCell(ctx, suite, cellOptions(o, base, c), f.labelFilter, dir, w)
		w.Flush()
		if ctx.Err() != nil {
			return fmt.Errorf("matrix: interrupted in %s", c)
		}
		r, err := reports.ReadRun(dir)
		if err != nil {
			return fmt.Errorf("matrix: %s left no run (%v): %w", c, runErr, err)
		}
		runs[c.Name()], dirs = r, append(dirs, dir)
		p, fl, sk := counts(r)
		verdict, ok := cellVerdict(c.Skew, runErr, p, fl)
		if !ok {
			failed++
		}
		if data, err := os.ReadFile(filepath.Join(dir, audit.APIUsesFile)); err == nil {
			apiUses = append(apiUses, fmt.Sprintf("%s:\n%s", c, indent(string(data))))
		}
		lines = append(lines, fmt.Sprintf("  %-34s %-24s %3d passed %3d failed %3d skipped  %s", c.Versions(), verdict, p, fl, sk, time.Since(start).Round(time.Second)))
	}

	fmt.Fprintf(out, "\nmatrix of provider %s:\n%s\n", base.Profile.Name, strings.Join(lines, "\n"))
	flips := matrix.Flips(cells, runs)
	var findings strings.Builder
	if len(flips) == 0 {
		findings.WriteString("no spec passed in one cell and failed in another\n")
	} else {
		fmt.Fprintf(&findings, "%d specs passed in one cell and failed in another:\n", len(flips))
		for _, fl := range flips {
			findings.WriteString(fl.String())
		}
	}
	if len(apiUses) == 0 {
		findings.WriteString("no cell's CCM called a deprecated or unserved API\n")
	} else {
		fmt.Fprintf(&findings, "deprecated or unserved APIs the CCM called, by cell (%s in each cell's folder):\n%s", audit.APIUsesFile, strings.Join(apiUses, ""))
	}
	fmt.Fprintf(out, "\n%s", findings.String())
	if err := os.WriteFile(filepath.Join(root, "findings.txt"), []byte(findings.String()), 0o644); err != nil {
		return err
	}
	grid := filepath.Join(root, "grid.html")
	if err := reports.WriteGrid(grid, dirs); err != nil {
		return err
	}
	fmt.Fprintf(out, "grid: %s\n", grid)
	if failed > 0 {
		return fmt.Errorf("matrix: %d of %d cells within the skew policy failed", failed, len(cells))
	}
	return nil
}

// resolveCells resolves the options and the matrix's cells.
func resolveCells(o options.Options, f matrixFlags) (*options.Setup, []matrix.Cell, error) {
	if o.CCMImage == "" && o.CCMVersion != "" {
		return nil, nil, fmt.Errorf("matrix: --%s names an image's release, beside --%s (a profile file's image names its own); choose the matrix's CCM versions with --ccm-versions", options.FlagCCMVersion, options.FlagCCMImage)
	}
	base, err := o.Resolve(nil)
	if err != nil {
		return nil, nil, err
	}
	clusters, err := releases(o, f.clusters)
	if err != nil {
		return nil, nil, err
	}
	ccms := f.ccms
	// An image is one version, its own release: its cells are the
	// clusters the skew policy allows it beside.
	if img := base.Profile.CCM; img.Image != "" {
		switch {
		case len(ccms) > 0:
			return nil, nil, fmt.Errorf("matrix: a CCM image is one version, its own; drop --ccm-versions (the image's release is --%s)", options.FlagCCMVersion)
		case img.Version == "":
			return nil, nil, fmt.Errorf("matrix: the image %s names no release, so no cluster is known to be within the skew policy of it; give its release with --%s vMAJOR.MINOR.PATCH (or a profile file's ccm.version)", img.Image, options.FlagCCMVersion)
		}
		ccms = []string{img.Version}
	}
	if len(ccms) == 0 {
		if ccms = base.Profile.CCM.Choices(); len(ccms) == 0 {
			return nil, nil, fmt.Errorf("matrix: provider %s's CCM (%s) has no versions to choose from; a matrix needs the CCM's pinned versions (give --ccm-versions)", base.Profile.Name, base.Profile.CCM)
		}
	}
	cells, err := matrix.Cells(clusters, ccms, f.outside)
	if err != nil {
		return nil, nil, fmt.Errorf("matrix: provider %s: %w", base.Profile.Name, err)
	}
	return base, cells, nil
}

// listCells prints the cells, for job configs to be checked against.
func listCells(o options.Options, f matrixFlags, out io.Writer) error {
	_, cells, err := resolveCells(o, f)
	if err != nil {
		return err
	}
	for _, c := range cells {
		fmt.Fprintf(out, "%s %s %s\n", c.Cluster, c.CCM, c.Skew)
	}
	return nil
}

// releases are the clusters' releases the user chose, minors resolved.
func releases(o options.Options, chosen []string) ([]string, error) {
	if len(chosen) == 0 {
		return pins.KubernetesReleases, nil
	}
	var out []string
	for _, v := range chosen {
		o.KubernetesVersion = v
		r, err := o.KubernetesRelease()
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// cellOptions are the options of one cell's run: the cell's cluster, and
// its CCM's version, but for an image a profile file names, which carries
// its release in the file.
func cellOptions(o options.Options, base *options.Setup, c matrix.Cell) options.Options {
	o.KubernetesVersion, o.AllowNewerCCM = c.Cluster, !c.Skew.Within()
	if base.Profile.CCM.Image == "" || o.CCMImage != "" {
		o.CCMVersion = c.CCM
	}
	return o
}

// runCell runs the suite for one cell, its output to w and to the cell's
// console.log.
func runCell(ctx context.Context, suite string, o options.Options, labelFilter, dir string, w io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(dir, "console.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	args := []string{"-ginkgo.v", "-ginkgo.no-color", "--quiet", "-ginkgo.label-filter=" + labelFilter, "-ginkgo.timeout=1h"}
	o.Artifacts = dir
	args = append(args, o.Args()...)
	cmd := exec.CommandContext(ctx, suite, args...)
	cmd.Stdout = io.MultiWriter(w, log)
	cmd.Stderr = cmd.Stdout
	// The suite tears its cluster down on SIGINT; killing it would not.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 2 * time.Minute
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("the suite failed (%v)", exit)
	}
	return err
}

// indent indents each line of text by four spaces.
func indent(text string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

// cellVerdict is what the matrix says of a cell, and whether it passed:
// a cell outside the skew policy is information, whatever it did; within
// it, one that failed, or where no spec passed (which proves nothing
// about its pair), did not pass.
func cellVerdict(sk skew.Verdict, runErr error, passed, failed int) (string, bool) {
	switch {
	case !sk.Within():
		return sk.String(), true
	case runErr != nil || failed > 0:
		return "FAILED", false
	case passed == 0:
		return "FAILED: no spec passed", false
	}
	return "passed", true
}

func counts(r *reports.Run) (passed, failed, skipped int) {
	for _, c := range r.Cases {
		switch {
		case c.NotSelected():
		case c.Outcome == reports.Passed:
			passed++
		case c.Outcome == reports.Failed:
			failed++
		default:
			skipped++
		}
	}
	return passed, failed, skipped
}

// prefixWriter writes each line to w after prefix, so the cells' output
// says whose it is.
type prefixWriter struct {
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		if _, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf[:i]); err != nil {
			return 0, err
		}
		p.buf = p.buf[i+1:]
	}
}

// Flush writes what is left of a last line without its newline.
func (p *prefixWriter) Flush() {
	if len(p.buf) > 0 {
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf)
		p.buf = nil
	}
}
