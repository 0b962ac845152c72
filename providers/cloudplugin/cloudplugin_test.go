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

package cloudplugin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// script is a plugin: a shell script whose body answers.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "plugin")
	// Written under the fork lock: a parallel test that forks while this
	// file is open for writing leaves it open in the child until that
	// execs, and running the script then fails with "text file busy"
	// (seen in make test; Go issue 22315).
	syscall.ForkLock.Lock()
	err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755)
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const ok = `{"apiVersion":"` + APIVersion + `","kind":"Response"`

// TestBadAnswers: every way a plugin can answer badly is one line that
// names the plugin, the question and what was wrong, quoting the plugin.
func TestBadAnswers(t *testing.T) {
	for _, c := range []struct {
		name, body string
		verb       Verb
		want       string
	}{
		{"not JSON", `echo 'instance: i-1'`, Instance, `its answer is not a Response of ` + APIVersion + `: invalid character 'i' looking for beginning of value (stdout began "instance: i-1\n")`},
		{"nothing", `true`, Instance, "its answer is not a Response of " + APIVersion + ": EOF"},
		{"unknown field", `echo '` + ok + `,"instances":[]}'`, Instance, `json: unknown field "instances"`},
		{"wrong version", `echo '{"apiVersion":"v0","kind":"Response"}'`, Capabilities, `it answered apiVersion "v0" kind "Response", want "` + APIVersion + `" "Response"`},
		{"wrong kind", `echo '{"apiVersion":"` + APIVersion + `","kind":"Request"}'`, Capabilities, `kind "Request"`},
		{"exit with a message", `echo 'debug line' >&2; echo 'server node-a: 403 Forbidden' >&2; exit 3`, Instance, "exit status 3: server node-a: 403 Forbidden"},
		{"exit silently", `exit 1`, Stop, "exit status 1: (nothing on stderr)"},
		{"no instance", `echo '` + ok + `}'`, Instance, `no "instance" in the answer`},
		{"no instance from create", `echo '` + ok + `}'`, Create, `no "instance" in the answer`},
		{"no provider ID", `echo '` + ok + `,"instance":{"zone":"z"}}'`, Instance, "instance: providerID is empty"},
		{"bad address", `echo '` + ok + `,"instance":{"providerID":"x://1","addresses":[{"type":"Private","address":"10.0.0.1"}]}}'`, Instance, `address {Type:Private Address:10.0.0.1}`},
		{"unknown verb", `echo '` + ok + `,"verbs":["instance","reboot"]}'`, Capabilities, `verbs: "reboot" is none of`},
		{"bad listener", `echo '` + ok + `,"loadBalancers":[{"name":"a","service":"ns/s","listeners":[{"port":80,"protocol":"HTTP"}],"backends":[]}]}'`, LoadBalancers, "listener {Port:80 Protocol:HTTP NodePort:0}"},
		{"nameless load balancer", `echo '` + ok + `,"loadBalancers":[{"service":"ns/s","listeners":[],"backends":[]}]}'`, LoadBalancers, "a load balancer has no name"},
		{"nameless route", `echo '` + ok + `,"routes":[{"destinationCIDR":"10.0.0.0/24","targetNode":"n"}]}'`, Routes, "want a name and a destinationCIDR"},
		{"timeout", `sleep 5`, Routes, "no answer within 200ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// A generous timeout but for the timeout's own case: a shell's
			// start took over a second on a busy CI machine, and the
			// case it failed was not about time.
			timeout := 10 * time.Second
			if c.name == "timeout" {
				timeout = 200 * time.Millisecond
			}
			p := &Plugin{Command: script(t, c.body), Timeout: timeout}
			start := time.Now()
			_, err := p.Ask(context.Background(), Request{Verb: c.verb, Node: "node-a"})
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v\nwant one line containing %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "cloud plugin "+p.Command+", asked "+string(c.verb)) {
				t.Errorf("%v: want it to name the plugin and the question", err)
			}
			if c.name == "timeout" && time.Since(start) > 3*time.Second {
				t.Errorf("took %s: a timed-out plugin's children must not hold the harness", time.Since(start))
			}
		})
	}
}

// TestNoPlugin: a missing or unrunnable plugin says which and how to fix it.
func TestNoPlugin(t *testing.T) {
	p := &Plugin{Command: filepath.Join(t.TempDir(), "none")}
	_, err := p.Ask(context.Background(), Request{Verb: Capabilities})
	if err == nil || !strings.Contains(err.Error(), "cannot run it") || !strings.Contains(err.Error(), "fix the profile's inspector command") {
		t.Errorf("%v", err)
	}
}

// TestRequest: the plugin reads the question, versioned, on stdin, and the
// harness's environment with the plugin's own.
func TestRequest(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "request")
	p := &Plugin{Command: script(t, `cat > `+got+`; echo "$CLOUD" >> `+got+`; echo '`+ok+`}'`), Env: []string{"CLOUD=c1"}}
	if _, err := p.Ask(context.Background(), Request{Verb: DeleteRoute, Route: "rtb-1/10.0.0.0/24"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(got)
	want := `{"apiVersion":"` + APIVersion + `","kind":"Request","verb":"deleteRoute","route":"rtb-1/10.0.0.0/24"}c1` + "\n"
	if string(b) != want {
		t.Errorf("the plugin read %q, want %q", b, want)
	}
}

// TestKilledLeavesNothing: a plugin killed at its timeout leaves neither
// the temporary files it made (each question has a TMPDIR of its own,
// removed after) nor its children (its process group is killed whole).
func TestKilledLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	pids := filepath.Join(t.TempDir(), "child")
	p := &Plugin{Command: script(t, `mktemp >/dev/null; sleep 30 & echo $! > `+pids+`; wait`), Timeout: time.Second}
	if _, err := p.Ask(context.Background(), Request{Verb: Routes}); err == nil || !strings.Contains(err.Error(), "no answer within 1s") {
		t.Fatalf("got %v, want the timeout", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	// A killed child stays a zombie of init's for a moment at most.
	deadline := time.Now().Add(5 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plugin's child %s outlived it: %s", pid, stat)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
