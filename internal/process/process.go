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

// Package process is the one way the harness runs a component: in its own
// process group, with its output in a log file, a readiness probe, and a stop
// that ends the whole group within a deadline.
//
// Components are real binaries (etcd, kube-apiserver, a CCM, fakecloud), so a
// failure is usually in their log: errors from this package quote its last
// lines rather than asking the user to go and look.
package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Spec says how to run and recognise a ready component.
type Spec struct {
	// Name identifies the component in errors and is the log file's stem.
	Name string
	Path string
	Args []string
	// Env is added to the harness's environment.
	Env []string
	// Dir is the working directory; default the harness's.
	Dir string
	// LogDir receives <Name>.log; it is appended to, so a restart keeps the
	// earlier run's lines.
	LogDir string
	// Ready reports nil once the component serves. Nil means started is ready.
	Ready func(ctx context.Context) error
	// ReadyTimeout bounds the wait for Ready; default 60 s.
	ReadyTimeout time.Duration
	// Unprivileged runs it, when the harness is root, as root without any
	// capability: it reads the harness's files, which root owns, but not
	// a folder another user owns (the cloud's admin credentials), and it
	// cannot trace or signal its way past that. For the CCM under test.
	Unprivileged bool
	// Cleanup, if set, is a command run once the process has stopped, and
	// before it starts, for what outlives its process group: a container
	// is its own session, and its runtime's state is kept on disk.
	Cleanup []string
	// RestartWhen, if set, is asked about an exit that Stop did not cause,
	// with the log's path: true starts the component again, as a kubelet
	// starts a static pod again, rather than counting the exit a crash.
	// For managers under coordinated leader election, which exit whenever
	// they yield their lease to a candidate the API server prefers. An
	// exit it says no to is a crash, as without it.
	RestartWhen func(logPath string) bool
}

// LogPath is where the component's output goes.
func (s Spec) LogPath() string { return filepath.Join(s.LogDir, s.Name+".log") }

// Process is a started component.
type Process struct {
	spec     Spec
	detached bool

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // set before exited is closed
	// stopping is set by Stop, so an exit it caused is not a crash.
	stopping bool
	// halted is set by Stop and cleared only by Restart: a start again
	// after an exit (RestartWhen) that races a Stop must not leave a
	// process running.
	halted bool
	// restarting is set from an exit RestartWhen takes until the component
	// runs again; restartErr is why it did not.
	restarting bool
	restartErr error
	// onRestart, if set, is told of a start again (the group's records).
	onRestart func()
}

// errHalted is a start again that a Stop overtook: no failure.
var errHalted = errors.New("stopped while it started again")

// restartDelay is the pause before a component that exited is started
// again: a kubelet's first back-off, shortened, since a manager here
// starts in a second.
const restartDelay = time.Second

// Start runs spec and waits until it is ready. If it exits or never becomes
// ready, Start stops it and returns an error quoting its last log lines.
// A detached process outlives the harness (for `up`); an attached one is
// killed by the kernel if the harness dies without cleaning up.
func Start(ctx context.Context, spec Spec, detached bool) (*Process, error) {
	p := &Process{spec: spec, detached: detached}
	if err := p.start(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Process) start(ctx context.Context) error {
	spec := p.spec
	if _, err := os.Stat(spec.Path); err != nil {
		return fmt.Errorf("%s: binary %s: %w", spec.Name, spec.Path, err)
	}
	// Logs may quote secrets until the run's end redacts them: the
	// owner's only till then (reports.Redact).
	if err := os.MkdirAll(spec.LogDir, 0o700); err != nil {
		return fmt.Errorf("%s: log directory: %w", spec.Name, err)
	}
	logFile, err := os.OpenFile(spec.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("%s: log file: %w", spec.Name, err)
	}
	runCleanup(spec.Cleanup)
	fmt.Fprintf(logFile, "=== %s %s %s\n", time.Now().Format(time.RFC3339Nano), spec.Path, strings.Join(spec.Args, " "))

	// Not exec.CommandContext: the caller's ctx bounds start-up, not the
	// component's life.
	path, args := spec.Path, spec.Args
	if spec.Unprivileged && os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			return fmt.Errorf("%s: setpriv, which runs it without root's capabilities, is not installed: install util-linux", spec.Name)
		}
		args = append([]string{"--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--no-new-privs", "--", path}, args...)
		path = setpriv
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Dir = spec.Dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if !p.detached {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("%s: start %s: %w", spec.Name, spec.Path, err)
	}
	exited := make(chan struct{})
	p.mu.Lock()
	if p.halted {
		// Stopped while this start again was on its way.
		p.mu.Unlock()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		logFile.Close()
		return errHalted
	}
	p.cmd, p.exited, p.err, p.stopping = cmd, exited, nil, false
	p.mu.Unlock()
	go func() {
		err := cmd.Wait()
		logFile.Close()
		p.mu.Lock()
		p.err = err
		again := !p.stopping && spec.RestartWhen != nil && spec.RestartWhen(spec.LogPath())
		p.restarting = again
		p.mu.Unlock()
		close(exited)
		if again {
			p.startAgain()
		}
	}()

	if err := p.waitReady(ctx); err != nil {
		_ = p.Stop(5 * time.Second)
		return err
	}
	return nil
}

// The bounds of the interval between a starting component's readiness
// probes.
const (
	minProbeInterval = 25 * time.Millisecond
	maxProbeInterval = 200 * time.Millisecond
)

func (p *Process) waitReady(parent context.Context) error {
	spec := p.spec
	if spec.Ready == nil {
		return nil
	}
	timeout := spec.ReadyTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	// A bring-up waits on a probe at every step, and each wait loses half
	// an interval on average: probes are cheap, seconds are not. But a
	// component still starting after a second is slow, most often on a
	// loaded machine, where forty probes a second of each of a dozen
	// starting API servers (a TLS handshake each, after a probe that
	// timed out) were load of their own: the interval doubles up to
	// maxProbeInterval.
	interval := minProbeInterval
	var last error
	for {
		probeCtx, probeCancel := context.WithTimeout(ctx, 2*time.Second)
		last = spec.Ready(probeCtx)
		probeCancel()
		if last == nil {
			return nil
		}
		wait := time.NewTimer(interval)
		interval = min(2*interval, maxProbeInterval)
		select {
		case <-p.Exited():
			return fmt.Errorf("%s exited at start (%v)%s", spec.Name, p.ExitErr(), LogTail(spec.LogPath(), 15))
		case <-ctx.Done():
			// Only our own deadline means the component was too slow; the
			// caller's (a deadline or Ctrl-C) interrupted us.
			if parent.Err() == nil {
				return fmt.Errorf("%s did not become ready within %s (last probe: %v)%s", spec.Name, timeout, last, LogTail(spec.LogPath(), 15))
			}
			return fmt.Errorf("%s: start-up interrupted: %w", spec.Name, ctx.Err())
		case <-wait.C:
		}
		wait.Stop()
	}
}

// startAgain starts the component again after an exit RestartWhen took,
// unless Stop came first.
func (p *Process) startAgain() {
	time.Sleep(restartDelay)
	err := p.start(context.Background())
	p.mu.Lock()
	p.restarting = false
	if err != nil && !errors.Is(err, errHalted) {
		p.restartErr = err
	}
	notify := p.onRestart
	p.mu.Unlock()
	if err == nil && notify != nil {
		notify()
	}
}

// died is an error if the process has exited without Stop; a restart in
// progress does not count.
func (p *Process) died() error {
	p.mu.Lock()
	exited, stopping, restarting, restartErr := p.exited, p.stopping, p.restarting, p.restartErr
	p.mu.Unlock()
	if restartErr != nil {
		return fmt.Errorf("%s exited, and did not start again: %w", p.spec.Name, restartErr)
	}
	select {
	case <-exited:
		if stopping || restarting {
			return nil
		}
		return fmt.Errorf("%s exited unexpectedly (%v)%s", p.spec.Name, p.ExitErr(), LogTail(p.spec.LogPath(), 15))
	default:
		return nil
	}
}

// Name is the component's name.
func (p *Process) Name() string { return p.spec.Name }

// Spec is how the process was started.
func (p *Process) Spec() Spec { return p.spec }

// Exited is closed when the process has ended.
func (p *Process) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// ExitErr is the process's exit status once Exited is closed.
func (p *Process) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Record identifies the running process for a later `down` from another
// harness process.
func (p *Process) Record() Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	pid := p.cmd.Process.Pid
	return Record{Name: p.spec.Name, PID: pid, StartTicks: startTicks(pid), Log: p.spec.LogPath(), Cleanup: p.spec.Cleanup}
}

// Stop ends the process group: SIGTERM, then SIGKILL after grace. It is safe
// to call more than once and on a process that already exited.
func (p *Process) Stop(grace time.Duration) error {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.stopping, p.halted = true, true
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	stopGroup(cmd.Process.Pid, exited, grace)
	runCleanup(p.spec.Cleanup)
	return nil
}

// runCleanup runs a Cleanup command; it has nothing to report when there
// was nothing to clean.
func runCleanup(argv []string) {
	if len(argv) == 0 {
		return
	}
	_ = exec.Command(argv[0], argv[1:]...).Run()
}

// Restart stops the process and starts it again with the same spec, waiting
// for it to be ready.
func (p *Process) Restart(ctx context.Context, grace time.Duration) error {
	if err := p.Stop(grace); err != nil {
		return err
	}
	p.mu.Lock()
	p.halted, p.restartErr = false, nil
	p.mu.Unlock()
	return p.start(ctx)
}

// stopGroup signals the group and waits on done (or, for a process that is
// not our child, on its disappearance).
func stopGroup(pid int, done <-chan struct{}, grace time.Duration) {
	gone := func() bool {
		if done != nil {
			select {
			case <-done:
				return true
			default:
				return false
			}
		}
		// A process that is not our child lingers as a zombie until its
		// parent (often init) reaps it; dead is dead.
		return syscall.Kill(pid, 0) == syscall.ESRCH || startTicks(pid) == 0
	}
	if gone() {
		// The leader is gone, but children it forked may still hold the group.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if gone() {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	for i := 0; i < 100 && !gone(); i++ {
		time.Sleep(20 * time.Millisecond)
	}
}

// LogTail formats the last n lines of a log for an error message, or "" if
// the log cannot be read.
func LogTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return fmt.Sprintf("; last log lines (%s):\n    %s", path, strings.Join(lines, "\n    "))
}

// klogError is a klog error line: its header, then the message, which a
// structured line ("Unhandled Error" err="...") carries in err.
var (
	klogError  = regexp.MustCompile(`^E\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [^\]]+\] (.*)$`)
	klogErrVal = regexp.MustCompile(`\berr="((?:[^"\\]|\\.)*)"`)
)

// LastError is the message of the last klog error line in the log at
// path, shortened to one line of at most 300 characters; "" if none.
func LastError(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		m := klogError.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		msg := m[1]
		if v := klogErrVal.FindStringSubmatch(msg); v != nil {
			if u, err := strconv.Unquote(`"` + v[1] + `"`); err == nil {
				msg = u
			} else {
				msg = v[1]
			}
		}
		msg = strings.Join(strings.Fields(msg), " ")
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		return msg
	}
	return ""
}
