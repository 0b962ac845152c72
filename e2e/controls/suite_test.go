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
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
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
// ginkgo CLI ($GINKGO). In a process group of its own, so that a Ctrl-C
// reaches it once, through runSuite, which sends the whole group SIGINT:
// the ginkgo CLI passes none on to the processes it runs. Sent SIGINT too
// if the test binary dies first (go test -timeout kills it), which makes
// the suite (or the CLI alone) tear down; the CLI's processes have their
// own Ginkgo timeout, under go test's, after which they tear down.
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

// runSuite runs cmd, unless the test binary was interrupted. The
// parent-death signal goes with the thread that started the child, not
// the process: the start is pinned to a thread that outlives it.
func runSuite(cmd *exec.Cmd) error {
	suites.Lock()
	if suites.interrupted != nil {
		suites.Unlock()
		return fmt.Errorf("not run: the test binary was interrupted (%v)", suites.interrupted)
	}
	runtime.LockOSThread()
	err := cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		suites.Unlock()
		return err
	}
	suites.running[cmd.Process.Pid] = true
	suites.Add(1)
	suites.Unlock()
	defer func() {
		suites.Lock()
		delete(suites.running, cmd.Process.Pid)
		suites.Unlock()
		suites.Done()
	}()
	return cmd.Wait()
}

// suites are the process groups of the suites running, so that an
// interrupt reaches every process of each. A suite killed with the test
// binary would die of its next write to the pipe the test binary read,
// in the middle of its teardown, leaving its cluster (kind's node
// containers, a route, temp dirs) behind; so the test binary outlives
// them.
var suites = struct {
	sync.Mutex
	sync.WaitGroup
	running     map[int]bool // process group IDs
	interrupted os.Signal
}{running: map[int]bool{}}

// interruptWait bounds the teardowns after an interrupt: a kind
// cluster's takes under a minute, a control's Ginkgo grace period and
// cleanups a few.
const interruptWait = 5 * time.Minute

func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) == "suite" {
		interruptedSuite()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		suites.Lock()
		suites.interrupted = s
		for pgid := range suites.running {
			_ = syscall.Kill(-pgid, syscall.SIGINT)
		}
		n := len(suites.running)
		suites.Unlock()
		fmt.Fprintf(os.Stderr, "controls: %v: %d suite(s) told to tear their clusters down; waiting up to %s (again to stop waiting)\n", s, n, interruptWait)
		done := make(chan struct{})
		go func() { suites.Wait(); close(done) }()
		select {
		case <-done:
			// The controls then fail, writing their suites' logs, and
			// remove their temp dirs, unless something else holds
			// them up.
			select {
			case <-sig:
			case <-time.After(30 * time.Second):
			}
		case <-sig:
		case <-time.After(interruptWait):
		}
		os.Exit(130)
	}()
	code := m.Run()
	suites.Lock()
	if suites.interrupted != nil {
		code = 130
	}
	suites.Unlock()
	os.Exit(code)
}

// roleEnv makes this test binary play a part in TestInterruptReachesSuites:
// "binary", the test binary that runs a suite; "suite", the suite.
const roleEnv = "CONTROLS_TEST_ROLE"

// interruptedSuite plays a suite: it says it started, and on SIGINT tears
// down as a suite does, writing lines (to the test binary's pipe) before
// it is done, which it marks in the file $MARK.
func interruptedSuite() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	fmt.Println("started")
	<-sig
	for i := 0; i < 5; i++ {
		time.Sleep(100 * time.Millisecond)
		fmt.Println("tearing down")
	}
	_ = os.WriteFile(os.Getenv("MARK"), []byte("torn down\n"), 0o600)
	os.Exit(1)
}

// TestInterruptReachesSuites interrupts a test binary that runs a suite,
// as Ctrl-C does: the suite must hear it and end its teardown, which
// writes to the test binary, before the test binary exits.
func TestInterruptReachesSuites(t *testing.T) {
	if os.Getenv(roleEnv) == "binary" {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), roleEnv+"=suite")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGINT}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			// Passed on as a control passes its suite's output.
			r := bufio.NewScanner(stdout)
			for r.Scan() {
				fmt.Println("suite:", r.Text())
			}
		}()
		t.Log(runSuite(cmd))
		return
	}
	mark := filepath.Join(t.TempDir(), "mark")
	cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptReachesSuites$", "-test.v")
	cmd.Env = append(os.Environ(), roleEnv+"=binary", "MARK="+mark)
	// A file the test reads while the process writes it.
	out, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(output(out), "suite: started") {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the suite did not start in 30 s:\n%s", output(out))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The test binary alone, as the suite's own process group keeps it
	// from the terminal's Ctrl-C.
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	// The suite is done when the test binary is, or, were it left behind,
	// within its teardown's half second.
	time.Sleep(time.Second)
	if b, rerr := os.ReadFile(mark); rerr != nil {
		t.Fatalf("the suite did not end its teardown once the test binary was interrupted (%v): %v; the test binary's output:\n%s", err, rerr, output(out))
	} else {
		t.Logf("the suite: %s", strings.TrimSpace(string(b)))
	}
	if !strings.Contains(output(out), "suite: tearing down") {
		t.Errorf("the test binary did not pass on the suite's teardown lines:\n%s", output(out))
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("the interrupted test binary exited %d (%v), expected 130", code, err)
	}
}

func output(f *os.File) string {
	b, _ := os.ReadFile(f.Name())
	return string(b)
}
