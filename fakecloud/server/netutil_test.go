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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
)

// Helpers for tests that move real bytes through load balancers. Every
// address is in 127.0.0.0/8.

// netConfig returns a Config whose instance and load balancer pools are /24s
// picked at random in 127.0.0.0/8, so that tests running at the same time
// (other packages, other checkouts, clusters on this machine) do not meet
// on an address.
func netConfig() server.Config {
	return server.Config{
		InternalCIDR: fmt.Sprintf("127.%d.%d.0/24", 30+rand.IntN(70), rand.IntN(256)),
		LBCIDR:       fmt.Sprintf("127.%d.%d.0/24", 100+rand.IntN(100), rand.IntN(256)),
	}
}

// firstLBIP is the IP the first load balancer of cfg gets.
func firstLBIP(cfg server.Config) netip.Addr {
	return netip.MustParsePrefix(cfg.LBCIDR).Addr().Next()
}

func internalIP(t *testing.T, inst api.Instance) netip.Addr {
	t.Helper()
	ip := model.FirstInternalIP(&inst)
	if !ip.IsValid() {
		t.Fatalf("instance %s has no InternalIP: %+v", inst.Name, inst.Addresses)
	}
	return ip
}

// freePort returns a port free for TCP and UDP on every one of ips.
func freePort(t *testing.T, ips ...netip.Addr) uint16 {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", netip.AddrPortFrom(ips[0], 0).String())
		if err != nil {
			t.Fatal(err)
		}
		port := uint16(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		// A port handed out but not bound yet is free to the kernel, which
		// gave one twice in a row (a health check port equal to the
		// listener's, seen in CI): never the same one twice.
		if !handedOut.ports[port] && portFree(ips, port) {
			handedOut.ports[port] = true
			return port
		}
	}
	t.Fatalf("no port free on all of %v", ips)
	return 0
}

// handedOut are the ports freePort gave in this test binary.
var handedOut = struct {
	sync.Mutex
	ports map[uint16]bool
}{ports: map[uint16]bool{}}

func portFree(ips []netip.Addr, port uint16) bool {
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	for _, ip := range ips {
		ap := netip.AddrPortFrom(ip, port).String()
		l, err := net.Listen("tcp", ap)
		if err != nil {
			return false
		}
		closers = append(closers, l)
		pc, err := net.ListenPacket("udp", ap)
		if err != nil {
			return false
		}
		closers = append(closers, pc)
	}
	return true
}

// assertListening checks whether something listens on addr/proto by trying
// to bind it: the test that a closed listener really let go of its port.
func assertListening(t *testing.T, addr netip.AddrPort, proto api.Protocol, want bool) {
	t.Helper()
	var c io.Closer
	var err error
	if proto == api.ProtocolTCP {
		c, err = net.Listen("tcp", addr.String())
	} else {
		c, err = net.ListenPacket("udp", addr.String())
	}
	if err == nil {
		c.Close()
	}
	if listening := err != nil; listening != want {
		t.Errorf("%s/%s: listening=%v (bind error %v), want %v", addr, proto, listening, err, want)
	}
}

// echo is a backend: a TCP or UDP server that answers with its tag
// followed by what it got, and counts who came.
type echo struct {
	tag   string
	hits  atomic.Int32
	close func()
}

func tcpEcho(t *testing.T, addr netip.AddrPort, tag string) *echo {
	t.Helper()
	l, err := net.Listen("tcp", addr.String())
	if err != nil {
		t.Fatalf("backend listen: %v", err)
	}
	e := &echo{tag: tag}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			e.hits.Add(1)
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				io.WriteString(c, tag+":")
				io.Copy(c, c)
			})
		}
	})
	var once sync.Once
	e.close = func() {
		once.Do(func() {
			l.Close()
			mu.Lock()
			for c := range conns {
				c.Close()
			}
			mu.Unlock()
			wg.Wait()
		})
	}
	t.Cleanup(e.close)
	return e
}

func udpEcho(t *testing.T, addr netip.AddrPort, tag string) *echo {
	t.Helper()
	pc, err := net.ListenPacket("udp", addr.String())
	if err != nil {
		t.Fatalf("backend listen: %v", err)
	}
	e := &echo{tag: tag}
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			e.hits.Add(1)
			pc.WriteTo(append([]byte(tag+":"), buf[:n]...), from)
		}
	})
	var once sync.Once
	e.close = func() { once.Do(func() { pc.Close(); wg.Wait() }) }
	t.Cleanup(e.close)
	return e
}

// healthz serves /healthz on addr with a status that can be changed.
type healthz struct {
	status atomic.Int32
	close  func()
}

func healthServer(t *testing.T, addr netip.AddrPort, status int) *healthz {
	t.Helper()
	l, err := net.Listen("tcp", addr.String())
	if err != nil {
		t.Fatalf("health listen: %v", err)
	}
	h := &healthz{}
	h.status.Store(int32(status))
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(int(h.status.Load()))
	}))
	hs.Listener.Close()
	hs.Listener = l
	hs.Start()
	h.close = hs.Close
	t.Cleanup(hs.Close)
	return h
}

// tcpCall sends msg from local (any address if invalid) to addr, shuts its
// write side and returns all it hears. A refused client hears nothing.
func tcpCall(local netip.Addr, addr netip.AddrPort, msg string) (string, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	if local.IsValid() {
		d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(local, 0))
	}
	c, err := d.Dial("tcp", addr.String())
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, msg); err != nil {
		return "", err
	}
	c.(*net.TCPConn).CloseWrite()
	b, err := io.ReadAll(c)
	return string(b), err
}

// udpCall sends msg from local to addr and waits up to wait for an answer.
func udpCall(local netip.Addr, addr netip.AddrPort, msg string, wait time.Duration) (string, error) {
	var laddr *net.UDPAddr
	if local.IsValid() {
		laddr = net.UDPAddrFromAddrPort(netip.AddrPortFrom(local, 0))
	}
	c, err := net.DialUDP("udp", laddr, net.UDPAddrFromAddrPort(addr))
	if err != nil {
		return "", err
	}
	defer c.Close()
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 2048)
	n, err := c.Read(buf)
	return string(buf[:n]), err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// eventually polls cond until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last %s", what, timeout, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func statusOf(lb api.LoadBalancer) string {
	var parts []string
	for _, b := range lb.BackendStatus {
		parts = append(parts, fmt.Sprintf("%s healthy=%v %q", b.Instance, b.Healthy, b.LastError))
	}
	return strings.Join(parts, "; ")
}

// udpRoundTrip sends msg on a connected socket and reads one answer.
func udpRoundTrip(c *net.UDPConn, msg string) (string, error) {
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 2048)
	n, err := c.Read(buf)
	return string(buf[:n]), err
}

// heldConn is a TCP connection a test keeps open across calls.
type heldConn struct{ net.Conn }

func netDialTCP(addr netip.AddrPort) (heldConn, error) {
	c, err := net.DialTimeout("tcp", addr.String(), 2*time.Second)
	return heldConn{c}, err
}

// roundTrip writes msg and reads exactly n bytes back.
func (c heldConn) roundTrip(msg string, n int) (string, error) {
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(c, msg); err != nil {
		return "", err
	}
	buf := make([]byte, n)
	got, err := io.ReadFull(c, buf)
	return string(buf[:got]), err
}

// serveDirect calls s's handler without an HTTP server.
func serveDirect(t *testing.T, s *server.Server, method, path, token string, body any, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, rec.Code, want, rec.Body)
	}
	if out != nil {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			t.Fatalf("%s %s: decoding %q: %v", method, path, rec.Body, err)
		}
	}
}
