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
	"time"

	"github.com/onsi/ginkgo/v2"
	"k8s.io/kubernetes/test/e2e/framework"

	"sigs.k8s.io/ccm-harness/specs"
)

// Every spec and suite node has a timeout of its own, so a wait that hangs
// (a lock, a watch that never says, a process that never answers) fails in
// minutes with Ginkgo's report of where it stood, never after the suite's
// one hour. Each is well above what its waits add up to on a loaded
// 2-core machine; the waits' own timeouts (Timeouts) say first what they
// waited for.
const (
	// SpecTimeout bounds one spec: its waits are each at most
	// Timeouts.NodeLifecycle (3 minutes), a few in a row.
	SpecTimeout = 12 * time.Minute
	// MigrationTimeout bounds a leader-migration spec or its setup: HA
	// control planes rolled member by member, and on a cold machine a wait
	// for make e2e's background build of their managers (7 minutes).
	MigrationTimeout = 25 * time.Minute
	// BringUpTimeout bounds the suite's bring-up, which may build the
	// cluster's components when the suite runs without make (go test).
	BringUpTimeout = 30 * time.Minute
	// TeardownTimeout bounds a cluster's teardown and the checks after
	// the specs.
	TeardownTimeout = 5 * time.Minute
)

// Long specs start first in a parallel run (ginkgo -p --randomize-all),
// so that it lasts about as long as its longest spec rather than that
// plus whatever was left when it started: the leader-migration specs,
// which bring up HA control planes and roll them member by member, then
// those that wait out a node's lifecycle or the route controller's
// period.
var (
	startFirst = ginkgo.SpecPriority(2)
	startEarly = ginkgo.SpecPriority(1)
)

// within is a spec's timeout where SpecTimeout does not suit it.
type within time.Duration

// it declares the spec id names: framework.It with its text, its tag and
// its capability as specs.All has them, and its timeout (SpecTimeout, or
// a within among args). The body takes the spec's context, which ends at
// the timeout.
func it(id specs.ID, args ...any) bool {
	ginkgo.GinkgoHelper()
	spec := specs.Get(id)
	timeout := SpecTimeout
	// The tag first: the e2e framework appends "[tag]" to the text in the
	// order of the arguments.
	rest := []any{framework.WithLabel(spec.Tag)}
	if spec.Capability != "" {
		rest = append(rest, Needs(Claims(spec.Capability)))
	}
	if spec.Feature != "" {
		rest = append(rest, Needs(Claims(spec.Feature)))
	}
	for _, a := range args {
		if w, ok := a.(within); ok {
			timeout = time.Duration(w)
			continue
		}
		rest = append(rest, a)
	}
	if _, ok := rest[len(rest)-1].(func(context.Context)); !ok {
		panic("scenarios: spec " + spec.Text + ": its body must take the spec's context, which its timeout ends")
	}
	return framework.It(append([]any{spec.Text, ginkgo.SpecTimeout(timeout)}, rest...)...)
}
