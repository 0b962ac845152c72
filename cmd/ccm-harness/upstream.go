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
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
	"sigs.k8s.io/ccm-harness/internal/nameserver"
	"sigs.k8s.io/ccm-harness/options"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/reports"
	"sigs.k8s.io/ccm-harness/upstream"
)

// upstreamFlags are upstream's own: what of Kubernetes' suite to run, and
// how the run is judged.
type upstreamFlags struct {
	focus, skip, expect, e2eTest string
	timeout                      time.Duration
	skipListed                   bool
	procs                        int
}

// newUpstream is `upstream`: Kubernetes' own e2e.test of the cluster's
// release, its load-balancer specs by default, run against a cluster the
// harness brings up for it and takes down after, judged against the
// provider's list of specs that cannot pass here.
func newUpstream(o *options.Options, name *string) *cobra.Command {
	var f upstreamFlags
	cmd := &cobra.Command{
		Use:   "upstream",
		Short: "Run Kubernetes' own e2e.test (its [Feature:LoadBalancer] specs) against a cluster of the provider, and judge it against the provider's upstream.yaml",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := *o
			opts.LifecycleNodes, opts.JoinHook = "", ""
			if f.expect == "" {
				f.expect = filepath.Join("providers", opts.Provider, "upstream.yaml")
			}
			return runUpstream(cmd.Context(), opts, *name, f)
		},
	}
	o.Bind(cmd.Flags(), options.FlagLifecycleNodes, options.FlagJoinHook)
	fs := cmd.Flags()
	fs.StringVar(&f.focus, "focus", upstream.Focus, "the upstream specs to run (e2e.test's --ginkgo.focus)")
	fs.StringVar(&f.skip, "skip", "", "upstream specs to leave out (e2e.test's --ginkgo.skip); a spec left out is neither run nor judged")
	fs.BoolVar(&f.skipListed, "skip-listed", false, "leave out the specs the provider's list says cannot pass here: a run that checks the rest pass, without waiting out the listed ones' timeouts (whether they still fail is then not checked; their names still must match)")
	fs.StringVar(&f.expect, "expect", "", "the provider's list of upstream specs that cannot pass here, each with why (default providers/PROVIDER/upstream.yaml)")
	fs.StringVar(&f.e2eTest, "e2e-test", "", "a ready-made upstream e2e.test (default: built from the cluster's Kubernetes release into the cache)")
	fs.DurationVar(&f.timeout, "timeout", 90*time.Minute, "how long the upstream suite may run (e2e.test's --ginkgo.timeout)")
	fs.IntVar(&f.procs, "procs", 1, "how many processes run the suite's specs at once: above 1, under Ginkgo's command line (its --procs), as Kubernetes' own jobs run e2e.test; a listed spec waits out a timeout of 10 to 20 minutes before it fails, and in parallel those waits overlap (the default release's e2e.test, or an --e2e-test that links go.mod's Ginkgo)")
	return cmd
}

func runUpstream(ctx context.Context, o options.Options, name string, f upstreamFlags) error {
	if f.procs < 1 {
		return fmt.Errorf("--procs=%d: the suite needs at least one process", f.procs)
	}
	// The list first: a typo in it should not cost a bring-up.
	expect, err := upstream.Read(f.expect)
	if err != nil {
		return err
	}
	if expect.Unsupported != "" {
		return fmt.Errorf("provider %s cannot be judged by upstream's suite here: %s (%s)", o.Provider, expect.Unsupported, f.expect)
	}
	if listed := expect.Skip(); f.skipListed && listed != "" {
		f.skip = strings.TrimPrefix(f.skip+"|"+listed, "|")
	}
	s, err := o.Resolve(logf)
	if err != nil {
		return err
	}
	if f.focus == upstream.Focus && !s.Profile.Has(providers.LoadBalancers) {
		return fmt.Errorf("provider %s does not claim %s: upstream's [Feature:LoadBalancer] specs need a CCM that makes load balancers (choose another provider, or another --focus)", s.Profile.Name, providers.LoadBalancers)
	}
	var known []string
	for _, d := range s.Profile.Differences {
		known = append(known, d.Spec.String())
	}
	if err := expect.Decided(known); err != nil {
		return fmt.Errorf("%s: %w", f.expect, err)
	}
	// Said before a bring-up: a cloud whose load balancers' names only
	// its own DNS answers needs upstream's suite pointed at that DNS.
	if cloud, err := s.Profile.NewCloud(s.CloudConfig); err == nil {
		if _, ok := cloud.(providers.NameServer); ok && os.Geteuid() != 0 {
			return fmt.Errorf("provider %s's load balancers answer at DNS names only its cloud's DNS resolves, where upstream's e2e.test is pointed in a mount namespace of its own, which takes root (run as root)", s.Profile.Name)
		}
	}
	suite := f.e2eTest
	if suite == "" {
		comp, err := binaries.UpstreamE2E.At(s.Release)
		if err != nil {
			return err
		}
		// Ginkgo's command line hands each process flags of its own
		// version: it runs a suite of go.mod's Ginkgo, which an aligned
		// build links; an older release's suite links that release's.
		if f.procs > 1 && !slices.Contains(comp.Aligned, comp.Release()) {
			return fmt.Errorf("--procs=%d: the e2e.test of Kubernetes %s links that release's Ginkgo, and Ginkgo's command line here, which runs a suite in parallel, is go.mod's (%s, the Ginkgo of %s's e2e.test): run it with --procs=1", f.procs, comp.Release(), pins.Versions[pins.Ginkgo], strings.Join(comp.Aligned, ", "))
		}
		paths, err := s.Binaries.Paths(ctx, comp)
		if err != nil {
			return err
		}
		suite = paths[comp.Name]
	} else if _, err := os.Stat(suite); err != nil {
		return fmt.Errorf("--e2e-test: %w (give an e2e.test of Kubernetes, or leave it out to build the cluster's release's)", err)
	}
	ginkgo := ""
	if f.procs > 1 {
		paths, err := s.Binaries.Paths(ctx, binaries.GinkgoCLI)
		if err != nil {
			return err
		}
		ginkgo = paths[binaries.GinkgoCLI.Name]
	}
	dir := filepath.Join(s.ArtifactsDir, "upstream")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := reports.RemovePreviousJUnit(dir); err != nil {
		return err
	}

	start := time.Now()
	c, err := s.Up(ctx, name)
	if err != nil {
		return err
	}
	defer func() {
		if err := s.Down(context.WithoutCancel(ctx), name); err != nil {
			logf("cluster %s: take down: %v", name, err)
		}
	}()
	logf("cluster %s is up in %.1fs: Kubernetes %s, provider %s (%s)", name, time.Since(start).Seconds(), c.KubernetesVersion, s.Profile.Name, s.Profile.CCM)

	runErr := runUpstreamSuite(ctx, suite, ginkgo, c.Cluster, dir, f)
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: the upstream suite was stopped and cluster %s is taken down (%w)", name, ctx.Err())
	}
	run, err := reports.ReadRun(dir)
	if err != nil {
		return fmt.Errorf("the upstream suite wrote no result (%v): %w; its output: %s", runErr, err, filepath.Join(dir, "e2e.log"))
	}
	v := upstream.Judge(run, expect)
	title := fmt.Sprintf("Kubernetes %s's e2e (%s) against provider %s (%s)", c.KubernetesVersion, f.focus, s.Profile.Name, s.Profile.CCM)
	summary := v.Markdown(title)
	if err := os.WriteFile(filepath.Join(dir, "summary.md"), []byte(summary), 0o644); err != nil {
		return err
	}
	fmt.Print("\n" + summary + "\n")
	fmt.Printf("upstream e2e: its output %s, its JUnit and this summary in %s\n", filepath.Join(dir, "e2e.log"), dir)
	return v.Err()
}

// specEnd is how verbose Ginkgo ends a spec: "• [3.2 seconds]", "• [FAILED]
// [3.2 seconds]", "S [SKIPPED] [0.0 seconds]". Its name came first, on the
// line after a rule, where the spec began.
var specEnd = regexp.MustCompile(`^(•|S) (?:\[([A-Z]+)\] )?\[([0-9.]+) seconds\]`)

const ginkgoRule = "------------------------------"

// runUpstreamSuite runs the upstream suite against the cluster, under
// Ginkgo's command line if ginkgo is set (f.procs processes), its output to
// dir/e2e.log, a line for each spec as it ends to stderr.
func runUpstreamSuite(ctx context.Context, suite, ginkgo string, c *cluster.Cluster, dir string, f upstreamFlags) error {
	kubeconfig := c.Kubeconfig
	log, err := os.Create(filepath.Join(dir, "e2e.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	args := []string{
		"--kubeconfig=" + kubeconfig,
		// The framework's provider-neutral fallback: upstream's
		// load-balancer specs ask the cluster, not a cloud's API.
		"--provider=skeleton",
		"--ginkgo.focus=" + f.focus,
		"--ginkgo.timeout=" + f.timeout.String(),
		"--ginkgo.v", "--ginkgo.no-color",
		"--report-dir=" + dir, "--e2e-output-dir=" + dir,
		// The log dump runs cluster/log-dump scripts of a Kubernetes
		// checkout; the harness keeps the cluster's logs itself.
		"--disable-log-dump",
	}
	if f.skip != "" {
		args = append(args, "--ginkgo.skip="+f.skip)
	}
	if ginkgo != "" {
		// The suite counts the nodes it may schedule on in its first
		// process only; the others take the count from --num-nodes, or
		// skip the specs that need two nodes ("Requires at least 2 nodes
		// (not -1)"), as they did in parallel without it.
		n, err := schedulableNodes(ctx, kubeconfig)
		if err != nil {
			return err
		}
		args = append(args, "--num-nodes="+strconv.Itoa(n))
	}
	// Upstream's suite leaves temporary folders behind (its kubectl
	// kuberc specs make one each time the suite starts, run or not): a
	// TMPDIR of its own, removed after it.
	tmp, err := os.MkdirTemp(dir, "tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	name := suite
	if ginkgo != "" {
		// The command line's own flags, then the suite's after "--", as
		// hack/ginkgo-e2e.sh runs it; the parallel specs' report, spec by
		// spec, is the command line's output.
		args = append([]string{"--procs=" + strconv.Itoa(f.procs), "--timeout=" + f.timeout.String(), "-v", "--no-color", suite, "--"}, args...)
		name = ginkgo
		logf("upstream e2e: %s in %d processes, under %s (its output: %s)", suite, f.procs, ginkgo, log.Name())
	} else {
		logf("upstream e2e: %s (its output: %s)", suite, log.Name())
	}
	cmd := exec.CommandContext(ctx, name, args...)
	// A Service's ingress hostname that only the cloud's DNS knows
	// (AWS's load balancers here): the suite resolves it with the
	// system's resolver, so it runs pointed at the cloud's DNS.
	if ns, ok := c.Cloud.(providers.NameServer); ok {
		addr, zone := ns.NameServer()
		relay, err := nameserver.Listen(addr)
		if err != nil {
			return err
		}
		defer relay.Close()
		if cmd, err = relay.Command(ctx, tmp, name, args...); err != nil {
			return err
		}
		logf("upstream e2e: resolves with the cloud's DNS at %s (the names of %s), relayed from %s", addr, zone, relay.Addr())
	}
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "TMPDIR="+tmp)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = io.MultiWriter(log, pw), nil
	cmd.Stderr = cmd.Stdout
	// Ginkgo runs its cleanup (the specs' namespaces) on SIGINT, which
	// goes to the suite's whole process group, as a terminal's Ctrl-C
	// would: under the command line, each parallel process has its own.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = time.Minute
	done := make(chan struct{})
	go func() {
		defer close(done)
		progress(pr, time.Now(), logf)
	}()
	err = cmd.Run()
	if cmd.Process != nil {
		// A parallel process that outlived the command line (or the
		// minute after a Ctrl-C) is not left behind.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	pw.Close()
	<-done
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("e2e.test: %v", exit)
	}
	return err
}

// schedulableNodes counts the nodes upstream's suite may schedule its pods
// on, as it counts them itself (e2enode.GetReadySchedulableNodes): ready,
// with a network, schedulable, and without a taint that a pod without
// tolerations does not fit.
func schedulableNodes(ctx context.Context, kubeconfig string) (int, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return 0, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("count the nodes upstream's suite schedules on: %w", err)
	}
	n := 0
	for _, node := range nodes.Items {
		if !node.Spec.Unschedulable && nodeReady(node) && !slices.ContainsFunc(node.Spec.Taints, func(t v1.Taint) bool {
			return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
		}) {
			n++
		}
	}
	return n, nil
}

// nodeReady is e2enode.IsNodeReady: Ready, and not NetworkUnavailable.
func nodeReady(node v1.Node) bool {
	ready := false
	for _, c := range node.Status.Conditions {
		switch c.Type {
		case v1.NodeReady:
			ready = c.Status == v1.ConditionTrue
		case v1.NodeNetworkUnavailable:
			if c.Status == v1.ConditionTrue {
				return false
			}
		}
	}
	return ready
}

// progress prints the suite's count of specs and a line for each spec as
// it ends, from verbose Ginkgo's output: a spec run alone writes its name
// where it begins and its end line after; in parallel, the command line
// writes each spec's report whole as it ends, its end line first and its
// name on the next.
func progress(r io.Reader, start time.Time, say func(format string, args ...any)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var spec string
	var ended []string
	afterRule := false
	done := func(spec string, m []string) {
		state := strings.ToLower(m[2])
		if state == "" {
			state = "passed"
		}
		secs, _ := strconv.ParseFloat(m[3], 64)
		say("upstream e2e: %-8s %6.1fs  %s (%s in)", state, secs, spec, time.Since(start).Round(time.Second))
	}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch m := specEnd.FindStringSubmatch(line); {
		case strings.HasPrefix(line, "Will run "):
			say("upstream e2e: %s", line)
		case m != nil && spec != "":
			done(spec, m)
			spec = ""
		case m != nil:
			ended = m
		case ended != nil && strings.HasPrefix(line, "["):
			done(specName(line), ended)
			ended = nil
		case afterRule && strings.HasPrefix(line, "[") && !strings.Contains(line, "Suite]"):
			spec = specName(line)
		}
		afterRule = line == ginkgoRule
	}
	_, _ = io.Copy(io.Discard, r)
}

// specName is a spec's name from its line, "[sig-network] LoadBalancers …
// should … [Slow] [labels]": the labels repeat the tags, and go, as does
// the "[It] " a failed spec's report puts before its leaf.
func specName(line string) string {
	line = strings.Replace(line, " [It] ", " ", 1)
	if i := strings.LastIndex(line, " ["); i > 0 && strings.Contains(line[i:], ", ") {
		line = line[:i]
	}
	return line
}
