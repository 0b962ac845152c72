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

// TestSameModule: one release's components are built in one module by one
// go build (their shared packages compiled once); a component with
// Sources, another version, other tags, a renamed copy or a test binary
// are not mixed in.
func TestSameModule(t *testing.T) {
	apiserver, err := KubeAPIServer.At("v1.34.4")
	if err != nil {
		t.Fatal(err)
	}
	kcm, err := KubeControllerManager.At("v1.34.4")
	if err != nil {
		t.Fatal(err)
	}
	newer, err := KubeControllerManager.At("v1.35.4")
	if err != nil {
		t.Fatal(err)
	}
	providerless := kcm
	providerless.Tags = []string{"providerless"}
	ccm := Component{Name: "some-ccm", Module: pins.ModulePath, Package: pins.ModulePath + "/cmd/some-ccm", Sources: []string{"cmd/some-ccm"}, Releases: []string{"v1.34.4"}}
	ccm, err = ccm.At("v1.34.4")
	if err != nil {
		t.Fatal(err)
	}
	// Kubernetes' e2e.test is one go test -c of one package: never
	// grouped, though its release and tags are the providerless kcm's.
	e2e, err := UpstreamE2E.At("v1.34.4")
	if err != nil {
		t.Fatal(err)
	}
	got := sameModule([]Component{apiserver, ccm, kcm, newer, kcm.Renamed("kcm-copy"), providerless, e2e})
	var said []string
	for _, g := range got {
		said = append(said, describe(g))
	}
	want := []string{
		"kube-apiserver v1.34.4, kube-controller-manager v1.34.4",
		"some-ccm v1.34.4",
		"kube-controller-manager v1.35.4",
		"kube-controller-manager v1.34.4",
		"e2e.test v1.34.4",
	}
	if strings.Join(said, "; ") != strings.Join(want, "; ") {
		t.Errorf("expected the builds %q, actual %q", want, said)
	}
}
