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

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// root is the repository: go test runs in the package's folder.
const root = "../.."

// TestDocIsCurrent fails when docs/profile-file.md differs from what the
// code and the registry say now.
func TestDocIsCurrent(t *testing.T) {
	want, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, Out))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: the profile file's types or the registry changed; run make docs and commit it", Out)
	}
}

// TestEveryFieldDocumented fails on a field of a profile file's types
// without a comment: the reference would show it empty.
func TestEveryFieldDocumented(t *testing.T) {
	doc, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "| `") && strings.HasSuffix(line, "|  |") {
			t.Errorf("a field without a comment in its Go type: %s", line)
		}
	}
	for _, want := range []string{"`aws`, `fake`, `openstack`, `vsphere`, `none`", "`loadbalancer/backends`", "`load-balancer-udp` (of `load-balancers`)", "`race`"} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("the reference lacks %s", want)
		}
	}
}
