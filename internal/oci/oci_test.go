package oci

import (
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

func TestPackUnpackRun(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "img.tar")
	if err := Pack(staticBinary(t), "echo-args", "example.com/echo:v1", archive); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	ep, err := Unpack(DockerArchive+archive, cache)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ep.Path, cache) || !strings.HasSuffix(ep.Path, "/rootfs/usr/local/bin/echo-args") || !strings.HasPrefix(ep.Digest, "sha256:") {
		t.Errorf("entrypoint %+v", ep)
	}
	out, err := exec.Command(ep.Path, "--cloud-provider=x").Output()
	if err != nil || strings.TrimSpace(string(out)) != "[--cloud-provider=x]" {
		t.Errorf("running the entrypoint: %q, %v", out, err)
	}
	// A second unpack of the same digest reuses the root.
	again, err := Unpack(DockerArchive+archive, cache)
	if err != nil || again.Path != ep.Path {
		t.Errorf("again: %+v, %v", again, err)
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
	dynamic := write("dynamic", func(t *testing.T, a string) {
		if err := Pack("/bin/true", "true", "example.com/true:v1", a); err != nil {
			t.Fatal(err)
		}
	})
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
		{dynamic, "dynamically linked; the local runtime runs a CCM image's entrypoint on the host, so it must be static (build it with CGO_ENABLED=0)"},
		{write("arch", reconfigure("arch", func(c *mutateConfig) { *c.arch = other })), "is for linux/" + other + ", this machine is linux/" + runtime.GOARCH},
		{write("noentry", reconfigure("noentry", func(c *mutateConfig) { *c.entrypoint = nil })), "has no entrypoint or cmd: set one to the CCM binary"},
		{write("missing", reconfigure("missing", func(c *mutateConfig) { *c.entrypoint = []string{"/bin/nothere"} })), "entrypoint /bin/nothere: no such executable in the image"},
	} {
		_, err := Unpack(tt.ref, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Unpack(%s): %v, want one line containing %q", tt.ref, err, tt.want)
		}
	}
}

type mutateConfig struct {
	arch       *string
	entrypoint *[]string
}
