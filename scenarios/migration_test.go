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
