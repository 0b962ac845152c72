package scenarios

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/cloud-provider/names"
	"k8s.io/kubernetes/test/e2e/framework"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/nodewait"
	"sigs.k8s.io/ccm-harness/migration"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/scenarios/labels"
	"sigs.k8s.io/ccm-harness/specs"
)

// The HA control plane moves its cloud controllers from kube-controller-
// manager (release N, the provider in-tree) to the CCM (release N+1:
// kube-controller-manager with --cloud-provider=external beside the CCM)
// one member at a time, as kubernetes.io's "Migrate Replicated Control
// Plane To Use Cloud Controller Manager" describes, and back. A recorder
// samples every manager twice a second; the timeline must show no
// controller in two processes at once, none unowned for longer than the
// lease settings allow, and the migration lease held by a main-lease
// holder.
//
// A provider with no in-tree release but a CCM of the previous minor starts
// from release N+1's members, each kube-controller-manager beside that CCM,
// and runs only the CCM upgrade: the same checks over the roll a user of
// such a provider makes.
//
// Release N+1's kube-controller-manager runs without leader migration:
// since v1.32 it has no cloud controllers to migrate, yet with migration on
// its main-lease holder would contend for the migration lease, and while
// it held it no CCM could run the migrated controllers.
// soak is how long each step of a rolling upgrade is left to run.
const soak = 3 * time.Second

// Each spec brings up an HA control plane of its own in the release it
// starts from, so that the three run side by side in a parallel run:
// [upgrade] from release N, the CCM upgrade from release N+1 with the
// older CCM, and [downgrade] from release N+1 with the CCM under test.
var _ = framework.Describe("Leader migration", framework.WithLabel(labels.LeaderMigration), Needs(NeedHA), func() {
	const members = 3
	var (
		c                        *cluster.Cluster
		cs                       kubernetes.Interface
		rec                      *migration.Recorder
		bounds                   migration.Bounds
		cfg, ccmCfg, rollbackCfg migration.Config
		profile                  providers.Profile
		// watched are the controllers the specs wait for a manager to run:
		// the cloud controllers, and whatever else the config migrates.
		watched     []string
		running     = map[int][]cluster.Manager{}
		generation  int
		ccmUpgraded bool
		// inTree: the provider has a release with it in-tree.
		inTree bool
		// timeline is the spec's folder of the recorder's timeline, under
		// the artifacts' leader-migration/.
		timeline string
	)
	name := func(member int, role string) string { return fmt.Sprintf("m%d-%s-%d", member, role, generation) }
	// migrate sets a manager's leader migration: cfg's file, or, in the
	// no-config mode, none and the manager's own default.
	migrate := func(spec cluster.ManagerSpec, cfg migration.Config) cluster.ManagerSpec {
		if env().LeaderMigrationDefault {
			spec.LeaderMigrationDefault = true
		} else {
			spec.LeaderMigration = cfg.YAML()
		}
		return spec
	}
	releaseNWith := func(c *migration.Config) func(member int) []cluster.ManagerSpec {
		return func(member int) []cluster.ManagerSpec {
			return []cluster.ManagerSpec{migrate(cluster.ManagerSpec{Name: name(member, "kcm-intree"), Kind: cluster.KubeControllerManager, Binary: profile.InTreeKCM,
				CloudProvider: profile.CloudProvider}, *c)}
		}
	}
	releaseN := releaseNWith(&cfg)
	// rollbackN is release N as the downgrade brings it back.
	rollbackN := releaseNWith(&rollbackCfg)
	// ccm is the member's CCM: the older release until the CCMs are
	// upgraded, where the profile has one.
	ccm := func(member int) cluster.ManagerSpec {
		spec := migrate(cluster.ManagerSpec{Name: name(member, "ccm"), Kind: cluster.CloudControllerManager}, ccmCfg)
		if !ccmUpgraded {
			spec.Binary = profile.OlderCCM
		}
		return spec
	}
	releaseN1 := func(member int) []cluster.ManagerSpec {
		return []cluster.ManagerSpec{{Name: name(member, "kcm"), Kind: cluster.KubeControllerManager}, ccm(member)}
	}

	// start is a spec's first step: the configs, then an HA control plane
	// of members in release N (fromN) or N+1 (with the older CCM unless
	// ccmUpgraded), where every migrating controller runs, with a recorder
	// watching its managers.
	start := func(ctx context.Context, fromN bool, folder string) {
		e := env()
		generation, running, timeline = 0, map[int][]cluster.Manager{}, folder
		profile = e.Cluster.Profile
		var err error
		inTree = profile.InTreeKCM.Name != ""
		cfg = migration.NewConfig(cloudControllers(profile)...)
		switch {
		case e.LeaderMigrationDefault:
			cfg = migration.ManagersDefault()
		case e.LeaderMigration != "":
			cfg, err = migration.ReadConfig(e.LeaderMigration)
			framework.ExpectNoError(err)
		}
		ccmCfg, rollbackCfg = cfg, cfg
		if e.CCMLeaderMigration != "" && !e.LeaderMigrationDefault {
			ccmCfg, err = migration.ReadConfig(e.CCMLeaderMigration)
			framework.ExpectNoError(err, "the CCMs' leader migration config")
		}
		if e.RollbackLeaderMigration != "" && !e.LeaderMigrationDefault {
			rollbackCfg, err = migration.ReadConfig(e.RollbackLeaderMigration)
			framework.ExpectNoError(err, "the rollback's leader migration config")
		}
		// Names no manager registers would leave their controllers
		// migrated by nobody; said before any manager starts. The no-config
		// mode tests what the managers' own defaults do, names and all.
		watched = cloudControllers(profile)
		if !e.LeaderMigrationDefault && e.Controllers != nil {
			registered := map[string][]string{}
			specs := []cluster.ManagerSpec{releaseN1(1)[0], ccm(1), {Name: "ccm", Kind: cluster.CloudControllerManager}}
			if inTree {
				specs = append(specs, releaseN(1)[0])
			}
			for _, spec := range specs {
				ctrls, err := e.Controllers(ctx, spec)
				framework.ExpectNoError(err, "the controllers the managers register")
				label := spec.Binary.String()
				switch {
				case spec.Binary.Name != "":
				case spec.Kind == cluster.KubeControllerManager:
					// The control plane's release, as the runtime runs it.
					label = binaries.KubeControllerManager.String()
					if kcm, err := binaries.KubeControllerManager.At(e.Cluster.KubernetesVersion); err == nil {
						label = kcm.String()
					}
				default:
					label = profile.CCM.String()
				}
				registered[label] = ctrls
			}
			framework.ExpectNoError(cfg.CheckNames("the leader migration config", registered))
			framework.ExpectNoError(ccmCfg.CheckNames("the CCMs' leader migration config", registered))
			framework.ExpectNoError(rollbackCfg.CheckNames("the rollback's leader migration config", registered))
			watched = union(watched, cfg.Controllers(), ccmCfg.Controllers(), rollbackCfg.Controllers())
		}

		// From release N+1, the cloud controllers are in CCMs already.
		first, startKind, from := releaseN1, cluster.CloudControllerManager, fmt.Sprintf("a kube-controller-manager and the older CCM (%s)", profile.OlderCCM)
		if ccmUpgraded {
			from = fmt.Sprintf("a kube-controller-manager and the CCM (%s)", profile.CCM)
		}
		if fromN {
			first, startKind, from = releaseN, cluster.KubeControllerManager, fmt.Sprintf("a kube-controller-manager with %s in-tree (%s)", profile.CloudProvider, profile.InTreeKCM)
		}
		var specs []cluster.ManagerSpec
		for i := 1; i <= members; i++ {
			specs = append(specs, first(i)...)
		}
		ginkgo.By(fmt.Sprintf("bringing up an HA control plane of %d members, each %s", members, from))
		var down func(context.Context) error
		c, down, err = e.NewCluster(ctx, specs)
		if down != nil {
			ginkgo.DeferCleanup(down, ginkgo.NodeTimeout(TeardownTimeout))
		}
		framework.ExpectNoError(err, "bring up the HA control plane")
		cs = clientOf(c.Kubeconfig)
		le := c.LeaderElection
		// Startup: a kube-controller-manager that just took the leases
		// starts some forty controllers before the migrated ones show, up
		// to ten seconds on a loaded 2-core machine.
		bounds = migration.BoundsFor(le.Lease, le.Retry, 10*time.Second)
		framework.Logf("leader election: lease %s, renew %s, retry %s; a controller may be unowned for %s", le.Lease, le.Renew, le.Retry, bounds.Unowned)

		rec = migration.NewRecorder(cs, 500*time.Millisecond, cfg.LeaderName, migratedOf(cfg, watched))
		// The managers come in the order of specs: each member's in turn.
		// (Counting one per member left a member's second manager, its
		// CCM, to another member, and two CCMs never replaced.)
		perMember := len(specs) / members
		for i, m := range c.Managers {
			member := i/perMember + 1
			running[member] = append(running[member], m)
			rec.Watch(m)
		}
		// The recorder outlives the spec's context.
		rec.Start(context.Background())
		ginkgo.DeferCleanup(func() {
			tl := rec.Stop()
			dir := filepath.Join(e.ArtifactsDir, "leader-migration", timeline)
			framework.ExpectNoError(tl.Write(dir, bounds), "write the leader-migration timeline")
			framework.Logf("leader-migration timeline: %s", filepath.Join(dir, "timeline.svg"))
		})

		var opts []cluster.NodeOption
		if fromN {
			ginkgo.By("registering nodes as kubelets with the provider in-tree do")
			opts = append(opts, cluster.WithInTreeCloud())
		}
		for i := 1; i <= 2; i++ {
			_, err := c.Nodes.Add(ctx, fmt.Sprintf("lm-node-%d", i), opts...)
			framework.ExpectNoError(err)
		}
		waitOwners(ctx, rec, watched, bounds.Unowned*2, "the first members' "+startKind, startKind)
	}

	// replace stops a member's managers and starts its next release's, then
	// waits until every migrating controller runs somewhere again.
	replace := func(ctx context.Context, member int, next func(int) []cluster.ManagerSpec) {
		generation++
		specs := next(member)
		kinds := map[string]bool{}
		for _, spec := range specs {
			kinds[spec.Kind] = true
		}
		// A member going back to release N loses its CCM too.
		if !kinds[cluster.CloudControllerManager] && specs[0].InTree() {
			kinds[cluster.CloudControllerManager] = true
		}
		var kept []cluster.Manager
		for _, m := range running[member] {
			if !kinds[m.Spec().Kind] {
				kept = append(kept, m)
				continue
			}
			ginkgo.By(fmt.Sprintf("member %d: stopping %s", member, m.Name()))
			rec.Mark("member %d: stop %s", member, m.Name())
			framework.ExpectNoError(m.Stop(ctx))
			rec.Forget(m.Name())
		}
		running[member] = kept
		for _, spec := range specs {
			m, err := c.ControlPlane.Start(ctx, spec)
			framework.ExpectNoError(err, "member %d: start %s", member, spec.Name)
			rec.Watch(m)
			rec.Mark("member %d: %s started (%s)", member, m.Name(), m.Spec().Binary)
			running[member] = append(running[member], m)
		}
		waitOwners(ctx, rec, watched, bounds.Unowned*2, "any manager", "")
		// Each mixed-release state lasts a while, as between real member
		// replacements, so the recorder sees it many times over.
		time.Sleep(soak)
	}

	// order puts the member whose manager runs the migrated controllers
	// last, as an operator replaces standbys first: the controllers then
	// move once, and the members in between run both releases side by
	// side, where a conflict would show.
	order := func() []int {
		var out []int
		leader := 0
		for i := 1; i <= members; i++ {
			for _, m := range running[i] {
				if slices.Contains(rec.Owners(watched[0]), m.Name()) {
					leader = i
				}
			}
			if leader != i {
				out = append(out, i)
			}
		}
		if leader != 0 {
			out = append(out, leader)
		}
		return out
	}

	// roll replaces every member with next, the one running the migrated
	// controllers last, and checks they are served half-way through.
	roll := func(ctx context.Context, next func(int) []cluster.ManagerSpec, midway string) {
		for k, i := range order() {
			replace(ctx, i, next)
			if k == 1 {
				expectServed(ctx, c, cs, rec, midway, false)
			}
		}
	}

	upgrade := func(ctx context.Context) {
		roll(ctx, releaseN1, "mid-upgrade")
		waitOwners(ctx, rec, watched, bounds.Unowned*2, "the CCM", cluster.CloudControllerManager)
	}

	it(specs.MigrateToCCM, within(MigrationTimeout), startFirst, Needs(needOf(labels.MigrationNeed(specs.MigrateToCCM))), func(ctx context.Context) {
		ccmUpgraded = false
		start(ctx, true, "upgrade")
		upgrade(ctx)
		expectServed(ctx, c, cs, rec, "after the upgrade", false)
		expectNoViolations(rec, bounds, timeline)
		framework.ExpectNoError(c.Health(), "HA control plane")
	})

	it(specs.UpgradeCCM, within(MigrationTimeout), startFirst, Needs(needOf(labels.MigrationNeed(specs.UpgradeCCM))), func(ctx context.Context) {
		ccmUpgraded = false
		start(ctx, false, "ccm-upgrade")
		ccmUpgraded = true
		// The older CCM is the provider's of the minor before the one
		// under test where it pins one (providers.Profile.WithCCMVersion).
		ginkgo.By(fmt.Sprintf("rolling the CCMs from %s to %s", profile.OlderCCM, profile.CCM))
		ginkgo.AddReportEntry("CCM upgrade", fmt.Sprintf("%s to %s", profile.OlderCCM, profile.CCM))
		roll(ctx, func(member int) []cluster.ManagerSpec { return []cluster.ManagerSpec{ccm(member)} }, "mid-way through the CCM upgrade")
		waitOwners(ctx, rec, watched, bounds.Unowned*2, "the CCM", cluster.CloudControllerManager)
		expectServed(ctx, c, cs, rec, "after the CCM upgrade", false)
		expectNoViolations(rec, bounds, timeline)
		framework.ExpectNoError(c.Health(), "HA control plane")
	})

	it(specs.MigrateBack, within(MigrationTimeout), startFirst, Needs(needOf(labels.MigrationNeed(specs.MigrateBack))), func(ctx context.Context) {
		// From the CCM under test, as after the whole upgrade.
		ccmUpgraded = true
		start(ctx, false, "downgrade")
		roll(ctx, rollbackN, "mid-downgrade")
		waitOwners(ctx, rec, watched, bounds.Unowned*2, "release N's kube-controller-manager", cluster.KubeControllerManager)
		// No CCM is left to initialize a node: it joins as release N's do.
		expectServed(ctx, c, cs, rec, "after the downgrade", true)
		expectNoViolations(rec, bounds, timeline)
		framework.ExpectNoError(c.Health(), "HA control plane")
	})
})

// waitOwners waits for a sample, taken after the call, in which every
// migrating controller runs in a process of kind (any kind if empty).
func waitOwners(ctx context.Context, rec *migration.Recorder, controllers []string, timeout time.Duration, what, kind string) {
	ginkgo.By("waiting for " + what + " to run " + strings.Join(controllers, ", "))
	after := rec.Timeline()
	from := int64(0)
	if n := len(after.Samples); n > 0 {
		from = after.Samples[n-1].AtMs
	}
	var last string
	err := WaitForCloud(ctx, timeout, what+" to run every migrating controller", func(ctx context.Context) error {
		tl := rec.Timeline()
		n := len(tl.Samples)
		if n == 0 || tl.Samples[n-1].AtMs <= from {
			return fmt.Errorf("no sample yet")
		}
		s := tl.Samples[n-1]
		kinds := map[string]string{}
		for _, p := range tl.Processes {
			kinds[p.Name] = p.Kind
		}
		var missing []string
		for _, ctrl := range controllers {
			ok := false
			for p, ctrls := range s.Running {
				if slices.Contains(ctrls, ctrl) && (kind == "" || kinds[p] == kind) {
					ok = true
				}
			}
			if !ok {
				missing = append(missing, ctrl)
			}
		}
		if len(missing) > 0 {
			last = fmt.Sprintf("expected %s run by %s, actual: not (processes then: %v)", strings.Join(missing, ", "), what, s.Running)
			return fmt.Errorf("%s", last)
		}
		return nil
	})
	framework.ExpectNoError(err)
}

// expectServed checks that the controllers do their job whoever owns them
// now: a LoadBalancer Service is provisioned and a joining node gets its
// route, and is initialized by the CCM (or, inTree, needs no CCM).
func expectServed(ctx context.Context, c *cluster.Cluster, cs kubernetes.Interface, rec *migration.Recorder, when string, inTree bool) {
	p := c.Profile
	ginkgo.By("checking the cloud controllers serve " + when)
	for _, ctrl := range cloudControllers(p) {
		framework.Logf("%s: %s run by %v", when, ctrl, rec.Owners(ctrl))
		ginkgo.AddReportEntry(fmt.Sprintf("%s: %s run by", when, ctrl), strings.Join(rec.Owners(ctrl), ", "))
	}
	if p.Has(providers.LoadBalancers) {
		expectLoadBalancer(ctx, c, cs, when)
	}
	node := "lm-" + rand.String(5)
	var opts []cluster.NodeOption
	var checks []nodewait.Check
	what := "node " + node
	if p.Has(providers.Instances) || inTree {
		checks = append(checks, nodewait.Initialized)
		what += " initialized"
	}
	if p.Has(providers.Routes) {
		checks = append(checks, RouteCreated)
		what += " with its route"
	}
	if inTree {
		opts = append(opts, cluster.WithInTreeCloud())
	}
	ginkgo.By("adding node " + node)
	_, err := c.Nodes.Add(ctx, node, opts...)
	framework.ExpectNoError(err, "add node %s", node)
	if len(checks) > 0 {
		framework.ExpectNoError(nodewait.For(ctx, cs, env().Timeouts.NodeInit, what+" "+when, []string{node}, All(checks...)))
	}
}

// cloudControllers are the cloud controllers a CCM runs for what its
// provider claims: one that claims no load balancers starts no
// service-lb-controller (k8s.io/cloud-provider leaves it out), and the
// specs do not wait for one.
func cloudControllers(p providers.Profile) []string {
	var out []string
	for _, cc := range []struct {
		claim providers.Capability
		name  string
	}{
		{providers.LoadBalancers, names.ServiceLBController},
		{providers.Routes, names.NodeRouteController},
		{providers.NodeLifecycle, names.CloudNodeLifecycleController},
	} {
		if p.Has(cc.claim) {
			out = append(out, cc.name)
		}
	}
	return out
}

// expectLoadBalancer checks a new LoadBalancer Service gets its ingress
// and its cloud load balancer.
func expectLoadBalancer(ctx context.Context, c *cluster.Cluster, cs kubernetes.Interface, when string) {
	s := create(ctx, cs, newService("default", tcp(80)))
	s = waitService(ctx, cs, s, "an ingress IP "+when, HasIngress)
	if insp, ok := c.Cloud.Inspector().(providers.LoadBalancerInspector); ok {
		framework.ExpectNoError(WaitForCloud(ctx, env().Timeouts.LoadBalancer, "the cloud load balancer of Service "+s.Name, func(ctx context.Context) error {
			lbs, err := insp.LoadBalancers(ctx)
			if err != nil {
				return err
			}
			_, err = LoadBalancerOf(lbs, s)
			return err
		}))
	}
}

// union is the names of lists, each once, in order of first appearance.
func union(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, n := range l {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// migratedOf are the controllers of cfg that a manager here runs: those
// the migration lease governs. A name no manager registers (the managers'
// own default may carry older names) governs nothing; its controller runs
// unmigrated, which the recorder sees as a conflict.
func migratedOf(cfg migration.Config, watched []string) []string {
	var out []string
	for _, n := range cfg.Controllers() {
		if slices.Contains(watched, n) {
			out = append(out, n)
		}
	}
	return out
}

func expectNoViolations(rec *migration.Recorder, b migration.Bounds, folder string) {
	v := rec.Timeline().Check(b)
	if len(v) == 0 {
		return
	}
	lines := make([]string, len(v))
	for i, x := range v {
		lines[i] = "  " + x.String()
	}
	framework.Failf("the timeline breaks leader migration's invariants (leader-migration/%s/timeline.svg):\n%s", folder, strings.Join(lines, "\n"))
}

func clientOf(kubeconfig string) kubernetes.Interface {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	framework.ExpectNoError(err)
	cs, err := kubernetes.NewForConfig(cfg)
	framework.ExpectNoError(err)
	return cs
}
