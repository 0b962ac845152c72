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

// Package e2e is the Ginkgo suite: it brings a cluster up with the chosen
// runtime and provider, runs the scenarios against it, writes JUnit for Prow
// and testgrid, and tears the cluster down, on success, failure or Ctrl-C.
//
//	go test ./e2e -args --provider=fake --cluster=local --artifacts=_artifacts
package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubernetes/test/e2e/framework"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/cluster/audit"
	"sigs.k8s.io/ccm-harness/conformance"
	"sigs.k8s.io/ccm-harness/options"
	"sigs.k8s.io/ccm-harness/reports"
	"sigs.k8s.io/ccm-harness/scenarios"
)

// opts are the options every door shares (package options), less the
// e2e framework's own --provider and --kubeconfig, which they take, and
// --wait: the suite waits for initialization as [node-init] does.
var opts = options.New()

var (
	dryRun          = flag.Bool("dry-run", false, "bring the cluster up, then skip every spec, saying why each would be skipped or that it would run; nothing runs")
	waitScale       = flag.Float64("wait-scale", 1, "multiplies every scenario timeout (negative controls shorten them)")
	migrationCfg    = flag.String("leader-migration-config", "", "LeaderMigrationConfiguration file (controllermanager.config.k8s.io v1alpha1, v1beta1 or v1) for every manager of the [leader-migration] specs (default: the harness's, migrating service-lb, node-route and cloud-node-lifecycle)")
	ccmMigrationCfg = flag.String("ccm-leader-migration-config", "", "LeaderMigrationConfiguration file for the CCMs alone in the [leader-migration] specs (default: --leader-migration-config)")
	rollbackCfg     = flag.String("rollback-leader-migration-config", "", "LeaderMigrationConfiguration file for release N's kube-controller-managers that the [downgrade] spec brings back: a rollback's own configuration (default: --leader-migration-config)")
	migrationDef    = flag.Bool("leader-migration-default", false, "run the managers of the [leader-migration] specs with --enable-leader-migration and no configuration file: each with its own built-in default")
	workdir         = flag.String("workdir", "", "the folder relative paths are taken from (default: the current one); the ginkgo CLI runs a compiled suite's processes in the binary's folder, so its callers pass theirs (make e2e: the repository's root)")
)

func TestMain(m *testing.M) {
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	opts.Bind(flag.CommandLine, options.FlagProvider, options.FlagKubeconfig, options.FlagWait, options.FlagAPIServerPort)
	// The e2e framework's --provider selects our provider profile, so
	// kubetest2's ginkgo tester, which passes --provider, works unchanged.
	for _, name := range options.ProviderNames() {
		framework.RegisterProvider(name, func() (framework.ProviderInterface, error) { return framework.NullProvider{}, nil })
	}
	// Its help is the framework's (gce, gke, ...): say what it selects here.
	flag.CommandLine.Lookup(options.FlagProvider).Usage = options.ProviderHelp
	_ = flag.Set("provider", opts.Provider)
	flag.Parse()
	if *workdir != "" {
		if err := os.Chdir(*workdir); err != nil {
			fmt.Fprintf(os.Stderr, "--workdir: %v\n", err)
			os.Exit(2)
		}
	}
	opts.Provider = framework.TestContext.Provider
	opts.Kubeconfig = framework.TestContext.KubeConfig
	framework.TestContext.ReportDir = opts.Artifacts
	framework.TestContext.ReportPrefix = opts.Provider + "-" + opts.Cluster + "_"
	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

func TestE2E(t *testing.T) {
	gomega.RegisterFailHandler(framework.Fail)
	registerSpecHooks()
	suiteConfig, reporterConfig := framework.CreateGinkgoConfig()
	if err := openConsole(); err != nil {
		t.Fatal(err)
	}
	restore := func() {}
	if *quiet && !suiteConfig.DryRun {
		var err error
		if restore, err = quietOutput(opts.Artifacts, suiteConfig.ParallelTotal > 1); err != nil {
			t.Fatalf("--quiet: %v", err)
		}
	}
	// Specs share one cluster; in a parallel run, those that restart its
	// managers or break its cloud for all are [Serial], and Ginkgo runs
	// them last, in the first process, the only one that holds them.
	passed := ginkgo.RunSpecs(t, "CCM conformance", suiteConfig, reporterConfig)
	// Before the artifacts are rewritten (redaction) and the summary
	// printed: the verbose log is closed, the terminal is back.
	restore()
	if suiteConfig.ParallelProcess > 1 {
		return // the first process reports the whole run
	}
	if run.free != "" {
		passed = false
	}
	finishRun(t, passed)
	if run.free != "" {
		fmt.Fprintln(console, "FAILED: "+run.free)
		t.Error(run.free)
	}
}

// verdictNode is the ReportAfterSuite node that fails a run that passed
// for nothing (freeVerdict).
const verdictNode = "the run's verdict"

// run is what the suite learned for its artifacts: the metadata testgrid
// reads, the secrets no artifact may hold, and the cluster's log folder.
var run = struct {
	dir      string
	logDir   string
	metadata map[string]string
	// secrets are those of every cluster the run brought up.
	secrets func() []string
	// refusals explains what the CCM's ServiceAccount was refused in the
	// run, "" if nothing.
	refusals string
	// apiUses lists the deprecated and unserved APIs the CCM called in
	// the run, "" if none.
	apiUses string
	// measured are the run's figures: the bring-up's, and the latencies
	// the specs report as durations.
	measured []reports.Measurement
	// free is why the run, which passed, proves nothing; "" if it does
	// (freeVerdict).
	free string
}{metadata: map[string]string{}, secrets: func() []string { return nil }}

// finishRun runs once every report is written: it moves the failed specs'
// log excerpts into their JUnit failure bodies, scrubs secrets from the
// artifacts (excerpts included), then leaves finished.json and the HTML
// report beside them and prints the summary.
func finishRun(t *testing.T, passed bool) {
	if run.dir == "" {
		return
	}
	_ = os.Remove(filepath.Join(run.dir, endedFile))
	_ = os.Remove(filepath.Join(run.dir, endedFile+".lock"))
	if _, err := reports.FoldExcerpts(run.dir); err != nil {
		t.Errorf("%v", err)
	}
	if n, err := reports.RedactRun(run.dir, run.secrets()); err != nil {
		t.Errorf("redact artifacts: %v", err)
	} else if n > 0 {
		t.Logf("redacted secrets from %d artifact files", n)
	}
	if err := reports.WriteMeasurements(run.dir, run.measured); err != nil {
		t.Errorf("write %s: %v", reports.MeasurementsFile, err)
	}
	result := reports.ResultOf(passed)
	if *dryRun {
		result = reports.ResultDryRun
	}
	if err := reports.WriteFinished(run.dir, time.Now(), result, run.metadata); err != nil {
		t.Errorf("write finished.json: %v", err)
	}
	// Before the HTML report, which shows it per capability.
	var verdict string
	if !*dryRun {
		cr, err := conformance.Write(run.dir)
		if err != nil {
			t.Errorf("write the conformance report: %v", err)
		} else {
			verdict = conformance.Line(cr, filepath.Join(run.dir, conformance.File))
		}
	}
	page, err := reports.WriteRunReport(run.dir)
	if err != nil {
		t.Errorf("write the HTML report: %v", err)
		return
	}
	r, err := reports.ReadRun(run.dir)
	if err != nil {
		t.Errorf("read the run back for its summary: %v", err)
		return
	}
	reports.WriteSummary(console, r, page)
	// After the summary's own lines: the verdict per capability.
	if verdict != "" {
		fmt.Fprintln(console, verdict)
	}
	if run.refusals != "" {
		fmt.Fprint(console, reports.RedactText(run.refusals, run.secrets()))
	}
	if run.apiUses != "" {
		fmt.Fprint(console, run.apiUses)
	}
}

// progress counts the specs as they start and end, so that a run of many
// minutes says where it is.
var progress struct{ started, ended, total int }

// marks is where each log stood when the running spec started.
var marks *reports.LogMarks

// registerSpecHooks declares what runs around every spec. It is called
// from TestE2E, not at package level: the e2e framework previews the suite
// (ginkgo.PreviewSpecs) while it reads the flags, and the suite Ginkgo
// restores after a preview keeps the containers and suite nodes but not
// top-level setup and report nodes, which then would never run.
func registerSpecHooks() {
	// Without -ginkgo.v Ginkgo marks each spec with a character and no
	// newline; the progress line starts a line of its own.
	lead := "\n"
	if _, rc := ginkgo.GinkgoConfiguration(); rc.Verbosity().GTE(types.VerbosityLevelVerbose) {
		lead = ""
	}
	// Only a run that passed can have passed for nothing; a failed one
	// says why it failed. Failed here, in the report, so that a parallel
	// run's ginkgo CLI says it too.
	ginkgo.ReportAfterSuite(verdictNode, func(r ginkgo.Report) {
		if r.SuiteSucceeded {
			if run.free = freeVerdict(r, *dryRun || r.SuiteConfig.DryRun); run.free != "" {
				ginkgo.Fail(run.free)
			}
		}
	})
	// The latencies specs report (AddReportEntry with a duration) are
	// figures for the report and the grid: read off the whole run's
	// report, which holds every process's specs.
	ginkgo.ReportAfterSuite("the specs' figures", func(r ginkgo.Report) {
		for _, s := range r.SpecReports {
			for _, e := range s.ReportEntries {
				if d, err := time.ParseDuration(e.Value.String()); err == nil {
					run.measured = append(run.measured, reports.Measurement{Spec: strings.TrimSpace(s.FullText()), Name: e.Name, Seconds: d.Seconds()})
				}
			}
		}
	})
	ginkgo.ReportBeforeSuite(func(r ginkgo.Report) {
		progress.total = r.PreRunStats.SpecsThatWillRun
	})
	// A bring-up or teardown that failed is not a spec's line: said here.
	ginkgo.ReportAfterSuite("failed suite nodes on the console", func(r ginkgo.Report) {
		for _, s := range r.SpecReports {
			// The verdict's own line ("FAILED: ...") comes last.
			if s.LeafNodeType != types.NodeTypeIt && s.LeafNodeText != verdictNode {
				reportEnded(s, "")
			}
		}
	})

	ginkgo.ReportAfterSuite("the provider's differences name specs", func(r ginkgo.Report) {
		c := scenarios.Cluster()
		if c == nil {
			return
		}
		var texts []string
		for _, s := range r.SpecReports {
			texts = append(texts, s.LeafNodeText)
		}
		if bad := scenarios.UnknownDifferences(scenarios.Differences(), texts); len(bad) > 0 {
			ginkgo.Fail(fmt.Sprintf("provider %s names differences for specs the suite does not have: %q; fix its differences in providers/%s/", c.Profile.Name, bad, c.Profile.Name))
		}
	})

	// What a spec needs (its needs-* labels) decides whether it runs,
	// before it starts; in a dry run, nothing runs and the reason is all.
	ginkgo.BeforeEach(scenarios.SkipUnmet)
	// A known difference must name a step its spec has.
	ginkgo.AfterEach(scenarios.CheckDifferencesReached)

	ginkgo.ReportBeforeEach(func(r ginkgo.SpecReport) {
		// Specs the label filter or focus left out come here too, already
		// skipped; they are not among those that will run.
		if r.State.Is(types.SpecStateSkipped | types.SpecStatePending) {
			return
		}
		progress.started++
		if sc, _ := ginkgo.GinkgoConfiguration(); sc.ParallelTotal > 1 {
			// The ginkgo CLI prints this with the spec's report: which
			// process ran it is what the full log has to add.
			fmt.Printf("%sstarted in process %d of %d: %s\n", lead, sc.ParallelProcess, sc.ParallelTotal, specLine(r))
		} else {
			fmt.Printf("%s[%d/%d] %s\n", lead, progress.started, progress.total, specLine(r))
		}
		marks = nil
		if run.logDir != "" {
			marks = reports.MarkLogs(run.logDir, excerptOf)
		}
	})

	// A component that crashed explains a spec's failure better than the
	// timeout it caused, so every spec ends by asking.
	ginkgo.AfterEach(func() {
		if c := scenarios.Cluster(); c != nil && c.Health != nil {
			framework.ExpectNoError(c.Health(), "cluster components")
		}
	})

	// A failed spec's JUnit body gets what the CCM and the cloud logged
	// while it ran: the first place to look after the failure message.
	// Added here rather than in an AfterEach, because only now is the
	// spec's outcome final (AfterEach and DeferCleanup failures included).
	// Redacted now, as plain text: in the JUnit file its newlines are
	// escaped, which redaction there handles less precisely.
	ginkgo.ReportAfterEach(func(r ginkgo.SpecReport) {
		var excerpt string
		if r.Failed() && marks != nil {
			// What the CCM was refused comes first: a missing RBAC rule
			// explains a timeout that its log may show only as retries.
			excerpt = refusalsSince(r.StartTime) + marks.Excerpt(30)
			excerpt = reports.RedactText(excerpt, run.secrets())
			ginkgo.AddReportEntry(reports.ExcerptEntry, reports.Excerpt(excerpt), ginkgo.ReportEntryVisibilityNever)
		}
		reportEnded(r, excerpt)
	})
}

// refusalsSince explains what the API server refused the CCM's
// ServiceAccount since a time, "" if nothing (or the runtime cannot
// tell).
func refusalsSince(since time.Time) string {
	c := scenarios.Cluster()
	if c == nil || c.Refusals == nil {
		return ""
	}
	user, rs, err := c.Refusals(since)
	if err != nil {
		return fmt.Sprintf("RBAC: could not read the API server's audit log: %v\n\n", err)
	}
	if len(rs) == 0 {
		return ""
	}
	return audit.Explain(user, rs) + "\n"
}

// apiUsesSince lists the deprecated and unserved APIs the CCM called
// since a time, "" if none (or the runtime cannot tell).
func apiUsesSince(since time.Time) string {
	c := scenarios.Cluster()
	if c == nil || c.APIUses == nil {
		return ""
	}
	user, us, err := c.APIUses(since)
	if err != nil {
		return fmt.Sprintf("APIs: could not read the API server's audit log: %v\n", err)
	}
	return audit.ExplainAPIUses(user, us)
}

// excerptOf picks the logs a failure quotes: the CCM's and the cloud's
// (and its audit log). The control plane's and kwok's are linked from the
// report; quoted, they would bury the CCM's lines.
func excerptOf(name string) bool {
	switch name {
	case "etcd.log", "kube-apiserver.log", "kube-controller-manager.log", "kwok.log", audit.LogName:
		return false
	}
	return true
}

// specLine is the spec's tags, then its text without them: "[zone] Nodes
// labels the zone and region the cloud reports".
func specLine(r ginkgo.SpecReport) string {
	text, tags := r.FullText(), ""
	for _, l := range r.Labels() {
		if scenarios.IsNeed(l) {
			continue // what the spec needs, not what it is about
		}
		text = strings.TrimSpace(strings.ReplaceAll(text, " ["+l+"]", ""))
		tags += "[" + l + "] "
	}
	return tags + text
}

// shared is what the first process of a parallel run tells the others
// of the cluster it brought up: they attach to it (options.Setup.Attach)
// and decide every skip on the first's features.
type shared struct {
	Name                    string
	Features                scenarios.Features
	InitialNodes            []string
	InitialNodesInitialized time.Duration
	// Specs is how many specs the run will run, for the console's count.
	Specs int
}

// The first process brings the cluster up and takes it down after every
// process is done (DeferCleanup in the first function of a
// SynchronizedBeforeSuite runs then); every other process attaches to it.
var _ = ginkgo.SynchronizedBeforeSuite(func(ctx context.Context) []byte {
	inBringUp = true
	defer func() { inBringUp = false }()
	setup := resolve()
	run.dir = setup.ArtifactsDir
	framework.ExpectNoError(reports.RemovePreviousJUnit(run.dir))
	// Nor a previous run's conformance report, which a dry run would not
	// replace: it would be checked against this run's JUnit.
	if err := os.Remove(filepath.Join(run.dir, conformance.File)); err != nil && !errors.Is(err, os.ErrNotExist) {
		framework.Failf("remove the previous run's %s: %v (remove it, or give the run a folder of its own)", conformance.File, err)
	}
	framework.ExpectNoError(reports.WriteStarted(run.dir, time.Now()))
	run.metadata = setup.Metadata()
	if *dryRun {
		run.metadata[reports.KeyDryRun] = "true: the cluster came up and no spec ran"
	}
	if sc, _ := ginkgo.GinkgoConfiguration(); sc.ParallelTotal > 1 {
		run.metadata[reports.KeyParallel] = strconv.Itoa(sc.ParallelTotal)
	}
	framework.ExpectNoError(reports.WriteMetadata(run.dir, run.metadata))
	name := "e2e-" + rand.String(6)
	of := "" // an existing cluster runs its own release
	if setup.Release != "" {
		of = " of Kubernetes " + setup.Release
	}
	if setup.Cluster == options.Existing {
		logf("judging the existing cluster of %s with provider %s (%s)", setup.Kubeconfig, setup.Profile.Name, setup.CCM())
	} else {
		logf("bringing up a %s cluster %s%s with provider %s (%s; %s) and %d nodes", setup.Cluster, name, of, setup.Profile.Name, setup.CCM(), setup.Skew, setup.Nodes)
	}
	// Not reaching "initialized" is [node-init]'s failure to report, not
	// the suite's; a claim the CCM does not serve would fail every spec
	// of it by timeout, and fails the bring-up instead. A failed Up
	// leaves nothing behind, and Ctrl-C during it makes it fail.
	c, err := setup.Up(ctx, name, options.KeepUninitialized())
	framework.ExpectNoError(err, "bring up the cluster")
	ginkgo.DeferCleanup(func(ctx context.Context) {
		framework.Logf("tearing down cluster %s", name)
		framework.ExpectNoError(setup.Down(ctx, name))
	}, ginkgo.NodeTimeout(scenarios.TeardownTimeout))
	if c.InitErr != nil {
		logf("initial nodes not initialized: %v", c.InitErr)
	} else if n := len(c.Steps); n > 0 {
		total := c.Steps[n-1].Duration // the runtime's "total" step
		p50, p99 := reports.Percentiles(c.NodeLatencies)
		logf("bring-up: control plane and %d nodes initialized by the CCM in %.2fs (%.2fs to registration, %.2fs more to initialization; per node p50 %.2fs, p99 %.2fs)",
			setup.Nodes, (total + c.Initialized).Seconds(), total.Seconds(), c.Initialized.Seconds(), p50.Seconds(), p99.Seconds())
		run.measured = append(run.measured,
			reports.Measurement{Spec: reports.BringUp, Name: "control plane and nodes registered", Seconds: total.Seconds()},
			reports.Measurement{Spec: reports.BringUp, Name: "node initialization p50", Seconds: p50.Seconds()},
			reports.Measurement{Spec: reports.BringUp, Name: "node initialization p99", Seconds: p99.Seconds()})
	}
	// Runs after the specs and the leak check, before the teardown: the
	// whole run's refusals, for the summary and refusals.txt.
	runStart := time.Now()
	ginkgo.DeferCleanup(func() {
		if text := refusalsSince(runStart); text != "" {
			run.refusals = text
			framework.ExpectNoError(os.WriteFile(filepath.Join(run.dir, audit.RefusalsFile), []byte(text), 0o644))
		}
		if text := apiUsesSince(runStart); text != "" {
			run.apiUses = text
			framework.ExpectNoError(os.WriteFile(filepath.Join(run.dir, audit.APIUsesFile), []byte(text), 0o644))
		}
	})
	run.metadata[reports.KeyKubernetesVersion] = c.KubernetesVersion
	run.metadata[reports.KeyFeatures] = c.Profile.FeaturesOf(c.Cloud).String()
	framework.ExpectNoError(reports.WriteMetadata(run.dir, run.metadata))
	cs := clientFor(c.Kubeconfig)
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err, "list the initial nodes")
	sh := shared{Name: name, InitialNodesInitialized: c.Initialized, Specs: progress.total}
	for _, n := range nodes.Items {
		// A lent node is the lifecycle specs' to stop and terminate, not
		// one of "every node" the others check.
		if c.LentNodes != nil && slices.Contains(c.LentNodes.Names(), n.Name) {
			continue
		}
		sh.InitialNodes = append(sh.InitialNodes, n.Name)
	}
	env := useCluster(setup, c.Cluster, sh)
	sh.Features = *env.Features
	writeBringUp(run.dir, c.Cluster, env)
	framework.Logf("kubeconfig: %s (kubectl --kubeconfig %s get nodes)", c.Kubeconfig, c.Kubeconfig)
	// Runs before the teardown registered above, once every process is
	// done: whatever the specs left in the cloud is a leak of the CCM's,
	// named here.
	ginkgo.DeferCleanup(func(ctx context.Context) {
		if c.Cloud != nil {
			framework.ExpectNoError(scenarios.CheckNoLeaks(ctx, cs, c.Cloud.Inspector(), env.Timeouts.LoadBalancer), "cloud resources at the end of the suite")
		}
	}, ginkgo.NodeTimeout(scenarios.TeardownTimeout))
	data, err := json.Marshal(sh)
	framework.ExpectNoError(err)
	return data
}, func(ctx context.Context, data []byte) {
	if ginkgo.GinkgoParallelProcess() == 1 {
		return // the first process set its cluster up above
	}
	var sh shared
	framework.ExpectNoError(json.Unmarshal(data, &sh), "read what the first process said of its cluster")
	progress.total = sh.Specs
	setup := resolve()
	run.dir = setup.ArtifactsDir
	c, err := setup.Attach(ctx, sh.Name)
	framework.ExpectNoError(err, "attach to cluster %s, which the first process brought up", sh.Name)
	framework.Logf("process %d attached to cluster %s", ginkgo.GinkgoParallelProcess(), sh.Name)
	useCluster(setup, c, sh)
}, ginkgo.NodeTimeout(scenarios.BringUpTimeout))

// logf is a bring-up line: in the log, and on the quiet console.
func logf(format string, args ...any) {
	framework.Logf(format, args...)
	consoleLogf(format, args...)
}

// resolve is the run's setup from its flags, alike in every process.
func resolve() *options.Setup {
	o := *opts
	o.Wait = scaled(scenarios.DefaultTimeouts.NodeInit)
	setup, err := o.Resolve(logf)
	framework.ExpectNoError(err)
	// A build, or a wait for one, may come in a spec too (the leader-
	// migration specs' managers, which make e2e builds in the background):
	// minutes that are not silent.
	setup.Binaries.Logf = func(format string, args ...any) {
		framework.Logf(format, args...)
		consoleAlways(format, args...)
	}
	return setup
}

// useCluster hands the specs of this process the cluster c, which it
// brought up or attached to, with sh's initial nodes (and, where given,
// the first process's features).
func useCluster(setup *options.Setup, c *cluster.Cluster, sh shared) *scenarios.Env {
	framework.TestContext.KubeConfig = c.Kubeconfig
	// With no kubeconfig at flag time the framework defaulted Host, which
	// would override the kubeconfig's server.
	framework.TestContext.Host = ""
	run.logDir = filepath.Dir(setup.LogDir(c.Name))
	run.secrets = setup.Secrets
	timeouts := scenarios.DefaultTimeouts
	timeouts.NodeInit = scaled(timeouts.NodeInit)
	timeouts.NodeLifecycle = scaled(timeouts.NodeLifecycle)
	timeouts.LoadBalancer = scaled(timeouts.LoadBalancer)
	timeouts.Drain = scaled(timeouts.Drain)
	env := &scenarios.Env{Cluster: c, Timeouts: timeouts, ArtifactsDir: run.dir, DryRun: *dryRun,
		InitialNodesInitialized: sh.InitialNodesInitialized, InitialNodes: sh.InitialNodes}
	if sh.Features.Provider != "" {
		env.Features = &sh.Features
	}
	env.LeaderMigration, env.CCMLeaderMigration, env.RollbackLeaderMigration, env.LeaderMigrationDefault = *migrationCfg, *ccmMigrationCfg, *rollbackCfg, *migrationDef
	if l, ok := setup.Runtime.(cluster.ControllerLister); ok {
		env.Controllers = func(ctx context.Context, m cluster.ManagerSpec) ([]string, error) {
			return l.Controllers(ctx, setup.Spec(c.Name), m)
		}
	}
	// Specs that need a control plane of their own get one from the same
	// setup, with their artifacts beside the main cluster's; in any
	// process, as the first's cluster could (its features say).
	if c.ControlPlane != nil || sh.Features.HA {
		env.NewCluster = func(ctx context.Context, managers []cluster.ManagerSpec) (*cluster.Cluster, func(context.Context) error, error) {
			name := "e2e-" + rand.String(6)
			framework.Logf("bringing up cluster %s with %d managers", name, len(managers))
			c, err := setup.Up(ctx, name, options.WithManagers(managers))
			if err != nil {
				return nil, nil, err
			}
			return c.Cluster, func(ctx context.Context) error {
				framework.Logf("tearing down cluster %s", name)
				return setup.Down(ctx, name)
			}, nil
		}
	}
	scenarios.SetEnv(env)
	return env
}

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
