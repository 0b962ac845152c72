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

package nameserver

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// The name the test server knows, and its address.
const (
	lbName = "lb-1.us-east-1.elb.amazonaws.com"
	lbAddr = "10.251.7.9"
)

// server answers lbName's A record on loopback, NXDOMAIN for any other
// name: a cloud's DNS on a port of its own.
func server(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			known := q.Name.String() == lbName+"."
			reply := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true}
			if !known {
				reply.RCode = dnsmessage.RCodeNameError
			}
			b := dnsmessage.NewBuilder(nil, reply)
			_ = b.StartQuestions()
			_ = b.Question(q)
			_ = b.StartAnswers()
			if known && q.Type == dnsmessage.TypeA {
				_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60},
					dnsmessage.AResource{A: [4]byte(net.ParseIP(lbAddr).To4())})
			}
			out, _ := b.Finish()
			_, _ = pc.WriteTo(out, from)
		}
	}()
	return pc.LocalAddr().String()
}

// TestRelay resolves through a relay: the server's answer, and its
// NXDOMAIN for a name it does not know.
func TestRelay(t *testing.T) {
	r, err := listen(server(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", r.Addr())
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := res.LookupHost(ctx, lbName)
	if err != nil || len(addrs) != 1 || addrs[0] != lbAddr {
		t.Fatalf("expected %s to resolve through the relay to [%s], actual %v (%v)", lbName, lbAddr, addrs, err)
	}
	if addrs, err := res.LookupHost(ctx, "other.example.com"); err == nil {
		t.Errorf("expected a name the server does not know to be no such host, actual %v", addrs)
	}
}

// TestCommand runs a program that resolves with the system's resolver
// (glibc's getent) in the relay's mount namespace: it finds the name
// only the relayed server knows, and the machine's resolv.conf is as it
// was.
func TestCommand(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("port 53 and a mount namespace take root")
	}
	before, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Listen(server(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd, err := r.Command(context.Background(), t.TempDir(), "getent", "ahostsv4", lbName)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), lbAddr+" ") {
		t.Fatalf("expected getent in the relay's namespace to resolve %s to %s, actual %q (%v)", lbName, lbAddr, out, err)
	}
	after, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("expected the machine's /etc/resolv.conf to be as it was, actual:\n%s", after)
	}
}
