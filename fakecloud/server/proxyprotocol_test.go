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

package server_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

// rawBackend records the bytes of each TCP connection it gets, until the
// sender half-closes, and answers "ok": what a backend reads first is the
// point, PROXY protocol header included.
func rawBackend(t *testing.T, addr netip.AddrPort) <-chan []byte {
	t.Helper()
	l, err := net.Listen("tcp", addr.String())
	if err != nil {
		t.Fatalf("backend listen: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	got := make(chan []byte, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				b, _ := io.ReadAll(c)
				got <- b
				io.WriteString(c, "ok")
			}()
		}
	}()
	return got
}

// sendFrom connects from src (any port) to addr, sends msg and reads the
// answer; it reports the client's own address, which the header names.
func sendFrom(t *testing.T, src netip.Addr, addr netip.AddrPort, msg string) netip.AddrPort {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(src, 0))}
	c, err := d.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, msg)
	c.(*net.TCPConn).CloseWrite()
	if b, err := io.ReadAll(c); err != nil || string(b) != "ok" {
		t.Fatalf("through %s: %q, %v; want the backend's ok", addr, b, err)
	}
	return c.LocalAddr().(*net.TCPAddr).AddrPort()
}

// TestLBProxyProtocol reads, on a real backend socket, the exact header
// each PROXY protocol version puts before the client's bytes, and nothing
// before them without one.
func TestLBProxyProtocol(t *testing.T) {
	cfg := netConfig()
	f := servertest.New(t, cfg)
	n1 := f.Create("n1")
	lbIP, backendIP := firstLBIP(cfg), internalIP(t, n1)
	port, nodePort := freePort(t, lbIP), freePort(t, backendIP)
	got := rawBackend(t, netip.AddrPortFrom(backendIP, nodePort))
	frontend := netip.AddrPortFrom(lbIP, port)
	src := netip.MustParseAddr("127.0.0.1")
	spec := api.LoadBalancerSpec{Listeners: []api.Listener{servertest.TCP(port, nodePort)}, Backends: []string{n1.ID}}
	read := func() []byte {
		t.Helper()
		select {
		case b := <-got:
			return b
		case <-time.After(5 * time.Second):
			t.Fatal("the backend got no connection")
			return nil
		}
	}

	f.Ensure("lb", spec, http.StatusCreated)
	sendFrom(t, src, frontend, "hello")
	if b := read(); string(b) != "hello" {
		t.Errorf("no PROXY protocol: the backend read %q, want the client's bytes alone", b)
	}

	spec.ProxyProtocol = 1
	if lb := f.Ensure("lb", spec, http.StatusOK); lb.ProxyProtocol != 1 {
		t.Fatalf("the cloud answered proxyProtocol %d, want 1", lb.ProxyProtocol)
	}
	client := sendFrom(t, src, frontend, "hello")
	want := fmt.Sprintf("PROXY TCP4 127.0.0.1 %s %d %d\r\nhello", lbIP, client.Port(), port)
	if b := read(); string(b) != want {
		t.Errorf("PROXY protocol v1: the backend read %q, want %q", b, want)
	}

	spec.ProxyProtocol = 2
	f.Ensure("lb", spec, http.StatusOK)
	client = sendFrom(t, src, frontend, "hello")
	v2 := []byte("\r\n\r\n\x00\r\nQUIT\n")
	v2 = append(v2, 0x21, 0x11, 0, 12)
	v2 = append(v2, 127, 0, 0, 1)
	v2 = append(v2, lbIP.AsSlice()...)
	v2 = binary.BigEndian.AppendUint16(v2, client.Port())
	v2 = binary.BigEndian.AppendUint16(v2, port)
	v2 = append(v2, "hello"...)
	if b := read(); !bytes.Equal(b, v2) {
		t.Errorf("PROXY protocol v2: the backend read\n% x\nwant\n% x", b, v2)
	}
}
