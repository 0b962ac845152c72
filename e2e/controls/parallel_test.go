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

package controls

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// ginkgoCLI is $GINKGO, the ginkgo CLI that runs the suite's parallel
// processes (make controls sets it); without it the test is skipped,
// except in CI.
func ginkgoCLI(t *testing.T) string {
	if p := os.Getenv("GINKGO"); p != "" {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatal("GINKGO is not set: make controls sets it to the ginkgo CLI it builds")
	}
	t.Skip("GINKGO is not set: make controls sets it to the ginkgo CLI it builds")
	return ""
}

// TestInterruptLeavesNothing sends SIGINT to a parallel run's process
// group, as a terminal's Ctrl-C does (to the ginkgo CLI alone, the run
// goes on: the CLI passes no signal on), while every process is busy: the
// first with the shared cluster, others with the HA control planes of
// the leader-migration specs. Every process must end its specs' cleanups,
// the first take the cluster down, and nothing be left: no process, no
// cluster state.
func TestInterruptLeavesNothing(t *testing.T) {
	ginkgoCLI(t)
	suite := e2eBinary(t)
	state, artifacts := t.TempDir(), t.TempDir()
	cmd := suiteCommand(t, suite, true, []string{"label-filter=leader-migration || node-lifecycle", "no-color", "timeout=" + controlTimeout.String()},
		[]string{"--provider=fake", "--artifacts=" + artifacts})
	cmd.Env = append(os.Environ(), "CCM_HARNESS_STATE="+state)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// The shared cluster and at least two HA control planes up.
	deadline := time.After(5 * time.Minute)
	for up := 0; up < 3; {
		select {
		case err := <-done:
			t.Fatalf("the run ended (%v) before it was interrupted:\n%s", err, out.String())
		case <-deadline:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("no three clusters up after 5 minutes:\n%s", out.String())
		case <-time.After(500 * time.Millisecond):
		}
		states, _ := filepath.Glob(filepath.Join(state, "*", "state.json"))
		up = len(states)
	}
	t.Logf("interrupting the run's processes with three clusters up")
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("the interrupted run passed:\n%s", out.String())
		}
	case <-time.After(3 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("the run did not end within 3 minutes of Ctrl-C:\n%s", out.String())
	}
	assertNothingLeft(t, state)
	if t.Failed() {
		t.Logf("output:\n%s", out.String())
	}
}
