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

// Package labels holds the Ginkgo labels a door reads before the suite
// runs, apart from the specs (whose package brings the e2e framework):
// the leader-migration specs', so that `ccm-harness binaries` builds the
// provider's release-N managers, minutes of building, only when a label
// filter selects a spec that runs them.
package labels

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	ginkgotypes "github.com/onsi/ginkgo/v2/types"

	"sigs.k8s.io/ccm-harness/specs"
)

const (
	// LeaderMigration labels the leader-migration container.
	LeaderMigration = "leader-migration"
	// NeedHA, NeedInTreeKCM and NeedOlderCCM are the scenarios' needs of
	// the same names (scenarios.NeedHA, ...).
	NeedHA        = "needs-ha-control-plane"
	NeedInTreeKCM = "needs-in-tree-kcm"
	NeedOlderCCM  = "needs-older-ccm"
)

// migrationNeeds are each leader-migration spec's own need, beside the
// container's (LeaderMigration, NeedHA) and its tag (specs.All's).
var migrationNeeds = map[specs.ID]string{specs.MigrateToCCM: NeedInTreeKCM, specs.UpgradeCCM: NeedOlderCCM, specs.MigrateBack: NeedInTreeKCM}

// MigrationNeed is the need of the leader-migration spec id; the spec is
// declared with it.
func MigrationNeed(id specs.ID) string {
	need, ok := migrationNeeds[id]
	if !ok {
		panic(fmt.Sprintf("labels: %s is no leader-migration spec", id))
	}
	return need
}

// markup is Ginkgo's formatter's colour markup, {{red}} and the like.
var markup = regexp.MustCompile(`\{\{[a-z/-]*\}\}`)

// MigrationSelected says whether a Ginkgo label filter selects any
// leader-migration spec. e2e/controls checks it against the suite's own
// dry run.
func MigrationSelected(filter string) (bool, error) {
	match, err := ginkgotypes.ParseLabelFilter(filter)
	var ge ginkgotypes.GinkgoError
	if errors.As(err, &ge) {
		// Ginkgo's own text is a coloured block; the reason is one line.
		return false, fmt.Errorf("label filter %q: %s: %s (the syntax: labels with &&, ||, ! and parentheses)", filter, ge.Heading, strings.Join(strings.Fields(markup.ReplaceAllString(ge.Message, "")), " "))
	}
	if err != nil {
		return false, fmt.Errorf("label filter %q: %w", filter, err)
	}
	for id, need := range migrationNeeds {
		if match([]string{LeaderMigration, NeedHA, specs.Get(id).Tag, need}) {
			return true, nil
		}
	}
	return false, nil
}
