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

// Command fakecloud-ccm is a cloud-controller-manager for fakecloud: the
// upstream CCM (k8s.io/cloud-provider/app) with the fakecloud provider
// compiled in. Run it with --cloud-provider=fakecloud and a --cloud-config
// as described in package sigs.k8s.io/ccm-harness/fakecloud/cloudprovider.
package main

import (
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/util/wait"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/app"
	"k8s.io/cloud-provider/app/config"
	"k8s.io/cloud-provider/names"
	"k8s.io/cloud-provider/options"
	"k8s.io/component-base/cli"
	cliflag "k8s.io/component-base/cli/flag"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric

	fakecloud "sigs.k8s.io/ccm-harness/fakecloud/cloudprovider"
)

func main() {
	fakecloud.Register()
	opts, err := options.NewCloudControllerManagerOptions()
	if err != nil {
		fail(fmt.Errorf("cannot initialize options: %w", err))
	}
	// The default controller client names keep the RBAC that the API server
	// bootstraps for a CCM, so the harness need not install its own.
	cmd := app.NewCloudControllerManagerCommand(opts, cloudInitializer, app.DefaultInitFuncConstructors,
		names.CCMControllerAliases(), cliflag.NamedFlagSets{}, wait.NeverStop)
	os.Exit(cli.Run(cmd))
}

// cloudInitializer builds the provider. A bad cloud config is the most likely
// mistake in a harness run, so it ends in one readable line rather than the
// klog.Fatalf stack dump of the sample CCM; that is also why this opens the
// config itself instead of calling cloudprovider.InitCloudProvider.
func cloudInitializer(c *config.CompletedConfig) cloudprovider.Interface {
	cp := c.ComponentConfig.KubeCloudShared.CloudProvider
	if cp.Name != fakecloud.ProviderName {
		fail(fmt.Errorf("--cloud-provider=%q is not supported: this CCM only serves --cloud-provider=%s", cp.Name, fakecloud.ProviderName))
	}
	// An untyped nil, not a nil *os.File, is how a provider learns that
	// there is no config.
	var r io.Reader
	if cp.CloudConfigFile != "" {
		f, err := os.Open(cp.CloudConfigFile)
		if err != nil {
			fail(fmt.Errorf("cannot open --cloud-config: %w", err))
		}
		defer f.Close()
		r = f
	}
	cloud, err := cloudprovider.GetCloudProvider(cp.Name, r)
	if err != nil {
		fail(err)
	}
	return cloud
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "fakecloud-ccm: %v\n", err)
	os.Exit(1)
}
