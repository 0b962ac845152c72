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

package skew

import "testing"

func TestOf(t *testing.T) {
	tests := []struct {
		apiserver, ccm string
		want           Verdict
		within         bool
	}{
		{"v1.36.3", "v1.36.2", Same, true},
		{"v1.36.3", "v1.35.3", OneOlder, true},
		{"v1.36.3", "v1.31.0", TooOld, false},
		{"v1.35.4", "v1.36.2", Newer, false},
		{"v1.34.4", "", Unknown, true},
		{"", "v1.36.2", Unknown, true},
	}
	for _, tt := range tests {
		got, err := Of(tt.apiserver, tt.ccm)
		if err != nil || got != tt.want || got.Within() != tt.within {
			t.Errorf("Of(%q, %q) = %v (within %t), %v; want %v (within %t)", tt.apiserver, tt.ccm, got, got.Within(), err, tt.want, tt.within)
		}
	}
	if _, err := Of("v1.36.3", "2.0"); err == nil {
		t.Error(`Of(v1.36.3, "2.0"): no error for a release of another form`)
	}
}

func TestMinor(t *testing.T) {
	for in, want := range map[string]int{"v1.35.4": 35, "1.34": 34, "v1.37.0-rc.1": 37} {
		if got, err := Minor(in); err != nil || got != want {
			t.Errorf("Minor(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}
