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

package binaries

import (
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
)

// own is a component built in a module of its own, pinned where it is
// defined, as a provider pins its CCM.
var own = Component{Name: "own-ccm", Module: "example.com/own", Package: "example.com/own/cmd/ccm", Versions: []string{"v1.2.0", "v1.1.0"}}

func TestAt(t *testing.T) {
	def, err := own.At("")
	if err != nil || def.version() != "v1.2.0" {
		t.Errorf(`At(""): version %q, err %v; want the first pinned`, def.version(), err)
	}
	if c, err := own.At("v1.1.0"); err != nil || c.version() != "v1.1.0" || c.String() != c.Name+" v1.1.0" {
		t.Errorf("At(v1.1.0): %v, err %v", c, err)
	}
	msg := "version v0.0.1 of example.com/own is not pinned (pinned: v1.2.0, v1.1.0)"
	if _, err := own.At("v0.0.1"); err == nil || !strings.Contains(err.Error(), msg) {
		t.Errorf("At(v0.0.1): %v, want an error naming the pinned versions", err)
	}
	if !own.ownModule() || KubeAPIServer.ownModule() {
		t.Errorf("ownModule: %t for a component with Versions, %t for one of go.mod's", own.ownModule(), KubeAPIServer.ownModule())
	}
	if _, err := KubeAPIServer.At("v1.0.0"); err == nil || !strings.Contains(err.Error(), "(pinned: "+pins.Versions[pins.Kubernetes]+", ") {
		t.Errorf("kube-apiserver At(v1.0.0): %v, want go.mod's version named first", err)
	}
	// Another supported release is built in a module of its own; go.mod's
	// is not.
	for _, v := range pins.KubernetesReleases {
		c, err := KubeAPIServer.At(v)
		if err != nil {
			t.Fatalf("kube-apiserver At(%s): %v", v, err)
		}
		if want := v != pins.Versions[pins.Kubernetes]; c.ownModule() != want || c.Release() != v {
			t.Errorf("kube-apiserver At(%s): ownModule %t (want %t), release %s", v, c.ownModule(), want, c.Release())
		}
	}
	// A component of this repository on another release it lists.
	ccm := Component{Name: "ours-ccm", Module: pins.ModulePath, Package: pins.ModulePath + "/cmd/ccm", Sources: []string{"cmd/ccm"}, Releases: []string{"v1.34.4"}}
	if c, err := ccm.At("v1.34.4"); err != nil || !c.ownModule() || c.Release() != "v1.34.4" || c.Module != "k8s.io/kubernetes" || len(c.Sources) != 1 {
		t.Errorf("ours-ccm At(v1.34.4): %+v, err %v; want a release build with its sources", c, err)
	}
	if c, err := ccm.At(pins.Versions[pins.Kubernetes]); err != nil || c.ownModule() || c.Release() != pins.Versions[pins.Kubernetes] {
		t.Errorf("ours-ccm At(go.mod's release): %+v, err %v; want the build from the source tree", c, err)
	}
	if _, err := ccm.At("v1.35.4"); err == nil || !strings.Contains(err.Error(), "built on: "+pins.Versions[pins.Kubernetes]+", v1.34.4") {
		t.Errorf("ours-ccm At(v1.35.4): %v, want the releases it is built on named", err)
	}
	ours := Component{Name: "ours", Module: pins.ModulePath, Package: pins.ModulePath + "/cmd/x"}
	if _, err := ours.At("v1.0.0"); err == nil || !strings.Contains(err.Error(), "built from this repository") {
		t.Errorf("ours At(v1.0.0): %v, want an error", err)
	}
}
