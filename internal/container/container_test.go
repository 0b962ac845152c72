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

package container

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/ccm-harness/internal/oci"
	"sigs.k8s.io/ccm-harness/internal/process"
)

// needRuntime skips where no OCI runtime is installed, and fails under CI,
// whose setup installs one.
func needRuntime(t *testing.T) {
	t.Helper()
	if _, err := Runtime(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if os.Getuid() != 0 {
		t.Skip("runs containers as root")
	}
}

// image packs a dynamically linked host program, whose libraries the
// image brings, and unpacks it.
func image(t *testing.T, binary string) *oci.Image {
	t.Helper()
	archive := filepath.Join(t.TempDir(), "img.tar")
	if err := oci.Pack(binary, filepath.Base(binary), "example.com/test:v1", archive); err != nil {
		t.Fatal(err)
	}
	img, err := oci.Unpack(context.Background(), oci.DockerArchive+archive, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestRunsInTheImagesRoot(t *testing.T) {
	needRuntime(t)
	// cat is dynamically linked: it runs only if the image's libraries
	// are found in the image's root.
	img := image(t, "/bin/cat")
	vol := t.TempDir()
	if err := os.WriteFile(filepath.Join(vol, "cloud.conf"), []byte("zone=a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := Spec{
		ID: "test-cat", Image: img, Args: []string{"/etc/cloud/cloud.conf", "/proc/self/status"},
		Mounts: []Mount{{Source: vol, Destination: "/etc/cloud", ReadOnly: true}},
		Bundle: filepath.Join(dir, "bundle"), StateRoot: filepath.Join(dir, "state"),
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := s.Output(ctx)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "zone=a") {
		t.Errorf("the mounted file was not read: %s", out)
	}
	// The image's user, nonroot (65532), from the image's /etc/passwd.
	if !strings.Contains(string(out), "Uid:\t65532") {
		t.Errorf("not the image's user: %s", out)
	}
}

func TestStopLeavesNothing(t *testing.T) {
	needRuntime(t)
	img := image(t, "/bin/sleep")
	dir := t.TempDir()
	s := Spec{ID: "test-sleep", Image: img, Args: []string{"600"}, Bundle: filepath.Join(dir, "bundle"), StateRoot: filepath.Join(dir, "state")}
	ps, err := s.Process("sleeper", filepath.Join(dir, "logs"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var g process.Group
	if _, err := g.Start(context.Background(), ps); err != nil {
		t.Fatal(err)
	}
	rt, _ := Runtime()
	list := func() string {
		out, _ := exec.Command(rt, "--root", s.StateRoot, "list", "-q").Output()
		return strings.TrimSpace(string(out))
	}
	deadline := time.Now().Add(10 * time.Second)
	for list() != "test-sleep" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if got := list(); got != "test-sleep" {
		t.Fatalf("containers running: %q, want test-sleep", got)
	}
	// A record's stop, as `down` does from a state file, after the
	// runtime itself was killed: the container survives its runtime.
	rec := g.Records()[0]
	if p, err := os.FindProcess(rec.PID); err == nil {
		_ = p.Kill()
	}
	time.Sleep(200 * time.Millisecond)
	if got := list(); got != "test-sleep" {
		t.Fatalf("after the runtime was killed, containers: %q; want test-sleep still running", got)
	}
	rec.Stop(5 * time.Second)
	if got := list(); got != "" {
		t.Errorf("after stop, containers: %q", got)
	}
	g.StopAll(time.Second)
}

func TestBadImages(t *testing.T) {
	img := image(t, "/bin/true")
	dir := t.TempDir()
	for _, tt := range []struct {
		name   string
		change func(*oci.Image)
		want   string
	}{
		{"user", func(i *oci.Image) { i.User = "ccm" }, `user "ccm" is not in the image's /etc/passwd`},
		{"group", func(i *oci.Image) { i.User = "nonroot:ccm" }, `group "ccm" is not in the image's /etc/group`},
		{"workdir", func(i *oci.Image) { i.WorkingDir = "/srv/ccm" }, "working directory /srv/ccm does not exist in the image"},
	} {
		bad := *img
		tt.change(&bad)
		s := Spec{ID: tt.name, Image: &bad, Bundle: filepath.Join(dir, tt.name)}
		_, err := s.config()
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line containing %q", tt.name, err, tt.want)
		}
	}
}

func TestNoRuntime(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Runtime()
	if err == nil || !strings.Contains(err.Error(), "install it: apt-get install runc") || strings.Contains(err.Error(), "\n") {
		t.Errorf("no runtime on PATH: %v", err)
	}
}
