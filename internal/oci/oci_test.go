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

package oci

import (
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// staticBinary builds a static program that prints its arguments.
func staticBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\nimport (\"fmt\"; \"os\")\nfunc main() { fmt.Println(os.Args[1:]) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "echo-args")
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=mod")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func TestPackUnpack(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "img.tar")
	// /bin/true is dynamically linked: the image brings its libraries.
	if err := Pack("/bin/true", "true", "example.com/true:v1", archive); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	img, err := Unpack(context.Background(), DockerArchive+archive, cache)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(img.Root, cache) || !strings.HasPrefix(img.Digest, "sha256:") || img.User != packUser || img.WorkingDir != packHome {
		t.Errorf("image %+v", img)
	}
	argv, err := img.Command(nil, []string{"--cloud-provider=x"})
	if err != nil || strings.Join(argv, " ") != "/usr/local/bin/true --cloud-provider=x" {
		t.Errorf("command: %q, %v", argv, err)
	}
	if argv, err := img.Command([]string{"true"}, nil); err != nil || argv[0] != "true" {
		t.Errorf("a command found in the image's PATH: %q, %v", argv, err)
	}
	f, err := elf.Open("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	interp, _, err := dynamic(f)
	f.Close()
	if err != nil || interp == "" {
		t.Fatalf("/bin/true is not dynamically linked here (%v)", err)
	}
	for _, p := range []string{interp, "/etc/passwd", "/etc/group", packHome} {
		if _, err := InRoot(img.Root, p); err != nil {
			t.Errorf("the image lacks %s: %v", p, err)
		}
	}
	// A second unpack of the same digest reuses the root.
	again, err := Unpack(context.Background(), DockerArchive+archive, cache)
	if err != nil || again.Root != img.Root {
		t.Errorf("again: %+v, %v", again, err)
	}
	if _, err := img.Command([]string{"/bin/nothere"}, nil); err == nil || !strings.Contains(err.Error(), "command /bin/nothere: no such executable in the image") {
		t.Errorf("a missing command: %v", err)
	}
}

func TestUnpackBadInput(t *testing.T) {
	dir := t.TempDir()
	tag, _ := name.NewTag("example.com/x:v1")
	write := func(name string, change func(t *testing.T, archive string)) string {
		archive := filepath.Join(dir, name+".tar")
		change(t, archive)
		return DockerArchive + archive
	}
	reconfigure := func(base string, change func(*mutateConfig)) func(t *testing.T, a string) {
		return func(t *testing.T, a string) {
			src := filepath.Join(dir, base+"-src.tar")
			if err := Pack(staticBinary(t), "ccm", "example.com/ccm:v1", src); err != nil {
				t.Fatal(err)
			}
			img, err := tarball.ImageFromPath(src, nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg, _ := img.ConfigFile()
			cfg = cfg.DeepCopy()
			change(&mutateConfig{arch: &cfg.Architecture, entrypoint: &cfg.Config.Entrypoint})
			img, err = mutate.ConfigFile(img, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := tarball.WriteToFile(a, tag, img); err != nil {
				t.Fatal(err)
			}
		}
	}
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[runtime.GOARCH]
	for _, tt := range []struct{ ref, want string }{
		{DockerArchive + "/nonexistent.tar", "image docker-archive:/nonexistent.tar: "},
		{"not a reference!", `image "not a reference!": `},
		{OCILayout + dir, "want an OCI image layout directory"},
		{write("arch", reconfigure("arch", func(c *mutateConfig) { *c.arch = other })), "is for linux/" + other + ", this machine is linux/" + runtime.GOARCH},
		{write("noentry", reconfigure("noentry", func(c *mutateConfig) { *c.entrypoint = nil })), "has no entrypoint or cmd: set one to the CCM binary"},
	} {
		_, err := Unpack(context.Background(), tt.ref, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Unpack(%s): %v, want one line containing %q", tt.ref, err, tt.want)
		}
	}
}

type mutateConfig struct {
	arch       *string
	entrypoint *[]string
}
