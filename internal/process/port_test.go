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
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// A port another harness process claimed is not handed out: the helper
// process below claims one, and this one must not.
func TestClaimAcrossProcesses(t *testing.T) {
	if p := os.Getenv("CCM_HARNESS_CLAIM_PORT"); p != "" {
		port, _ := strconv.Atoi(p)
		if !claim(port) {
			os.Exit(3)
		}
		fmt.Println("claimed")
		_, _ = os.Stdin.Read(make([]byte, 1)) // hold it until told
		os.Exit(0)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestClaimAcrossProcesses$")
	cmd.Env = append(os.Environ(), "CCM_HARNESS_CLAIM_PORT="+strconv.Itoa(port))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	if _, err := out.Read(make([]byte, 7)); err != nil {
		t.Fatalf("the helper did not claim port %d: %v", port, err)
	}
	if claim(port) {
		t.Errorf("port %d claimed here while another process holds it", port)
	}
	_ = stdin.Close()
	_ = cmd.Wait()
	if !claim(port) {
		t.Errorf("port %d not claimable once the process that held it exited", port)
	}
}
