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
	"testing"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
	"sigs.k8s.io/ccm-harness/providers/fake"
)

// A cluster of another release runs that release's kube-controller-
// manager, as its kube-apiserver is: a v1.37 node-lifecycle controller
// beside a v1.34 kube-apiserver reads leases v1.34's RBAC does not grant
// it, and never marks a stopped node NotReady. A manager the spec names
// keeps its binary (release N's, in the leader-migration specs).
func TestManagersRunTheClustersRelease(t *testing.T) {
	for _, release := range pins.KubernetesReleases {
		spec := cluster.Spec{Name: "c", Profile: fake.Profile(), KubernetesVersion: release}
		m, err := complete(spec, cluster.ManagerSpec{Name: "kcm", Kind: cluster.KubeControllerManager})
		if err != nil {
			t.Fatal(err)
		}
		if m.Binary.Name != binaries.KubeControllerManager.Name || m.Binary.Release() != release || m.CloudProvider != "external" {
			t.Errorf("cluster of %s: expected kube-controller-manager %s with --cloud-provider=external, actual %s with %q", release, release, m.Binary, m.CloudProvider)
		}
		m, err = complete(spec, cluster.ManagerSpec{Name: "kcm-intree", Kind: cluster.KubeControllerManager, Binary: fake.InTreeKCM, CloudProvider: "fakecloud"})
		if err != nil {
			t.Fatal(err)
		}
		if m.Binary.Name != fake.InTreeKCM.Name || m.CloudProvider != "fakecloud" {
			t.Errorf("cluster of %s: expected the named %s kept, actual %s with %q", release, fake.InTreeKCM.Name, m.Binary, m.CloudProvider)
		}
	}
}
