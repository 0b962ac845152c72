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
	"sigs.k8s.io/ccm-harness/reports"
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
// Each has its own haPlane: nothing is shared between them.
var _ = framework.Describe("Leader migration", framework.WithLabel(labels.LeaderMigration), Needs(NeedHA), func() {
	it(specs.MigrateToCCM, within(MigrationTimeout), startFirst, Needs(needOf(labels.MigrationNeed(specs.MigrateToCCM))), func(ctx context.Context) {
		p := startHA(ctx, true, false, "upgrade")
		p.roll(ctx, p.releaseN1, "mid-upgrade")
		p.waitOwners(ctx, "the CCM", cluster.CloudControllerManager)
		p.finish(ctx, "after the upgrade", false)
	})

	it(specs.UpgradeCCM, within(MigrationTimeout), startFirst, Needs(needOf(labels.MigrationNeed(specs.UpgradeCCM))), func(ctx context.Context) {
		p := startHA(ctx, false, false, "ccm-upgrade")
		p.ccmUpgraded = true
		// The older CCM is the provider's of the minor before the one
		// under test where it pins one (providers.Profile.WithCCMVersion).
		ginkgo.By(fmt.Sprintf("rolling the CCMs from %s to %s", p.profile.OlderCCM, p.profile.CCM))
		ginkgo.AddReportEntry("CCM upgrade", fmt.Sprintf("%s to %s", p.profile.OlderCCM, p.profile.CCM))
		p.roll(ctx, func(member int) []cluster.ManagerSpec { return []cluster.ManagerSpec{p.ccm(member)} }, "mid-way through the CCM upgrade")
		p.waitOwners(ctx, "the CCM", cluster.CloudControllerManager)
		p.finish(ctx, "after the CCM upgrade", false)
	})

	it(specs.MigrateBack, within(MigrationTimeout), startFirst, Needs(needOf(labels.MigrationNeed(specs.MigrateBack))), func(ctx context.Context) {
		// From the CCM under test, as after the whole upgrade.
		p := startHA(ctx, false, true, "downgrade")
		p.roll(ctx, p.rollbackN, "mid-downgrade")
		p.waitOwners(ctx, "release N's kube-controller-manager", cluster.KubeControllerManager)
		// No CCM is left to initialize a node: it joins as release N's do.
		p.finish(ctx, "after the downgrade", true)
	})
})

// haMembers is how many members an HA control plane of the specs has.
const haMembers = 3

// haPlane is one leader-migration spec's HA control plane, as its members
// are replaced release by release, with the recorder watching them.
type haPlane struct {
	c       *cluster.Cluster
	cs      kubernetes.Interface
	rec     *migration.Recorder
	bounds  migration.Bounds
	profile providers.Profile
	// cfg is the managers' leader migration config; ccmCfg the CCMs', and
	// rollbackCfg release N's as the downgrade brings it back (each cfg
	// unless the suite's flags give another).
	cfg, ccmCfg, rollbackCfg migration.Config
	// watched are the controllers the specs wait for a manager to run:
	// the cloud controllers, and whatever else the configs migrate.
	watched []string
	// running are each member's managers.
	running map[int][]cluster.Manager
	// generation numbers the managers' names: a replaced manager's
	// successor has a name of its own.
	generation int
	// ccmUpgraded: a member's CCM is the one under test, not the older.
	ccmUpgraded bool
	// inTree: the provider has a release with it in-tree.
	inTree bool
	// timeline is the spec's folder of the recorder's timeline, under the
	// artifacts' leader-migration/.
	timeline string
}

func (p *haPlane) name(member int, role string) string {
	return fmt.Sprintf("m%d-%s-%d", member, role, p.generation)
}

// migrate sets a manager's leader migration: cfg's file, or, in the
// no-config mode, none and the manager's own default.
func migrate(spec cluster.ManagerSpec, cfg migration.Config) cluster.ManagerSpec {
	if env().LeaderMigrationDefault {
		spec.LeaderMigrationDefault = true
	} else {
		spec.LeaderMigration = cfg.YAML()
	}
	return spec
}

func (p *haPlane) releaseNWith(member int, cfg migration.Config) []cluster.ManagerSpec {
	return []cluster.ManagerSpec{migrate(cluster.ManagerSpec{Name: p.name(member, "kcm-intree"), Kind: cluster.KubeControllerManager,
		Binary: p.profile.InTreeKCM, CloudProvider: p.profile.CloudProvider}, cfg)}
}

// releaseN is a member of release N: kube-controller-manager with the
// provider in-tree.
func (p *haPlane) releaseN(member int) []cluster.ManagerSpec { return p.releaseNWith(member, p.cfg) }

// rollbackN is release N as the downgrade brings it back.
func (p *haPlane) rollbackN(member int) []cluster.ManagerSpec {
	return p.releaseNWith(member, p.rollbackCfg)
}

// ccm is the member's CCM: the older release until the CCMs are
// upgraded, where the profile has one.
func (p *haPlane) ccm(member int) cluster.ManagerSpec {
	spec := migrate(cluster.ManagerSpec{Name: p.name(member, "ccm"), Kind: cluster.CloudControllerManager}, p.ccmCfg)
	if !p.ccmUpgraded {
		spec.Binary = p.profile.OlderCCM
	}
	return spec
}

// releaseN1 is a member of release N+1: kube-controller-manager beside
// the CCM.
func (p *haPlane) releaseN1(member int) []cluster.ManagerSpec {
	return []cluster.ManagerSpec{{Name: p.name(member, "kcm"), Kind: cluster.KubeControllerManager}, p.ccm(member)}
}

// configs reads the leader migration configs and, where the runtime can
// list what each manager registers, checks the names they migrate: names
// no manager registers would leave their controllers migrated by nobody,
// said before any manager starts. The no-config mode tests what the
// managers' own defaults do, names and all.
func (p *haPlane) configs(ctx context.Context) {
	e := env()
	var err error
	p.cfg = migration.NewConfig(cloudControllers(p.profile)...)
	switch {
	case e.LeaderMigrationDefault:
		p.cfg = migration.ManagersDefault()
	case e.LeaderMigration != "":
		p.cfg, err = migration.ReadConfig(e.LeaderMigration)
		framework.ExpectNoError(err)
	}
	p.ccmCfg, p.rollbackCfg = p.cfg, p.cfg
	if e.CCMLeaderMigration != "" && !e.LeaderMigrationDefault {
		p.ccmCfg, err = migration.ReadConfig(e.CCMLeaderMigration)
		framework.ExpectNoError(err, "the CCMs' leader migration config")
	}
	if e.RollbackLeaderMigration != "" && !e.LeaderMigrationDefault {
		p.rollbackCfg, err = migration.ReadConfig(e.RollbackLeaderMigration)
		framework.ExpectNoError(err, "the rollback's leader migration config")
	}
	p.watched = cloudControllers(p.profile)
	if e.LeaderMigrationDefault || e.Controllers == nil {
		return
	}
	registered := map[string][]string{}
	managers := []cluster.ManagerSpec{p.releaseN1(1)[0], p.ccm(1), {Name: "ccm", Kind: cluster.CloudControllerManager}}
	if p.inTree {
		managers = append(managers, p.releaseN(1)[0])
	}
	for _, spec := range managers {
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
			label = p.profile.CCM.String()
		}
		registered[label] = ctrls
	}
	framework.ExpectNoError(p.cfg.CheckNames("the leader migration config", registered))
	framework.ExpectNoError(p.ccmCfg.CheckNames("the CCMs' leader migration config", registered))
	framework.ExpectNoError(p.rollbackCfg.CheckNames("the rollback's leader migration config", registered))
	p.watched = union(p.watched, p.cfg.Controllers(), p.ccmCfg.Controllers(), p.rollbackCfg.Controllers())
}

// startHA is a spec's first step: the configs, then an HA control plane
// of members in release N (fromN) or N+1 (with the older CCM unless
// ccmUpgraded), where every migrating controller runs, with a recorder
// watching its managers.
func startHA(ctx context.Context, fromN, ccmUpgraded bool, timeline string) *haPlane {
	e := env()
	p := &haPlane{profile: e.Cluster.Profile, running: map[int][]cluster.Manager{}, ccmUpgraded: ccmUpgraded, timeline: timeline}
	p.inTree = p.profile.InTreeKCM.Name != ""
	p.configs(ctx)

	// From release N+1, the cloud controllers are in CCMs already.
	first, startKind, from := p.releaseN1, cluster.CloudControllerManager, fmt.Sprintf("a kube-controller-manager and the older CCM (%s)", p.profile.OlderCCM)
	if ccmUpgraded {
		from = fmt.Sprintf("a kube-controller-manager and the CCM (%s)", p.profile.CCM)
	}
	if fromN {
		first, startKind, from = p.releaseN, cluster.KubeControllerManager, fmt.Sprintf("a kube-controller-manager with %s in-tree (%s)", p.profile.CloudProvider, p.profile.InTreeKCM)
	}
	var managers []cluster.ManagerSpec
	for i := 1; i <= haMembers; i++ {
		managers = append(managers, first(i)...)
	}
	ginkgo.By(fmt.Sprintf("bringing up an HA control plane of %d members, each %s", haMembers, from))
	c, down, err := e.NewCluster(ctx, managers)
	if down != nil {
		ginkgo.DeferCleanup(down, ginkgo.NodeTimeout(TeardownTimeout))
	}
	framework.ExpectNoError(err, "bring up the HA control plane")
	p.c, p.cs = c, clientOf(c.Kubeconfig)
	le := c.LeaderElection
	// Startup: a kube-controller-manager that just took the leases
	// starts some forty controllers before the migrated ones show, up
	// to ten seconds on a loaded 2-core machine.
	p.bounds = migration.BoundsFor(le.Lease, le.Retry, 10*time.Second)
	framework.Logf("leader election: lease %s, renew %s, retry %s; a controller may be unowned for %s", le.Lease, le.Renew, le.Retry, p.bounds.Unowned)

	p.rec = migration.NewRecorder(p.cs, 500*time.Millisecond, p.cfg.LeaderName, migratedOf(p.cfg, p.watched))
	// The managers come in the order asked: each member's in turn.
	// (Counting one per member left a member's second manager, its CCM,
	// to another member, and two CCMs never replaced.)
	perMember := len(managers) / haMembers
	for i, m := range c.Managers {
		member := i/perMember + 1
		p.running[member] = append(p.running[member], m)
		p.rec.Watch(m)
	}
	// The recorder outlives the spec's context.
	p.rec.Start(context.Background())
	ginkgo.DeferCleanup(func() {
		tl := p.rec.Stop()
		dir := filepath.Join(e.ArtifactsDir, reports.MigrationDir, p.timeline)
		framework.ExpectNoError(tl.Write(dir, p.bounds), "write the leader-migration timeline")
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
	// The first start is no handover, which the bound is for: managers
	// started cold on a loaded machine may take as long as a CCM may to
	// initialize a node (the AWS CCM started no controller in 36 s, its
	// bound twice over, beside make test's control group).
	waitOwners(ctx, p.rec, p.watched, max(p.bounds.Unowned*2, e.Timeouts.NodeInit), "the first members' "+startKind, startKind)
	return p
}

// waitOwners waits until every migrating controller runs in a manager of
// kind (any if empty), who.
func (p *haPlane) waitOwners(ctx context.Context, who, kind string) {
	waitOwners(ctx, p.rec, p.watched, p.bounds.Unowned*2, who, kind)
}

// replace stops a member's managers and starts its next release's, then
// waits until every migrating controller runs somewhere again.
func (p *haPlane) replace(ctx context.Context, member int, next func(int) []cluster.ManagerSpec) {
	p.generation++
	managers := next(member)
	kinds := map[string]bool{}
	for _, spec := range managers {
		kinds[spec.Kind] = true
	}
	// A member going back to release N loses its CCM too.
	if !kinds[cluster.CloudControllerManager] && managers[0].InTree() {
		kinds[cluster.CloudControllerManager] = true
	}
	var kept []cluster.Manager
	for _, m := range p.running[member] {
		if !kinds[m.Spec().Kind] {
			kept = append(kept, m)
			continue
		}
		ginkgo.By(fmt.Sprintf("member %d: stopping %s", member, m.Name()))
		p.rec.Mark("member %d: stop %s", member, m.Name())
		framework.ExpectNoError(m.Stop(ctx))
		p.rec.Forget(m.Name())
	}
	p.running[member] = kept
	for _, spec := range managers {
		m, err := p.c.ControlPlane.Start(ctx, spec)
		framework.ExpectNoError(err, "member %d: start %s", member, spec.Name)
		p.rec.Watch(m)
		p.rec.Mark("member %d: %s started (%s)", member, m.Name(), m.Spec().Binary)
		p.running[member] = append(p.running[member], m)
	}
	p.waitOwners(ctx, "any manager", "")
	// Each mixed-release state lasts a while, as between real member
	// replacements, so the recorder sees it many times over.
	time.Sleep(soak)
}

// order puts the member whose manager runs the migrated controllers
// last, as an operator replaces standbys first: the controllers then
// move once, and the members in between run both releases side by
// side, where a conflict would show.
func (p *haPlane) order() []int {
	var out []int
	leader := 0
	for i := 1; i <= haMembers; i++ {
		for _, m := range p.running[i] {
			if slices.Contains(p.rec.Owners(p.watched[0]), m.Name()) {
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
func (p *haPlane) roll(ctx context.Context, next func(int) []cluster.ManagerSpec, midway string) {
	for k, i := range p.order() {
		p.replace(ctx, i, next)
		if k == 1 {
			expectServed(ctx, p.c, p.cs, p.rec, midway, false)
		}
	}
}

// finish checks the end state: the controllers served (when), no
// violation in the timeline, the control plane healthy.
func (p *haPlane) finish(ctx context.Context, when string, inTree bool) {
	expectServed(ctx, p.c, p.cs, p.rec, when, inTree)
	expectNoViolations(p.rec, p.bounds, p.timeline)
	framework.ExpectNoError(p.c.Health(), "HA control plane")
}

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
