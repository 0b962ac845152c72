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

package nodeimage

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func TestImageWrite(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "pause")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	img := image{
		Ref:        "registry.k8s.io/pause:3.10.2",
		Files:      map[string]string{"/pause": bin},
		Links:      map[string]string{"/usr/sbin/iptables": "xtables-nft-multi"},
		Entrypoint: []string{"/pause"},
	}
	dest := filepath.Join(dir, "pause.tar")
	if err := img.write(dir, dest); err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag(img.Ref)
	got, err := tarball.ImageFromPath(dest, &tag)
	if err != nil {
		t.Fatalf("read back under its name: %v", err)
	}
	cfg, err := got.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/pause" {
		t.Errorf("entrypoint %v, want [/pause]", cfg.Config.Entrypoint)
	}
	entries := map[string]*tar.Header{}
	tr := tar.NewReader(mutate.Extract(got))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entries[h.Name] = h
	}
	if h := entries["pause"]; h == nil || h.Mode&0o111 == 0 {
		t.Errorf("pause: %+v, want an executable file", h)
	}
	if h := entries["usr/sbin/iptables"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "xtables-nft-multi" {
		t.Errorf("usr/sbin/iptables: %+v, want a link to xtables-nft-multi", h)
	}
	h := entries["usr/sbin/"]
	if h == nil {
		h = entries["usr/sbin"]
	}
	if h == nil || h.Typeflag != tar.TypeDir {
		t.Errorf("usr/sbin/: %+v, want the directory above the link", h)
	}
}
