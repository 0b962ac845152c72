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

package cache

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestLayout: the paths are the cache's format; caches filled before must
// still hit.
func TestLayout(t *testing.T) {
	c := New("/c")
	for got, want := range map[string]string{
		c.Binary("kube-apiserver", "v1.34.4-providerless"): "/c/bin/" + runtime.GOOS + "-" + runtime.GOARCH + "/kube-apiserver/v1.34.4-providerless/kube-apiserver",
		c.Images():                         "/c/images",
		c.Module("kube-apiserver@v1.34.4"): "/c/modules/kube-apiserver@v1.34.4",
		c.Lock("kube-apiserver@v1.34.4"):   "/c/locks/kube-apiserver@v1.34.4.lock",
		c.buildTimes():                     "/c/build-times.json",
	} {
		if got != want {
			t.Errorf("expected %s, actual %s", want, got)
		}
	}
	t.Setenv("CCM_HARNESS_CACHE", "/elsewhere")
	if got := New("").Dir; got != "/elsewhere" {
		t.Errorf("expected $CCM_HARNESS_CACHE as the default, actual %s", got)
	}
}

func TestBuildTimes(t *testing.T) {
	c := New(t.TempDir())
	if _, ok := c.BuildTime("etcd v3.7.1"); ok {
		t.Error("expected no build time in an empty cache")
	}
	c.RecordBuildTime("etcd v3.7.1", 90*time.Second)
	c.RecordBuildTime("kwok v0.8.0", time.Minute)
	if d, ok := c.BuildTime("etcd v3.7.1"); !ok || d != 90*time.Second {
		t.Errorf("expected 1m30s recorded, actual %s (%t)", d, ok)
	}
}

func TestInstallAndFresh(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	built := filepath.Join(dir, "built")
	if err := os.WriteFile(built, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin", "x", "x")
	if Executable(bin) == nil || Fresh(bin, src) {
		t.Fatal("expected a missing binary neither executable nor fresh")
	}
	if err := Install(built, bin); err != nil {
		t.Fatal(err)
	}
	if err := Executable(bin); err != nil {
		t.Errorf("expected the installed binary executable: %v", err)
	}
	if !Fresh(bin, src) {
		t.Error("expected a binary newer than its sources fresh")
	}
	later := time.Now().Add(time.Hour)
	main := filepath.Join(src, "main.go")
	if err := os.WriteFile(main, []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(main, later, later); err != nil {
		t.Fatal(err)
	}
	if Fresh(bin, src) {
		t.Error("expected a binary older than a source file stale")
	}
	if err := Executable(src); err == nil {
		t.Error("expected a folder not executable")
	}
}
