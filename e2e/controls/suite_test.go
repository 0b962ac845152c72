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
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// controlTimeout is a control suite's Ginkgo timeout: well under make
// controls' go test -timeout, so that a hung control fails and tears its
// cluster down before go test kills the test binary.
const controlTimeout = 20 * time.Minute

// suiteCommand is an e2e.test run of a control, in the source tree's
// root, with Ginkgo's flags (without their -ginkgo. prefix) and the
// suite's: in one process, or in controlProcs parallel ones through the
// ginkgo CLI ($GINKGO). In a
// process group of its own (a Ctrl-C to make reaches it through its
// parent, not twice), sent SIGINT, which makes the suite tear its cluster
// down, if the test binary dies first (go test -timeout kills it). The
// ginkgo CLI passes no SIGINT on to the processes it runs; theirs is
// their own Ginkgo timeout, under go test's, after which they tear down.
func suiteCommand(t *testing.T, suite string, parallel bool, ginkgoArgs, args []string) *exec.Cmd {
	var cmd *exec.Cmd
	if cli := os.Getenv("GINKGO"); parallel && cli != "" {
		cliArgs := []string{fmt.Sprintf("--procs=%d", controlProcs), "--randomize-all"}
		for _, a := range ginkgoArgs {
			cliArgs = append(cliArgs, "--"+a)
		}
		// The CLI runs the suite in the binary's folder.
		cmd = exec.Command(cli, append(append(cliArgs, suite, "--", "--workdir="+sourceRoot(t)), args...)...)
	} else {
		for _, a := range ginkgoArgs {
			args = append(args, "-ginkgo."+a)
		}
		cmd = exec.Command(suite, args...)
	}
	cmd.Dir = sourceRoot(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGINT}
	return cmd
}

// controlProcs are a parallel control's processes: fewer than make e2e's
// six, as four controls run at once.
const controlProcs = 3

// runSuite runs cmd. The parent-death signal goes with the thread that
// started the child, not the process: the start is pinned to a thread
// that outlives it.
func runSuite(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	err := cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		return err
	}
	return cmd.Wait()
}
