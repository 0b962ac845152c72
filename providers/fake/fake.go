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

// Package fake is the provider profile of fakecloud, the harness's own cloud
// simulator, driven by its own CCM (fakecloud-ccm). It is the default
// provider: everything runs on this machine, and its admin API lets
// scenarios shape the cloud and negative controls break it.
package fake

import (
	"embed"
	"fmt"

	"sigs.k8s.io/yaml"

	"sigs.k8s.io/ccm-harness/fakecloud/cloudprovider"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/manifests"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/providers/emulated"
)

// Manifests are fakecloud-ccm's as a provider ships them (manifests/,
// which a profile file names as its folder): its ServiceAccount and RBAC,
// and its DaemonSet, whose container a CCM from an image runs as.
var Manifests = manifests.Embedded(manifestDir, "manifests")

//go:embed manifests/*.yaml
var manifestDir embed.FS

// Name selects this profile.
const Name = "fake"

// Profile returns the fake provider's profile.
func Profile() providers.Profile {
	return providers.Profile{
		Name:             Name,
		CloudProvider:    cloudprovider.ProviderName,
		ProviderIDScheme: cloudprovider.ProviderName,
		CCM:              CCM,
		CloudBinaries:    []binaries.Component{emulated.FakeCloud},
		Manifests:        Manifests,
		Capabilities: providers.NewCapabilities(providers.Instances, providers.Zones, providers.NodeLifecycle,
			providers.LoadBalancers, providers.Routes),
		// Every extended feature: fakecloud's load balancers carry UDP
		// and TCP on one port, reach pods without node ports, and hand
		// backends the client's address, as a pass-through network load
		// balancer does; and its instances have an IPv6 InternalIP
		// beside their IPv4 ones, which fakecloud's CCM reports.
		Features: providers.AllFeatures(providers.NewCapabilities(providers.LoadBalancers, providers.Instances)),
		// fakecloud's CCM asks for a load balancer that speaks the PROXY
		// protocol (v1) so, and writes ipMode Proxy for it.
		ProxyProtocolAnnotations: map[string]string{cloudprovider.AnnotationProxyProtocol: "v1"},
		InTreeKCM:                InTreeKCM,
		OlderCCM:                 OlderCCM,
		Config:                   emulated.Config{},
		NewCloud: func(config []byte) (providers.Cloud, error) {
			var c emulated.Config
			if len(config) > 0 {
				if err := yaml.UnmarshalStrict(config, &c); err != nil {
					return nil, fmt.Errorf("fake provider config: %w", err)
				}
			}
			return emulated.NewCloud(c, emulated.Dialect{DualStack: true}), nil
		},
	}
}

func init() { providers.Register(Profile()) }
