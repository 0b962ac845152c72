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
