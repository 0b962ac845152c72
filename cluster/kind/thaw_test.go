package kind

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A container with a frozen cgroup under it cannot be killed until the
// cgroup is thawed (Docker: "tried to kill container, but did not receive
// an exit event"); stopContainer thaws it and stops the container. Needs
// Docker, cgroup v1's freezer, and an image with sleep (the harness's kind
// node image, once built): skipped without them.
func TestStopFrozenContainer(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker")
	}
	out, err := exec.Command("docker", "images", "--format", "{{.Repository}}:{{.Tag}}", "ccm-harness.local/kind-node").Output()
	images := strings.Fields(string(out))
	if err != nil || len(images) == 0 {
		t.Skip("no kind node image built yet")
	}
	if _, err := os.Stat("/sys/fs/cgroup/freezer"); err != nil {
		t.Skip("no cgroup v1 freezer")
	}
	ctx := context.Background()
	name := "ccm-harness-thaw-test"
	_ = exec.Command("docker", "rm", "--force", name).Run()
	if out, err := exec.Command("docker", "run", "-d", "--name", name, "--entrypoint", "sleep", images[0], "600").CombinedOutput(); err != nil {
		t.Fatalf("docker run: %v: %s", err, out)
	}
	t.Cleanup(func() {
		_, _ = thaw(ctx, name)
		_ = exec.Command("docker", "rm", "--force", name).Run()
	})
	out, err = exec.Command("docker", "inspect", "--format", "{{.Id}} {{.State.Pid}}", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(out))
	child := filepath.Join("/sys/fs/cgroup/freezer/docker", f[0], "frozen")
	if err := os.Mkdir(child, 0o755); err != nil {
		t.Skipf("cannot make a freezer cgroup under the container: %v", err)
	}
	if err := os.WriteFile(filepath.Join(child, "cgroup.procs"), []byte(f[1]), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(child, "freezer.state"), []byte("FROZEN"), 0); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := stopContainer(ctx, name); err != nil {
		t.Fatalf("stopContainer of a container with a frozen cgroup: %v", err)
	}
	out, _ = exec.Command("docker", "inspect", "--format", "{{.State.Running}}", name).Output()
	if strings.TrimSpace(string(out)) != "false" {
		t.Errorf("container still running after stopContainer (%s)", time.Since(start))
	}
	t.Logf("stopped in %s", time.Since(start).Round(time.Millisecond))
}
