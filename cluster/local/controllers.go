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

package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/internal/container"
)

var (
	_ cluster.ControllerLister    = (*Runtime)(nil)
	_ cluster.ControlPlaneRuntime = (*Runtime)(nil)
)

// ControlPlanes: a local cluster's managers are processes, and a spec's
// own run beside them (controlPlane).
func (r *Runtime) ControlPlanes() bool { return true }

// Controllers asks the manager's binary which controllers it registers:
// the names its --help lists under --controllers, on by default or not.
// A manager matches a LeaderMigrationConfiguration's names against these
// exactly; aliases and older names match nothing.
func (r *Runtime) Controllers(ctx context.Context, spec cluster.Spec, m cluster.ManagerSpec) ([]string, error) {
	m, err := complete(spec, m)
	if err != nil {
		return nil, err
	}
	bins, err := spec.Binaries.Paths(ctx, m.Binary)
	if err != nil {
		return nil, fmt.Errorf("manager %s: %w", m.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var out []byte
	if img := spec.Binaries.Image(m.Binary); img != nil {
		dir, derr := os.MkdirTemp("", "ccm-harness-help-")
		if derr != nil {
			return nil, derr
		}
		defer os.RemoveAll(dir)
		out, err = container.Spec{
			ID: filepath.Base(dir), Image: img, Args: []string{"--help"},
			Bundle: filepath.Join(dir, "bundle"), StateRoot: filepath.Join(dir, "runc"),
		}.Output(ctx)
	} else {
		out, err = exec.CommandContext(ctx, bins[m.Binary.Name], "--help").CombinedOutput()
	}
	ctrls := ParseControllers(string(out))
	if len(ctrls) == 0 {
		return nil, fmt.Errorf("manager %s: %s --help lists no controllers under --controllers (%v)", m.Name, m.Binary, err)
	}
	return ctrls, nil
}

var controllerList = regexp.MustCompile(`(?:All|Disabled-by-default) controllers: ([a-z0-9, -]+)`)

// ParseControllers reads the controller names a controller-manager's
// --help lists after "All controllers:" and "Disabled-by-default
// controllers:", each list a line of its own (k8s.io/controller-manager's
// options; the help is not wrapped where its output is no terminal).
func ParseControllers(help string) []string {
	var out []string
	for _, m := range controllerList.FindAllStringSubmatch(help, -1) {
		for _, n := range strings.Split(m[1], ",") {
			if n = strings.Join(strings.Fields(n), ""); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}
