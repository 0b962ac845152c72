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
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/test/e2e/framework"

	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/specs"
)

// KnownDifferenceEntry names the report entry of a step that failed as
// its CCM's known difference says: JUnit carries it as a property of the
// spec, the summary and the report show it with its evidence.
const KnownDifferenceEntry = "known difference"

// differenceOf is the CCM's known difference at step of spec, or nil.
func differenceOf(spec specs.ID, step providers.Step) *providers.Difference {
	for _, d := range Differences() {
		if d.Spec == spec && d.Step == step {
			return &d
		}
	}
	return nil
}

// expectedSteps says, for a dry run, which steps of spec are expected to
// fail as the CCM's differences say; "" for none.
func expectedSteps(spec specs.ID) string {
	var steps []string
	for _, d := range Differences() {
		if d.Spec == spec {
			steps = append(steps, string(d.Step))
		}
	}
	if len(steps) == 0 {
		return ""
	}
	return fmt.Sprintf(" (step %s expected to fail: a known difference of its CCM)", strings.Join(steps, ", "))
}

// reached are the steps the running spec has reached, so that a
// difference naming a step its spec does not have is caught.
var reached struct {
	sync.Mutex
	steps []providers.Step
}

// step checks one step of the current spec: check returns what is wrong,
// or nil. Without a known difference for it, a failure fails the spec.
// With one, the step must fail, and as the difference says: its failure
// (or a warning event of the CCM in the spec's namespace) must show the
// difference's text; the failure is then reported as a known difference
// with its evidence and the spec goes on. A step that passes fails the
// spec: the difference no longer holds, unless the difference says it
// races (Difference.Race), when the pass is the CCM winning. step reports whether the step
// passed, so that a spec stops where what follows needs it.
//
// While a difference is expected, the wait ends early on a warning event
// that shows it, or once the CCM reported the Service's load balancer
// ensured or updated and the check still failed Settle later: the
// failure is then the CCM's answer, not a slow CCM's.
func step(ctx context.Context, f *framework.Framework, name providers.Step, check func(ctx context.Context) error) bool {
	ginkgo.GinkgoHelper()
	spec := idOf(ginkgo.CurrentSpecReport().LeafNodeText)
	reached.Lock()
	reached.steps = append(reached.steps, name)
	reached.Unlock()
	d := differenceOf(spec, name)
	if d == nil {
		ginkgo.By("checking step " + string(name))
		framework.ExpectNoError(check(ctx), "step %s", name)
		return true
	}
	provider := env().Cluster.Profile.Name
	ginkgo.By(fmt.Sprintf("checking step %s, which provider %s's CCM is known to fail: %q", name, provider, d.Shows))
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := watchForAnswer(sctx, cancel, f.ClientSet, f.Namespace.Name, d.Shows, env().Timeouts.Settle)
	err := check(sctx)
	stop()
	// The wait says why it stopped early where it can (watchwait);
	// WaitForCloud says only that it was cancelled.
	if cause := context.Cause(sctx); err != nil && sctx.Err() != nil && ctx.Err() == nil && !errors.Is(cause, context.Canceled) && !strings.Contains(err.Error(), cause.Error()) {
		err = fmt.Errorf("%w; %v", cause, err)
	}
	switch {
	case err == nil && d.Race != "":
		framework.Logf("step %s passed: provider %s's known difference (%q) did not show this run; it races: %s", name, provider, d.Shows, d.Race)
		return true
	case err == nil:
		framework.Failf("difference no longer holds: step %s of this spec passed, which provider %s's CCM is known to fail (%q: %s); remove the difference from its profile",
			name, provider, d.Shows, d.Evidence)
	case !strings.Contains(err.Error(), d.Shows):
		framework.Failf("step %s failed, and not as provider %s's known difference says (its failure shows %q): %v", name, provider, d.Shows, err)
	}
	framework.Logf("step %s failed as provider %s's known difference says: %v", name, provider, err)
	ginkgo.AddReportEntry(KnownDifferenceEntry, fmt.Sprintf("step %s: %s\nfailure: %s", name, d.Evidence, err), ginkgo.ReportEntryVisibilityFailureOrVerbose)
	return false
}

// watchForAnswer polls the namespace's events until the CCM has answered:
// a warning event showing shows ends the step at once; an event that the
// Service's load balancer was ensured or updated, newer than the step,
// ends it settle later. stop ends the polling.
func watchForAnswer(ctx context.Context, end context.CancelCauseFunc, cs kubernetes.Interface, ns, shows string, settle time.Duration) (stop func()) {
	before := map[string]int32{}
	seen := func(e v1.Event) bool { c, ok := before[e.Name]; return !ok || e.Count > c }
	if evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, e := range evs.Items {
			before[e.Name] = e.Count
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var settled <-chan time.Time
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-settled:
				end(fmt.Errorf("the CCM reported the load balancer ensured, and %s later the step still failed", settle))
				return
			case <-tick.C:
			}
			evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			for _, e := range evs.Items {
				switch {
				// The namespace is the spec's own: a warning that shows
				// the difference is the CCM's answer whenever it came.
				case e.Type == v1.EventTypeWarning && strings.Contains(e.Message, shows):
					end(fmt.Errorf("%s %s/%s: the CCM's warning event %s: %s", e.InvolvedObject.Kind, ns, e.InvolvedObject.Name, e.Reason, e.Message))
					return
				case settled == nil && seen(e) && slices.Contains([]string{"EnsuredLoadBalancer", "UpdatedLoadBalancer"}, e.Reason):
					settled = time.After(settle)
				}
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// CheckDifferencesReached fails a spec that passed without reaching a
// step its CCM's differences name: the difference names a step the spec
// does not have. The suite calls it after every spec.
func CheckDifferencesReached() {
	reached.Lock()
	steps := reached.steps
	reached.steps = nil
	reached.Unlock()
	r := ginkgo.CurrentSpecReport()
	if current == nil || r.Failed() || r.State.Is(types.SpecStateSkipped) {
		return
	}
	spec := idOf(r.LeafNodeText)
	for _, d := range Differences() {
		if d.Spec == spec && !slices.Contains(steps, d.Step) {
			framework.Failf("provider %s's known difference names step %s of this spec, a step the spec does not have (it checked %v); fix the difference", env().Cluster.Profile.Name, d.Step, steps)
		}
	}
}
