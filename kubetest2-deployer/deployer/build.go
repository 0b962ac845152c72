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

package deployer

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
)

// Build stages in the run dir what a run needs besides kubetest2: the
// cluster's binaries (bin/, which Up then runs), the e2e suite compiled
// (e2e.test), ginkgo and kubectl, the three files the ginkgo tester's
// --use-built-binaries looks for there, and nodes-initialized, a check for
// the exec tester. Kubetest2 puts the run dir first on the tester's PATH.
func (d *Deployer) Build() error {
	root, err := sourceDir()
	if err != nil {
		return err
	}
	runDir := d.common.RunDir()
	start := time.Now()
	// From the user's --bin-dir, else the cache; the setup's own source is
	// the run dir this stages into.
	src := &binaries.Source{Dir: d.opts.BinDir, SourceDir: root, Logf: klog.Infof}
	clusterComps := d.setup.Components(false)
	paths, err := src.Paths(d.ctx, clusterComps...)
	if err != nil {
		return err
	}
	// What the leader-migration specs run besides: the suite, run by the
	// ginkgo tester, takes every binary from the staged folder. A --bin-dir
	// without them is still good for every other spec.
	for _, c := range d.setup.Components(true)[len(clusterComps):] {
		more, err := src.Paths(d.ctx, c)
		if err != nil && d.opts.BinDir == "" {
			return err
		}
		if err != nil {
			klog.Infof("not staging %s: %v", c.Name, err)
		}
		maps.Copy(paths, more)
	}
	staged := d.stagedBinDir()
	if err := os.MkdirAll(staged, 0o755); err != nil {
		return err
	}
	for name, p := range paths {
		if err := stage(p, filepath.Join(staged, name)); err != nil {
			return fmt.Errorf("stage %s in %s: %w", name, staged, err)
		}
	}
	k := pins.ModuleVersion(pins.Kubernetes)
	steps := []struct {
		what, dir string
		args      []string
	}{
		{"e2e.test", root, []string{"test", "-c", "-o", filepath.Join(runDir, "e2e.test"), "./e2e"}},
		// The harness's go.mod pins ginkgo, so the CLI matches the suite's
		// library.
		{"ginkgo", root, []string{"build", "-o", filepath.Join(runDir, "ginkgo"), "github.com/onsi/ginkgo/v2/ginkgo"}},
		// kubectl is not in the harness's module graph; this module has it
		// at the harness's Kubernetes release.
		{"kubectl and nodes-initialized", filepath.Join(root, "kubetest2-deployer"), []string{"build", "-trimpath",
			"-ldflags", "-s -w " + strings.Join(pins.KubeVersion(k), " "),
			"-o", runDir + string(filepath.Separator), "k8s.io/kubernetes/cmd/kubectl", "./cmd/nodes-initialized"}},
	}
	for _, s := range steps {
		if err := goCommand(d.ctx, s.dir, s.args...); err != nil {
			return fmt.Errorf("building %s: %w", s.what, err)
		}
	}
	klog.Infof("built and staged in %s in %s: bin/ (%s), e2e.test, ginkgo, kubectl, nodes-initialized",
		runDir, time.Since(start).Round(time.Second), strings.Join(slices.Sorted(maps.Keys(paths)), ", "))
	return nil
}

// stagedBinDir is where Build puts the cluster's binaries.
func (d *Deployer) stagedBinDir() string { return filepath.Join(d.common.RunDir(), "bin") }

// goCommand runs go in dir as its own main module, whatever go.work the
// user has, and quotes go's output on failure.
func goCommand(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s in %s failed (%v): %s", strings.Join(args, " "), dir, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// stage puts src at dst: a hard link where both are on one filesystem
// (the cluster's binaries are hundreds of megabytes), else a copy.
func stage(src, dst string) error {
	if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
		return err
	}
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return err
	}
	if os.Link(real, dst) == nil {
		return nil
	}
	in, err := os.Open(real)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// sourceDir is the harness checkout above the working directory: the
// suite, ginkgo and kubectl are built from it.
func sourceDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(data), "module "+pins.ModulePath+"\n") {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("--build: no %s checkout above the working directory %s to build the suite from (run kubetest2 in the checkout: --build compiles the suite from its source)", pins.ModulePath, wd)
		}
	}
}
