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

package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer lets the test read stderr while run is still writing it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func file(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	cloud := file(t, dir, "cloud", "c\n")
	admin := file(t, dir, "admin", "a\n")
	empty := file(t, dir, "empty", "\n")
	badJSON := file(t, dir, "bad.json", "[\n  {\"operation\": \"*\",\n  \"kind\" \"error\"}\n]")
	badFault := file(t, dir, "badfault.json", `[{"operation":"*","kind":"error"},{"operation":"*","kind":"explode"}]`)
	corrupt := file(t, dir, "state.json", "{not json")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tokens := []string{"--token-file", cloud, "--admin-token-file", admin, "--listen", "127.0.0.1:0"}

	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no token file", []string{"--admin-token-file", admin}, []string{"--token-file is required (a file holding the bearer token the CCM will send)"}},
		{"no admin token file", []string{"--token-file", cloud}, []string{"--admin-token-file is required"}},
		{"missing token file", []string{"--token-file", dir + "/nope", "--admin-token-file", admin}, []string{"cannot read --token-file", "no such file"}},
		{"empty token file", []string{"--token-file", empty, "--admin-token-file", admin}, []string{"--token-file " + empty + " is empty"}},
		{"same tokens", []string{"--token-file", cloud, "--admin-token-file", cloud}, []string{"must differ"}},
		{"unknown flag", append([]string{"--colour"}, tokens...), []string{"flag provided but not defined: -colour", "--help"}},
		{"argument", append(tokens, "serve"), []string{`unexpected argument "serve"`}},
		{"empty zone", append(tokens, "--zones", "a,,b"), []string{`--zones "a,,b" has an empty zone`}},
		{"bad CIDR", append(tokens, "--internal-cidr", "127.1.0.0"), []string{"--internal-cidr", "127.1.0.0/16"}},
		{"bad IPv6 CIDR", append(tokens, "--internal-cidr-v6", "fd00:1::"), []string{"--internal-cidr-v6", "fd00:1::/64"}},
		{"IPv4 CIDR as the IPv6 pool", append(tokens, "--internal-cidr-v6", "10.0.0.0/8"), []string{"internal IPv6 CIDR 10.0.0.0/8: give an IPv6 range"}},
		{"bad LB CIDR", append(tokens, "--lb-cidr", "127.20.0.0"), []string{"--lb-cidr", "127.20.0.0/16"}},
		{"private LB CIDR not routed here", append(tokens, "--lb-cidr", "10.20.0.0/16"), []string{"load balancer CIDR 10.20.0.0/16 is not this machine's (listen tcp 10.20.0.0:0: bind: cannot assign requested address): fakecloud really listens on load balancer IPs; give a range of 127.0.0.0/8, or route this one here (fakecloud --lb-route)"}},
		{"public LB CIDR routed", append(tokens, "--lb-cidr", "192.0.2.0/24", "--lb-route"), []string{"load balancer CIDR 192.0.2.0/24 is not this machine's to route (neither loopback nor a private range)"}},
		{"malformed faults", append(tokens, "--faults", badJSON), []string{"--faults " + badJSON + " line 3", "invalid character"}},
		{"invalid fault", append(tokens, "--faults", badFault), []string{"--faults " + badFault + ": fault 2: kind \"explode\""}},
		{"missing faults", append(tokens, "--faults", dir+"/none.json"), []string{"cannot read --faults"}},
		{"corrupt state", append(tokens, "--state-file", corrupt), []string{"state file " + corrupt + " is corrupt", "delete it"}},
		{"two kinds of machines", append(tokens, "--docker-machines", "--kwok-kubeconfig", dir+"/kubeconfig"), []string{"--kwok-kubeconfig and --docker-machines both say what the machines are: give one"}},
		{"bad audit log", append(tokens, "--audit-log", dir+"/no/such/dir/audit"), []string{"cannot open --audit-log"}},
		{"port in use", []string{"--token-file", cloud, "--admin-token-file", admin, "--listen", busy.Addr().String()},
			[]string{"cannot listen on " + busy.Addr().String() + ": address already in use (pick a free port with --listen)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(context.Background(), tt.args, &stderr); code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			out := stderr.String()
			if strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "fakecloud: ") {
				t.Errorf("stderr %q, want one line starting with fakecloud:", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("stderr %q does not contain %q", out, w)
				}
			}
		})
	}
}

func TestServeAndShutdown(t *testing.T) {
	dir := t.TempDir()
	faults := file(t, dir, "faults.json", `[{"operation":"ListInstances","kind":"throttle"}]`)
	// A load balancer pool of its own, at random in 127.0.0.0/8, so the
	// listener below meets nobody else's.
	lbPool := fmt.Sprintf("127.%d.%d.0/24", 100+rand.IntN(100), rand.IntN(256))
	lbAddr := netip.MustParsePrefix(lbPool).Addr().Next()
	args := []string{
		"--token-file", file(t, dir, "cloud", "c\n"), "--admin-token-file", file(t, dir, "admin", " a "),
		"--listen", "127.0.0.1:0", "--state-file", filepath.Join(dir, "state.json"),
		"--audit-log", filepath.Join(dir, "audit.jsonl"), "--faults", faults, "--lb-cidr", lbPool,
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int)
	go func() { done <- run(ctx, args, &stderr) }()

	serving := regexp.MustCompile(`fakecloud: serving on (http://127\.0\.0\.1:\d+)\n`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == ""; {
		if m := serving.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no serving line; stderr %q", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}

	do := func(method, path, token, body string) int {
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := do("GET", "/admin/v1/instances", "a", ""); got != 200 {
		t.Errorf("admin token from a file with spaces: status %d", got)
	}
	if got := do("GET", "/v1/instances", "c", ""); got != 429 {
		t.Errorf("the --faults throttle did not fire: status %d", got)
	}
	// A load balancer listener in the --lb-cidr pool; shutting down must
	// close it.
	l, err := net.Listen("tcp", netip.AddrPortFrom(lbAddr, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	spec := fmt.Sprintf(`{"listeners":[{"port":%d,"protocol":"TCP","nodePort":0}],"backends":[]}`, port)
	if got := do("PUT", "/v1/loadbalancers/lb1", "c", spec); got != 201 {
		t.Fatalf("creating a load balancer: status %d", got)
	}
	if l, err := net.Listen("tcp", fmt.Sprintf("%s:%d", lbAddr, port)); err == nil {
		l.Close()
		t.Fatalf("the load balancer listener on %s:%d is not open", lbAddr, port)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d after shutdown; stderr %q", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after the context was cancelled")
	}
	if l, err := net.Listen("tcp", fmt.Sprintf("%s:%d", lbAddr, port)); err != nil {
		t.Errorf("the load balancer listener outlived the shutdown: %v", err)
	} else {
		l.Close()
	}
	audit, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil || strings.Count(string(audit), "\n") != 3 {
		t.Errorf("audit log %q, %v; want three lines", audit, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "state.json")); err != nil {
		t.Errorf("state file not written: %v", err)
	}
}
