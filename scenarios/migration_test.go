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
	"slices"
	"testing"

	"k8s.io/cloud-provider/names"

	"sigs.k8s.io/ccm-harness/providers"
)

// The leader-migration specs wait for the cloud controllers the CCM's
// claims start, and no others: vSphere's CCM has no load balancers nor
// routes, and k8s.io/cloud-provider starts neither controller for it.
func TestCloudControllers(t *testing.T) {
	for _, tc := range []struct {
		claims []providers.Capability
		want   []string
	}{
		{[]providers.Capability{providers.Instances, providers.Zones, providers.NodeLifecycle, providers.LoadBalancers, providers.Routes},
			[]string{names.ServiceLBController, names.NodeRouteController, names.CloudNodeLifecycleController}},
		{[]providers.Capability{providers.Instances, providers.Zones, providers.NodeLifecycle},
			[]string{names.CloudNodeLifecycleController}},
		{[]providers.Capability{providers.LoadBalancers}, []string{names.ServiceLBController}},
	} {
		got := cloudControllers(providers.Profile{Capabilities: providers.NewCapabilities(tc.claims...)})
		if !slices.Equal(got, tc.want) {
			t.Errorf("claims %v: expected the specs to wait for %v, actual %v", tc.claims, tc.want, got)
		}
	}
}
