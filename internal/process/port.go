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
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"syscall"
)

// The ports FreePort hands out lie below the kernel's ephemeral range.
// A port from the kernel's own choice (bind to :0) is one of the ephemeral
// ports that every outgoing connection takes its source port from: between
// FreePort closing it and the component binding it, a client of another
// cluster on this machine may take it ("address already in use" from etcd,
// seen with four clusters up at once). Below the range, only a listener
// can take it, and the choice is random, so parallel harnesses rarely pick
// the same one.
const (
	lowestPort          = 20000
	ephemeralRangeFile  = "/proc/sys/net/ipv4/ip_local_port_range"
	defaultEphemeralMin = 32768
	freePortAttempts    = 200
)

var handedOut = struct {
	sync.Mutex
	ports map[int]bool
	// claims hold the ports handed out against the machine's other
	// harness processes, for as long as this one lives.
	claims []net.Listener
}{ports: map[int]bool{}}

// claim takes port among the harness's processes on this machine: each
// picks from the same range at random, the six of a parallel run and the
// unit tests' beside them, and a port is free to all of them from the
// probe until the component binds it (in make test's CI one process's
// kube-controller-manager and another's fakecloud were both handed 24660,
// and fakecloud could not listen). The claim is an abstract Unix socket
// named after the port: one process at a time may hold it, the kernel
// drops it when the process exits, and it leaves no file behind. Where
// there are none (another OS), every claim succeeds: the probe alone.
func claim(port int) bool {
	l, err := net.Listen("unix", fmt.Sprintf("@ccm-harness-port-%d", port))
	if errors.Is(err, syscall.EADDRINUSE) {
		return false // another harness process holds it
	}
	if err == nil {
		handedOut.claims = append(handedOut.claims, l)
	}
	return true
}

// FreePort picks a free loopback TCP port, not one handed out before by
// this process nor claimed by another harness process, below the
// ephemeral range. A program of another kind may still take it before
// ours binds; components report that as "address in use" in their log,
// which Start quotes.
func FreePort() (int, error) {
	hi := ephemeralMin()
	if hi-lowestPort < 1000 {
		return kernelPort() // a machine whose ephemeral range starts low
	}
	handedOut.Lock()
	defer handedOut.Unlock()
	for range freePortAttempts {
		port := lowestPort + rand.IntN(hi-lowestPort)
		if handedOut.ports[port] || !claim(port) {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		handedOut.ports[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("find a free port on 127.0.0.1 between %d and %d: %d tries, all in use (stop what holds them)", lowestPort, hi, freePortAttempts)
}

// ephemeralMin is where the kernel's ephemeral port range starts.
func ephemeralMin() int {
	data, err := os.ReadFile(ephemeralRangeFile)
	if err != nil {
		return defaultEphemeralMin
	}
	var lo, hi int
	if n, _ := fmt.Sscan(string(data), &lo, &hi); n != 2 || lo <= 0 {
		return defaultEphemeralMin
	}
	return lo
}

// kernelPort is the kernel's choice of a free port.
func kernelPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// CheckPortFree fails with a one-line error naming the fix if port is taken.
func CheckPortFree(port int, flag string) error {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("port %d on 127.0.0.1 is in use by another process (choose another with %s, or stop what holds it)", port, flag)
	}
	return l.Close()
}
