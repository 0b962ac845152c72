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

package local

import (
	"slices"
	"testing"
)

// The --controllers help of k8s.io/controller-manager's options, as
// kube-controller-manager v1.36 prints it (cut short), and a CCM's with no
// controller disabled by default.
func TestParseControllers(t *testing.T) {
	for _, tt := range []struct {
		help string
		want []string
	}{
		{"      --controllers strings    A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables the controller named 'foo'.\n" +
			"                All controllers: cloud-node-lifecycle-controller, service-lb-controller, token-cleaner-controller\n" +
			"                Disabled-by-default controllers: token-cleaner-controller (default [*])\n      --kube-api-qps float32",
			[]string{"cloud-node-lifecycle-controller", "service-lb-controller", "token-cleaner-controller", "token-cleaner-controller"}},
		{"All controllers: cloud-node-controller, node-route-controller\nDisabled-by-default controllers: \n", []string{"cloud-node-controller", "node-route-controller"}},
		{"no such flag\n", nil},
	} {
		if got := ParseControllers(tt.help); !slices.Equal(got, tt.want) {
			t.Errorf("ParseControllers(%q) = %v, want %v", tt.help, got, tt.want)
		}
	}
}
