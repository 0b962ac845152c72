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

package model

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// network names the socket family of ip, so an IPv4 load balancer gets an
// AF_INET socket and sees its clients' addresses unmapped.
func network(proto string, ip netip.Addr) string {
	if ip.Is4() {
		return proto + "4"
	}
	return proto + "6"
}

// tcpFrontend is a TCP listener proxying each connection to a backend.
type tcpFrontend struct {
	rt  *lbRuntime
	key listenerKey
	ln  *net.TCPListener
	// ctx ends dials in progress when the frontend closes.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// listenConfig binds a listener's socket. An IPv6 address of a range
// routed here (fakecloud --lb-cidr-v6 --lb-route) is bound only with
// IP_FREEBIND: unlike IPv4, IPv6 takes a local route alone for no
// address of this machine. The cloud checked at its start that the range
// is routed here, so traffic to it does arrive.
func listenConfig(addr netip.Addr) *net.ListenConfig {
	lc := &net.ListenConfig{}
	if addr.Is6() && !addr.Is4In6() && !addr.IsLoopback() {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_IP, unix.IP_FREEBIND, 1)
			}); err != nil {
				return err
			}
			return serr
		}
	}
	return lc
}

func (rt *lbRuntime) listenTCP(k listenerKey, addr netip.AddrPort) (*tcpFrontend, error) {
	l, err := listenConfig(addr.Addr()).Listen(context.Background(), network("tcp", addr.Addr()), addr.String())
	if err != nil {
		return nil, err
	}
	ln := l.(*net.TCPListener)
	ctx, cancel := context.WithCancel(context.Background())
	return &tcpFrontend{rt: rt, key: k, ln: ln, ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}}, nil
}

func (f *tcpFrontend) serve() {
	f.wg.Add(1)
	go f.acceptLoop()
}

func (f *tcpFrontend) acceptLoop() {
	defer f.wg.Done()
	for {
		c, err := f.ln.AcceptTCP()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait rather than spin.
			select {
			case <-f.ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if !f.track(c) {
			c.Close()
			return
		}
		// Safe against close's Wait: this goroutine's own count is held.
		f.wg.Add(1)
		go f.handle(c)
	}
}

// track registers c to be closed with the frontend; false means the
// frontend is closed already and c is the caller's to close.
func (f *tcpFrontend) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.conns[c] = struct{}{}
	return true
}

func (f *tcpFrontend) drop(c net.Conn) {
	f.mu.Lock()
	delete(f.conns, c)
	f.mu.Unlock()
	c.Close()
}

// handle refuses a client the load balancer would not serve with a reset,
// as a firewall or a load balancer with no backend does; otherwise it
// relays bytes both ways until both sides are done.
func (f *tcpFrontend) handle(client *net.TCPConn) {
	defer f.wg.Done()
	defer f.drop(client)
	cfg := f.rt.cfg.Load()
	src := client.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
	_, listening := cfg.nodePorts[f.key]
	if !listening || !cfg.allows(src) {
		client.SetLinger(0)
		return
	}
	b, ok := f.rt.pick(cfg, src)
	if !ok {
		client.SetLinger(0)
		return
	}
	c, err := cfg.dial(f.ctx, src, f.rt.dp.nets, "tcp", cfg.target(f.key, b).String())
	if err != nil {
		client.SetLinger(0)
		return
	}
	if !f.track(c) {
		c.Close()
		return
	}
	defer f.drop(c)
	be := c.(*net.TCPConn)
	// The header goes first and whole, before any byte of the client's,
	// naming the client and the listener as this socket saw them.
	hdr, err := proxyHeader(cfg.proxyProtocol, client.RemoteAddr().(*net.TCPAddr).AddrPort(), client.LocalAddr().(*net.TCPAddr).AddrPort())
	if err != nil {
		client.SetLinger(0)
		return
	}
	if len(hdr) > 0 {
		if _, err := be.Write(hdr); err != nil {
			client.SetLinger(0)
			return
		}
	}
	// Half-closes are passed on, so a client that shuts its write side
	// still gets the whole answer.
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(be, client)
		be.CloseWrite()
	}()
	io.Copy(client, be)
	client.CloseWrite()
	<-done
}

func (f *tcpFrontend) close() {
	f.mu.Lock()
	f.closed = true
	conns := f.conns
	f.conns = nil
	f.mu.Unlock()
	f.cancel()
	f.ln.Close()
	for c := range conns {
		c.Close()
	}
	f.wg.Wait()
}

// udpFrontend is a UDP socket relaying datagrams through one session per
// client: a connected socket to the backend chosen for it, whose replies
// go back out of the frontend socket, so the client hears the address it
// sent to.
type udpFrontend struct {
	rt  *lbRuntime
	key listenerKey
	pc  *net.UDPConn
	wg  sync.WaitGroup

	mu       sync.Mutex
	sessions map[netip.AddrPort]*udpSession
	closed   bool
}

type udpSession struct {
	client netip.AddrPort
	conn   net.Conn
	// last is when a datagram last went either way, in Unix nanoseconds.
	last atomic.Int64
}

func (s *udpSession) touch() { s.last.Store(time.Now().UnixNano()) }

func (s *udpSession) idleSince() time.Time { return time.Unix(0, s.last.Load()) }

func (rt *lbRuntime) listenUDP(k listenerKey, addr netip.AddrPort) (*udpFrontend, error) {
	c, err := listenConfig(addr.Addr()).ListenPacket(context.Background(), network("udp", addr.Addr()), addr.String())
	if err != nil {
		return nil, err
	}
	pc := c.(*net.UDPConn)
	return &udpFrontend{rt: rt, key: k, pc: pc, sessions: map[netip.AddrPort]*udpSession{}}, nil
}

func (f *udpFrontend) serve() {
	f.wg.Add(1)
	go f.readLoop()
}

// readLoop checks every datagram against the source ranges, not just a
// session's first: an update that narrows them applies at once.
func (f *udpFrontend) readLoop() {
	defer f.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		n, from, err := f.pc.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		cfg := f.rt.cfg.Load()
		if _, listening := cfg.nodePorts[f.key]; !listening || !cfg.allows(from.Addr()) {
			continue
		}
		s := f.session(cfg, from)
		if s == nil {
			continue
		}
		s.touch()
		if _, err := s.conn.Write(buf[:n]); err != nil {
			// The relay sees the closed socket and ends the session; the
			// client's next datagram starts a new one.
			s.conn.Close()
		}
	}
}

// session returns from's session, starting one with a healthy backend if
// there is none; nil means the datagram is dropped. Only readLoop calls
// it, so two sessions for one client cannot race into being.
func (f *udpFrontend) session(cfg *lbConfig, from netip.AddrPort) *udpSession {
	f.mu.Lock()
	s := f.sessions[from]
	f.mu.Unlock()
	if s != nil {
		return s
	}
	b, ok := f.rt.pick(cfg, from.Addr().Unmap())
	if !ok {
		return nil
	}
	conn, err := cfg.dial(context.Background(), from.Addr().Unmap(), f.rt.dp.nets, "udp", cfg.target(f.key, b).String())
	if err != nil {
		return nil
	}
	s = &udpSession{client: from, conn: conn}
	s.touch()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		conn.Close()
		return nil
	}
	f.sessions[from] = s
	f.wg.Add(1)
	go f.relay(s)
	return s
}

// relay sends the backend's replies to the client until the session has
// been idle for the timeout or its socket fails.
func (f *udpFrontend) relay(s *udpSession) {
	defer f.wg.Done()
	defer func() {
		f.mu.Lock()
		if f.sessions[s.client] == s {
			delete(f.sessions, s.client)
		}
		f.mu.Unlock()
		s.conn.Close()
	}()
	idle := f.rt.dp.udpIdle
	buf := make([]byte, 64<<10)
	for {
		s.conn.SetReadDeadline(s.idleSince().Add(idle))
		n, err := s.conn.Read(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && time.Since(s.idleSince()) < idle {
				continue // the client spoke meanwhile
			}
			return
		}
		s.touch()
		f.pc.WriteToUDPAddrPort(buf[:n], s.client)
	}
}

func (f *udpFrontend) close() {
	f.mu.Lock()
	f.closed = true
	sessions := f.sessions
	f.sessions = nil
	f.mu.Unlock()
	f.pc.Close()
	for _, s := range sessions {
		s.conn.Close()
	}
	f.wg.Wait()
}
