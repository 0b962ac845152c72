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
	"errors"
	"testing"

	"sigs.k8s.io/ccm-harness/skew"
)

// A matrix cell passes only if a spec passed in it: a cell whose specs
// all skipped proves nothing about its pair. One outside the skew policy
// is information either way.
func TestCellVerdict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sk             skew.Verdict
		err            error
		passed, failed int
		want           string
		ok             bool
	}{
		{skew.Same, nil, 27, 0, "passed", true},
		{skew.Same, nil, 0, 0, "FAILED: no spec passed", false},
		{skew.Same, nil, 26, 1, "FAILED", false},
		{skew.Same, errors.New("the suite failed"), 27, 0, "FAILED", false},
		{skew.Newer, nil, 0, 3, skew.Newer.String(), true},
	} {
		if got, ok := cellVerdict(tc.sk, tc.err, tc.passed, tc.failed); got != tc.want || ok != tc.ok {
			t.Errorf("%v, %v, %d passed, %d failed: %q %v, want %q %v", tc.sk, tc.err, tc.passed, tc.failed, got, ok, tc.want, tc.ok)
		}
	}
}
