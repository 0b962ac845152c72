// Command kube-controller-manager-fakecloud is kube-controller-manager with
// fakecloud compiled in as an in-tree cloud provider: the "KCM only"
// release of the leader-migration scenarios, whose service-lb, node-route
// and cloud-node-lifecycle controllers run in kube-controller-manager.
//
// It is built against k8s.io/kubernetes v1.30 (cluster/binaries'
// ReleaseVersions), the last release whose kube-controller-manager runs
// cloud controllers, with --cloud-provider=fakecloud
// --feature-gates=DisableCloudProviders=false. It compiles against this
// repository's own Kubernetes too, which keeps it vetted, but from v1.32
// kube-controller-manager skips those controllers, and from v1.36 it
// rejects any --cloud-provider but "external".
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"

	fakecloud "sigs.k8s.io/ccm-harness/fakecloud/cloudprovider"
)

func main() {
	fakecloud.Register()
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
