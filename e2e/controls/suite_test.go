package controls

import (
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// controlTimeout is a control suite's Ginkgo timeout: well under make
// controls' go test -timeout, so that a hung control fails and tears its
// cluster down before go test kills the test binary.
const controlTimeout = 20 * time.Minute

// suiteCommand is an e2e.test run of a control: in a process group of
// its own (a Ctrl-C to make reaches it through its parent, not twice),
// sent SIGINT, which makes the suite tear its cluster down, if the test
// binary dies first (go test -timeout kills it).
func suiteCommand(suite string, args ...string) *exec.Cmd {
	cmd := exec.Command(suite, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGINT}
	return cmd
}

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
