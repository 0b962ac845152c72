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

// Package nameserver points a program that resolves names with the
// system's resolver (Kubernetes' own e2e.test) at a DNS server of the
// harness's choosing (a cloud's own, on a port of its own): a relay on
// port 53 of a loopback address, since resolv.conf names no port, and the
// program run in a mount namespace of its own where /etc/resolv.conf names
// the relay. The machine's resolver is left as it is.
package nameserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Relay answers DNS queries on port 53 of a loopback address with what
// the server it relays to answers.
type Relay struct {
	pc net.PacketConn
	to string
}

// relayNet is where a relay looks for a free loopback address: every
// 127/8 address is this machine's, and 127.53/16 is unlikely to hold a
// resolver of the machine's own (systemd-resolved's is 127.0.0.53).
const relayNet = "127.53.%d.1"

// answerTimeout is how long a query waits for the server's answer; the
// client retries a lost one, as over any UDP.
const answerTimeout = 5 * time.Second

// Listen relays to the DNS server at to (host:port) from port 53 of the
// first loopback address in 127.53/16 that has it free. Port 53 takes
// root.
func Listen(to string) (*Relay, error) { return listen(to, 53) }

func listen(to string, port int) (*Relay, error) {
	if _, _, err := net.SplitHostPort(to); err != nil {
		return nil, fmt.Errorf("nameserver: %q is not host:port: %w", to, err)
	}
	for i := 1; i < 255; i++ {
		addr := net.JoinHostPort(fmt.Sprintf(relayNet, i), fmt.Sprint(port))
		pc, err := net.ListenPacket("udp", addr)
		if errors.Is(err, syscall.EADDRINUSE) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("nameserver: relay on %s: %w (port 53 takes root: run as root)", addr, err)
		}
		r := &Relay{pc: pc, to: to}
		go r.serve()
		return r, nil
	}
	return nil, fmt.Errorf("nameserver: port %d of every address in 127.53.0.0/16 is taken (stop what listens there)", port)
}

// Addr is the relay's address, host:port.
func (r *Relay) Addr() string { return r.pc.LocalAddr().String() }

// Close stops the relay.
func (r *Relay) Close() error { return r.pc.Close() }

func (r *Relay) serve() {
	buf := make([]byte, 64<<10)
	for {
		n, from, err := r.pc.ReadFrom(buf)
		if err != nil {
			return // closed
		}
		go r.relay(append([]byte(nil), buf[:n]...), from)
	}
}

// relay asks the server one query and writes its answer back to from; a
// query the server does not answer in time is dropped, as a lost packet.
func (r *Relay) relay(query []byte, from net.Addr) {
	c, err := net.Dial("udp", r.to)
	if err != nil {
		return
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(answerTimeout))
	if _, err := c.Write(query); err != nil {
		return
	}
	buf := make([]byte, 64<<10)
	n, err := c.Read(buf)
	if err != nil {
		return
	}
	_, _ = r.pc.WriteTo(buf[:n], from)
}

// Command is name run with args in a mount namespace of its own whose
// /etc/resolv.conf names the relay alone (a file written in dir): its
// lookups go to the relayed server, and the rest of the machine's are
// untouched. It takes root, and util-linux's unshare and mount.
func (r *Relay) Command(ctx context.Context, dir, name string, args ...string) (*exec.Cmd, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("nameserver: a mount namespace of its own, where /etc/resolv.conf names the relay, takes root (run as root)")
	}
	for _, tool := range []string{"unshare", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("nameserver: %w (install util-linux and mount: apt-get install util-linux mount)", err)
		}
	}
	host, _, _ := net.SplitHostPort(r.Addr())
	resolv := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("# ccm-harness: the relay to "+r.to+"\nnameserver "+host+"\n"), 0o644); err != nil {
		return nil, err
	}
	// unshare execs the shell, which execs name: one process, so that a
	// signal to it reaches name.
	script := `mount --bind "$0" /etc/resolv.conf && exec "$@"`
	return exec.CommandContext(ctx, "unshare", append([]string{"--mount", "--propagation", "private", "--", "sh", "-c", script, resolv, name}, args...)...), nil
}
