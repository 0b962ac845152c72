package options

// The built-in providers, registered for every door. Adding a provider is
// its folder under providers/ and its line here.
import (
	_ "sigs.k8s.io/ccm-harness/providers/aws"
	_ "sigs.k8s.io/ccm-harness/providers/fake"
	_ "sigs.k8s.io/ccm-harness/providers/openstack"
	_ "sigs.k8s.io/ccm-harness/providers/vsphere"
)
