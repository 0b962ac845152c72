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

package process

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// sh runs script under /bin/sh as the component called name, logging to dir.
func sh(dir, name, script string) Spec {
	return Spec{Name: name, Path: "/bin/sh", Args: []string{"-c", script}, LogDir: dir}
}

// fileReady is a probe that passes once path exists and is not empty: the
// scripts below write a file when they have reached the state a test needs.
func fileReady(path string) func(context.Context) error {
	return func(context.Context) error {
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		if st.Size() == 0 {
			return fmt.Errorf("%s is empty", path)
		}
		return nil
	}
}

func neverReady(context.Context) error { return errors.New("not serving yet") }

// running reports whether pid names a live process. A zombie counts as gone:
// a killed grandchild is reaped by whoever adopted it, not by this test, and
// until then it still answers kill(pid, 0).
func running(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	fields := strings.Fields(s[i+1:])
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// waitGone allows for the moment between SIGKILL and the kernel tearing a
// process down.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("pid file %s: %v", path, err)
	}
	return pid
}

func startOrFail(t *testing.T, spec Spec) *Process {
	t.Helper()
	p, err := Start(context.Background(), spec, false)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = p.Stop(time.Second) })
	return p
}

func TestStartWaitsForReady(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "serving")
	// The component becomes ready well after it starts, so a Start that
	// returned on exec alone would find no marker.
	spec := sh(dir, "slow", "sleep 0.4; echo yes > "+marker+"; exec sleep 1000")
	spec.Ready = fileReady(marker)
	begin := time.Now()
	p := startOrFail(t, spec)
	if err := fileReady(marker)(context.Background()); err != nil {
		t.Fatalf("Start returned before the component was ready: %v", err)
	}
	if d := time.Since(begin); d < 400*time.Millisecond {
		t.Fatalf("Start returned after %s, before the component could have been ready", d)
	}
	select {
	case <-p.Exited():
		t.Fatalf("the component exited: %v", p.ExitErr())
	default:
	}
	if !p.Record().Alive() {
		t.Fatalf("record of a running component is not alive: %+v", p.Record())
	}
}

func TestStartFailures(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		timeout time.Duration
		// within bounds how long Start may take to give up.
		within time.Duration
		want   []string
		absent []string
		// killed: the script wrote its pid, and Start must have ended it.
		killed bool
	}{
		{
			name: "exits at start",
			// More lines than the error quotes, so the quote is a tail.
			script: "for i in $(seq 1 20); do echo line-$i; done; echo 'fatal: config is bad' >&2; exit 3",
			want:   []string{"exits-at-start exited at start", "exit status 3", "fatal: config is bad", "line-20", "line-7"},
			absent: []string{"line-6\n"},
			within: 10 * time.Second,
		},
		{
			name:    "never ready",
			script:  `echo star""ting; echo $$ > pid; exec sleep 1000`, // the quotes keep the command line in the log from matching
			timeout: 500 * time.Millisecond,
			want:    []string{"never-ready did not become ready within 500ms", "not serving yet", "starting"},
			within:  500*time.Millisecond + 3*time.Second,
			killed:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			name := strings.ReplaceAll(tt.name, " ", "-")
			spec := sh(dir, name, "cd "+dir+" && "+tt.script)
			spec.Ready = neverReady
			spec.ReadyTimeout = tt.timeout
			begin := time.Now()
			p, err := Start(context.Background(), spec, false)
			took := time.Since(begin)
			if err == nil {
				_ = p.Stop(time.Second)
				t.Fatal("Start succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(err.Error()+"\n", a) {
					t.Errorf("error contains %q, older than the tail it should quote:\n%v", a, err)
				}
			}
			if !strings.Contains(err.Error(), spec.LogPath()) {
				t.Errorf("error does not name the log %s:\n%v", spec.LogPath(), err)
			}
			if took > tt.within {
				t.Errorf("Start took %s to give up, want at most %s", took, tt.within)
			}
			if tt.killed {
				waitGone(t, readPID(t, filepath.Join(dir, "pid")), "the component that never became ready")
			}
		})
	}
}

func TestStartInterrupted(t *testing.T) {
	tests := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		bug  string
	}{
		{
			// Ctrl-C in ccm-harness cancels its context.
			name: "cancelled",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(300*time.Millisecond, cancel)
				return ctx, cancel
			},
		},
		{
			// A test suite's own deadline ends the wait long before ReadyTimeout.
			name: "caller's deadline",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 300*time.Millisecond)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.bug != "" {
				t.Skip(tt.bug)
			}
			dir := t.TempDir()
			spec := sh(dir, "interrupted", "echo $$ > "+filepath.Join(dir, "pid")+"; exec sleep 1000")
			spec.Ready = neverReady
			ctx, cancel := tt.ctx()
			defer cancel()
			_, err := Start(ctx, spec, false)
			if err == nil || !strings.Contains(err.Error(), "interrupted: start-up interrupted") {
				t.Fatalf("Start with an ended context: got %v, want an error saying start-up was interrupted", err)
			}
			waitGone(t, readPID(t, filepath.Join(dir, "pid")), "the interrupted component")
		})
	}
}

func TestStartMissingBinary(t *testing.T) {
	dir := t.TempDir()
	_, err := Start(context.Background(), Spec{Name: "ghost", Path: filepath.Join(dir, "nosuch"), LogDir: dir}, false)
	if err == nil || !strings.Contains(err.Error(), "ghost: binary "+filepath.Join(dir, "nosuch")) {
		t.Fatalf("got %v, want an error naming the component and its missing binary", err)
	}
}

func TestStopKillsProcessGroup(t *testing.T) {
	tests := []struct {
		name  string
		trap  string
		grace time.Duration
		// minTook shows SIGKILL waited for the grace period.
		minTook time.Duration
	}{
		{name: "leader exits on SIGTERM", grace: 5 * time.Second},
		// sh passes an ignored SIGTERM on to the sleep it forks, so only the
		// SIGKILL after the grace period ends either of them.
		{name: "group ignores SIGTERM", trap: `trap "" TERM; `, grace: 300 * time.Millisecond, minTook: 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			gcFile := filepath.Join(dir, "grandchild.pid")
			spec := sh(dir, "parent", tt.trap+"sleep 1000 & echo $! > "+gcFile+"; wait")
			spec.Ready = fileReady(gcFile)
			p := startOrFail(t, spec)
			leader := p.Record().PID
			grandchild := readPID(t, gcFile)
			if !running(grandchild) {
				t.Fatalf("grandchild %d is not running before Stop", grandchild)
			}
			begin := time.Now()
			if err := p.Stop(tt.grace); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			took := time.Since(begin)
			waitGone(t, leader, "the leader")
			waitGone(t, grandchild, "the grandchild")
			if took < tt.minTook {
				t.Errorf("Stop took %s, less than the %s grace period a SIGTERM-ignoring group must get", took, tt.minTook)
			}
			if took > tt.grace+3*time.Second {
				t.Errorf("Stop took %s, grace was %s", took, tt.grace)
			}
		})
	}
}

func TestStopIsIdempotent(t *testing.T) {
	tests := []struct {
		name   string
		script string
	}{
		{name: "running", script: "exec sleep 1000"},
		{name: "already exited", script: "exit 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := startOrFail(t, sh(dir, "c", tt.script))
			rec := p.Record()
			for i := 1; i <= 3; i++ {
				begin := time.Now()
				if err := p.Stop(5 * time.Second); err != nil {
					t.Fatalf("Stop #%d: %v", i, err)
				}
				// Waiting out the grace period would mean Stop could not
				// tell the process was gone.
				if d := time.Since(begin); d > 2*time.Second {
					t.Errorf("Stop #%d took %s", i, d)
				}
				select {
				case <-p.Exited():
				default:
					t.Fatalf("Stop #%d returned with the process running", i)
				}
			}
			waitGone(t, rec.PID, "the component")
		})
	}
}

func TestRecordAlive(t *testing.T) {
	dir := t.TempDir()
	p := startOrFail(t, sh(dir, "c", "exec sleep 1000"))
	rec := p.Record()
	if rec.Name != "c" || rec.Log != filepath.Join(dir, "c.log") || rec.StartTicks == 0 {
		t.Fatalf("record %+v: want name c, log %s and the start time", rec, filepath.Join(dir, "c.log"))
	}

	// A recycled PID looks like this: same number, different start time.
	for name, r := range map[string]Record{
		"wrong start ticks": {Name: "c", PID: rec.PID, StartTicks: rec.StartTicks + 1},
		"no start ticks":    {Name: "c", PID: rec.PID},
		"no pid":            {Name: "c", StartTicks: rec.StartTicks},
	} {
		if r.Alive() {
			t.Errorf("%s: %+v is alive, want not ours", name, r)
		}
		// Stopping a record that is not ours must leave the process alone.
		r.Stop(time.Second)
		if !running(rec.PID) {
			t.Fatalf("%s: Record.Stop killed a process it does not own", name)
		}
	}
	if !rec.Alive() {
		t.Fatalf("record of the running process %+v is not alive", rec)
	}

	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	if rec.Alive() {
		t.Fatalf("record %+v is alive after Stop", rec)
	}
}

// TestRecordStop is `down` from another harness process: only the record is
// left, the process is not our child.
func TestRecordStop(t *testing.T) {
	dir := t.TempDir()
	gcFile := filepath.Join(dir, "grandchild.pid")
	spec := sh(dir, "c", "sleep 1000 & echo $! > "+gcFile+"; wait")
	spec.Ready = fileReady(gcFile)
	p := startOrFail(t, spec)
	rec := p.Record()
	rec.Stop(2 * time.Second)
	waitGone(t, rec.PID, "the leader")
	waitGone(t, readPID(t, gcFile), "the grandchild")
	if rec.Alive() {
		t.Fatalf("record %+v is alive after Record.Stop", rec)
	}
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// TestRecordStopOrphan is `down` as it really runs: the cluster's processes
// were orphaned when `up` exited, and whoever adopted them reaps them when it
// likes; a container's init may never. The test adopts the orphan itself and
// does not reap it, so it stays a zombie once it has died.
func TestRecordStopOrphan(t *testing.T) {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}
	defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 0, 0)

	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// setsid makes sleep lead its own process group, as every component
	// does; sh then exits and orphans it.
	if out, err := exec.Command("/bin/sh", "-c", "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > "+pidFile).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	pid := readPID(t, pidFile)
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		_, _ = syscall.Wait4(pid, nil, 0, nil)
	})
	// Until setsid has become sleep, the orphan may not lead its group yet.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); string(comm) == "sleep\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphan %d did not become sleep", pid)
		}
	}
	rec := Record{Name: "orphan", PID: pid, StartTicks: startTicks(pid)}
	if !rec.Alive() {
		t.Fatalf("orphan %d is not alive before Stop", pid)
	}

	const grace = 2 * time.Second
	begin := time.Now()
	rec.Stop(grace)
	took := time.Since(begin)
	if running(pid) {
		t.Fatalf("orphan %d still runs after Record.Stop", pid)
	}
	// sleep dies on SIGTERM at once; waiting out the grace period means
	// Stop could not tell.
	if took >= grace {
		t.Errorf("Record.Stop took %s for a process that died on SIGTERM (grace %s)", took, grace)
	}
	if rec.Alive() {
		t.Errorf("record of the dead orphan is alive")
	}
}

func TestGroupStopAllReverseOrder(t *testing.T) {
	dir := t.TempDir()
	order := filepath.Join(dir, "order")
	var g Group
	var last []Record
	changes := 0
	g.OnChange = func(r []Record) { changes++; last = r }
	names := []string{"etcd", "apiserver", "ccm"}
	for _, n := range names {
		ready := filepath.Join(dir, n+".ready")
		// The trap is set before the ready file appears, so every member
		// records its own stop.
		spec := sh(dir, n, fmt.Sprintf(`trap 'echo %s >> %s; exit 0' TERM; echo yes > %s; sleep 1000 & wait`, n, order, ready))
		spec.Ready = fileReady(ready)
		if _, err := g.Start(context.Background(), spec); err != nil {
			g.StopAll(time.Second)
			t.Fatal(err)
		}
	}
	if got := len(g.Records()); got != 3 || changes != 3 || len(last) != 3 {
		t.Fatalf("after 3 starts: %d records, %d OnChange calls, last with %d records; want 3 each", got, changes, len(last))
	}
	g.StopAll(5 * time.Second)
	data, err := os.ReadFile(order)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(string(data)), []string{"ccm", "apiserver", "etcd"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("stop order %v, want %v (last started first)", got, want)
	}
	if len(g.Records()) != 0 || len(last) != 0 {
		t.Fatalf("after StopAll: %d records, OnChange last saw %d; want none", len(g.Records()), len(last))
	}
}

func TestGroupStopOne(t *testing.T) {
	dir := t.TempDir()
	var g Group
	t.Cleanup(func() { g.StopAll(time.Second) })
	var pids []int
	for _, n := range []string{"a", "b"} {
		p, err := g.Start(context.Background(), sh(dir, n, "exec sleep 1000"))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, p.Record().PID)
	}
	g.Stop("a", time.Second)
	waitGone(t, pids[0], "a")
	if !running(pids[1]) {
		t.Fatal("stopping a also stopped b")
	}
	if recs := g.Records(); len(recs) != 1 || recs[0].Name != "b" {
		t.Fatalf("records after stopping a: %+v, want only b", recs)
	}
	g.Stop("nosuch", time.Second) // must not stop or forget anyone else
	if len(g.Records()) != 1 {
		t.Fatal("stopping an unknown member changed the group")
	}
}

func TestCheckPortFree(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	heldPort := held.Addr().(*net.TCPAddr).Port
	free, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		port int
		want []string // empty: the port is free
	}{
		{name: "held", port: heldPort, want: []string{strconv.Itoa(heldPort), "in use", "--apiserver-port"}},
		{name: "free", port: free},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPortFree(tt.port, "--apiserver-port")
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("free port %d reported: %v", tt.port, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("held port %d reported free", tt.port)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLogTail(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	five := write("five.log", "one\ntwo\nthree\nfour\nfive\n")
	noNewline := write("nonl.log", "one\ntwo")
	empty := write("empty.log", "")

	tests := []struct {
		name string
		path string
		n    int
		want string
	}{
		{name: "last lines", path: five, n: 2, want: "; last log lines (" + five + "):\n    four\n    five"},
		{name: "fewer lines than n", path: five, n: 10, want: "; last log lines (" + five + "):\n    one\n    two\n    three\n    four\n    five"},
		{name: "no final newline", path: noNewline, n: 1, want: "; last log lines (" + noNewline + "):\n    two"},
		{name: "empty log", path: empty, n: 3, want: ""},
		{name: "missing log", path: filepath.Join(dir, "nosuch.log"), n: 3, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LogTail(tt.path, tt.n); got != tt.want {
				t.Fatalf("LogTail(%s, %d) =\n%q\nwant\n%q", filepath.Base(tt.path), tt.n, got, tt.want)
			}
		})
	}
}

func TestLastError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ccm.log")
	log := `I1125 17:10:00.883000    2987 node_controller.go:100] starting
E1125 17:10:00.883246    2987 route_controller.go:198] Couldn't reconcile node routes: error listing routes: unable to find route table
E1125 17:10:00.884249    2987 node_controller.go:247] "Unhandled Error" err="error syncing 'node-1': failed to get instance metadata for node node-1: instance not found, requeuing" logger="UnhandledError"
I1125 17:10:01.000000    2987 node_controller.go:100] still here
`
	if err := os.WriteFile(p, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := LastError(p), "error syncing 'node-1': failed to get instance metadata for node node-1: instance not found, requeuing"; got != want {
		t.Errorf("LastError: %q, want %q", got, want)
	}
	if got := LastError(filepath.Join(t.TempDir(), "none.log")); got != "" {
		t.Errorf("LastError of no log: %q", got)
	}
}

// A port the kernel would give an outgoing connection is one another
// cluster's client may take before our component binds it.
func TestFreePortOutsideEphemeralRange(t *testing.T) {
	hi := ephemeralMin()
	if hi-lowestPort < 1000 {
		t.Skipf("the ephemeral range starts at %d: FreePort takes the kernel's choice", hi)
	}
	seen := map[int]bool{}
	for range 100 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if port < lowestPort || port >= hi {
			t.Fatalf("FreePort gave %d, outside [%d, %d)", port, lowestPort, hi)
		}
		if seen[port] {
			t.Fatalf("FreePort gave %d twice", port)
		}
		seen[port] = true
	}
}

// TestRestartWhen: an exit the spec's RestartWhen takes (a manager that
// yielded its lease, saying so in its log) starts the component again, is
// no crash, and tells the group's records; an exit it does not take is a
// crash; and a Stop ends it for good.
func TestRestartWhen(t *testing.T) {
	dir := t.TempDir()
	second := filepath.Join(dir, "second")
	// The first run says it lost its lease and exits; the second serves.
	spec := sh(dir, "kcm", `if [ -e `+second+` ]; then echo again > `+second+`.up; exec sleep 1000; fi
echo "leaderelection lost"; touch `+second+`; exit 1`)
	spec.RestartWhen = func(log string) bool {
		data, _ := os.ReadFile(log)
		return strings.Contains(string(data), "leaderelection lost")
	}
	changes := 0
	var mu sync.Mutex
	g := &Group{OnChange: func([]Record) { mu.Lock(); changes++; mu.Unlock() }}
	t.Cleanup(func() { g.StopAll(time.Second) })
	if _, err := g.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for fileReady(second+".up")(context.Background()) != nil {
		if err := g.Dead(); err != nil {
			t.Fatalf("an exit RestartWhen takes counted as a crash: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the component was not started again after its first exit")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if err := g.Dead(); err != nil {
		t.Fatalf("started again, and still dead: %v", err)
	}
	mu.Lock()
	if changes < 2 {
		t.Errorf("the group's records were told %d times, want at the start and at the start again", changes)
	}
	mu.Unlock()
	data, _ := os.ReadFile(spec.LogPath())
	if n := strings.Count(string(data), "=== "); n != 2 {
		t.Errorf("log has %d runs, want 2:\n%s", n, data)
	}
	g.StopAll(time.Second)
	time.Sleep(restartDelay + 500*time.Millisecond)
	data, _ = os.ReadFile(spec.LogPath())
	if n := strings.Count(string(data), "=== "); n != 2 {
		t.Errorf("started again after Stop: log has %d runs:\n%s", n, data)
	}

	// An exit whose log does not say so is a crash, as without RestartWhen.
	crash := sh(dir, "crash", `sleep 0.2; echo "panic: boom"; exit 2`)
	crash.RestartWhen = spec.RestartWhen
	p := startOrFail(t, crash)
	<-p.Exited()
	if err := p.died(); err == nil || !strings.Contains(err.Error(), "crash exited unexpectedly") {
		t.Errorf("an exit RestartWhen does not take: %v, want a crash", err)
	}
}
