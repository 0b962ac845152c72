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

// Package repository stands in for gitlab.alpinelinux.org/alpine/go's
// package of the same name, which the Go module proxy withholds.
//
// kubetest2-tester-ginkgo imports kubetest2's pkg/build only for the names
// of the test binaries it looks for; pkg/build imports k8s.io/release,
// whose SBOM code (sigs.k8s.io/bom's osinfo) parses Alpine package
// databases with this package. No tester or deployer path reaches that
// code, but the build needs the package to exist: here it has the one
// function and type bom uses, and parsing always fails, saying why.
package repository

import (
	"errors"
	"io"
)

// Package is the part of an Alpine package record sigs.k8s.io/bom reads.
type Package struct {
	Name       string
	Version    string
	Arch       string
	Maintainer string
	License    string
	Checksum   []byte
}

// ChecksumString is empty: no package is ever parsed.
func (p *Package) ChecksumString() string { return "" }

// ParsePackageIndex refuses: the real parser is not available to this build.
func ParsePackageIndex(io.Reader) ([]*Package, error) {
	return nil, errors.New("parsing Alpine package databases is not built into this binary (gitlab.alpinelinux.org/alpine/go is replaced by a stand-in in kubetest2-deployer/withheld/alpine-go)")
}
