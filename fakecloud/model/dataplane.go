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
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// The data plane makes load balancers real: each listener is a socket on
// the load balancer's IP that forwards to the backends' InternalIPs. It is
// driven by the model under Cloud.mu and never calls back into it, so
// its own locks always come after Cloud.mu.

const (
	// udpIdleTimeout ends a UDP session nobody has sent on for this long,
	// about what cloud load balancers and conntrack do.
	udpIdleTimeout = 30 * time.Second
	// healthInterval and healthTimeout: every second, briefly, so a test
	// sees a backend change health within about two seconds.
	healthInterval = time.Second
	healthTimeout  = 500 * time.Millisecond
	// dialTimeout bounds connecting to a backend; all of them are local.
	dialTimeout = 2 * time.Second
)

// ErrDataplaneClosed is what a change to a load balancer gets once Close
// has run: the API still answers, but sockets can no longer be opened.
var ErrDataplaneClosed = errors.New("fakecloud is shutting down: load balancers can no longer be changed")

type listenerKey struct {
	port     int32
	protocol api.Protocol
}

func (k listenerKey) String() string { return strconv.Itoa(int(k.port)) + "/" + string(k.protocol) }

// socketKey is one socket of a listener: a dual-stack load balancer has
// one on each of its addresses.
type socketKey struct {
	addr netip.Addr
	listenerKey
}

// backend is what the data plane knows of one backend instance.
type backend struct {
	instance string
	// addr is the instance's first InternalIP; invalid when it has none.
	addr netip.Addr
	// problem, when not empty, is why the backend cannot serve whatever a
	// health check says: its instance is stopped, gone, or unreachable.
	problem string
}

// lbConfig is an immutable snapshot of what a load balancer's sockets do.
// A change swaps in a new one, so a connection sees all of a change or
// none of it.
type lbConfig struct {
	sourceRanges []netip.Prefix
	hcPort       uint16
	backends     []backend
	// nodePorts holds each listener's backend port (0: the listener's).
	nodePorts map[listenerKey]uint16
	// keepClient: backends see the client's address, as behind a
	// pass-through network load balancer, rather than fakecloud's own.
	keepClient bool
	// affinity keeps a client on its backend while it comes back within
	// it; 0: none.
	affinity time.Duration
	// proxyProtocol is the PROXY protocol version each TCP connection to a
	// backend opens with (proxyHeader); 0: none.
	proxyProtocol int32
}

func newLBConfig(lb *LBRecord, backends []backend, dp *dataplane) (*lbConfig, error) {
	cfg := &lbConfig{hcPort: uint16(lb.HealthCheckNodePort), backends: backends, nodePorts: map[listenerKey]uint16{},
		keepClient: keepsClient(lb, dp.proxy), proxyProtocol: lb.ProxyProtocol}
	if !dp.ignoreAffinity {
		cfg.affinity = time.Duration(lb.ClientAffinitySeconds) * time.Second
	}
	for _, l := range lb.Listeners {
		cfg.nodePorts[listenerKey{port: l.Port, protocol: l.Protocol}] = uint16(l.NodePort)
	}
	for _, r := range lb.SourceRanges {
		p, err := netip.ParsePrefix(r)
		if err != nil {
			return nil, fmt.Errorf("sourceRanges: %w", err)
		}
		cfg.sourceRanges = append(cfg.sourceRanges, p.Masked())
	}
	return cfg, nil
}

// allows reports whether a client at src may use the load balancer.
func (c *lbConfig) allows(src netip.Addr) bool {
	if len(c.sourceRanges) == 0 {
		return true
	}
	for _, p := range c.sourceRanges {
		if p.Contains(src) {
			return true
		}
	}
	return false
}

// keepsClient reports whether lb hands backends its clients' addresses:
// fakecloud's own load balancers and network load balancers do, unless the
// cloud is told that its own proxy (proxy); a classic Elastic Load
// Balancer and Octavia's amphorae proxy, so their backends see the load
// balancer's address.
func keepsClient(lb *LBRecord, proxy bool) bool {
	switch {
	case lb.ELB != nil, lb.Octavia != nil:
		return false
	case lb.NLB != nil:
		return true
	}
	return !proxy
}

// dial connects a client at src to a backend at target: from the client's
// own address where the load balancer keeps it and the address is this
// machine's, since only such can be bound. A loopback client cannot leave
// this machine, and a client of another (a kind cluster's pod, masqueraded
// to its node's address) cannot be bound: both are proxied from
// fakecloud's own address, as by a load balancer that cannot keep them.
// An IPv6 client of a dual-stack load balancer reaches an IPv4 backend
// from fakecloud's own address too, as through a real one's NAT.
func (c *lbConfig) dial(ctx context.Context, src netip.Addr, nets []netip.Prefix, network, target string) (net.Conn, error) {
	if !c.keepClient || src.IsLoopback() || !src.Unmap().Is4() {
		return backendDialer(dialTimeout, nets).DialContext(ctx, network, target)
	}
	d := backendDialer(dialTimeout, nets)
	if network == "udp" {
		d.LocalAddr = &net.UDPAddr{IP: src.AsSlice()}
	} else {
		d.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
	}
	conn, err := d.DialContext(ctx, network, target)
	if errors.Is(err, syscall.EADDRNOTAVAIL) {
		return backendDialer(dialTimeout, nets).DialContext(ctx, network, target)
	}
	return conn, err
}

// target is where traffic of listener k goes on backend b.
func (c *lbConfig) target(k listenerKey, b backend) netip.AddrPort {
	port := c.nodePorts[k]
	if port == 0 {
		port = uint16(k.port)
	}
	return netip.AddrPortFrom(b.addr, port)
}

type dataplane struct {
	mu     sync.Mutex
	lbs    map[string]*lbRuntime // by load balancer ID
	closed bool

	// Timings, fixed before the first load balancer; tests shorten some.
	udpIdle    time.Duration
	hcInterval time.Duration
	hcTimeout  time.Duration

	prober *http.Client
	// nets are the networks beside loopback backends may be in.
	nets []netip.Prefix
	// proxy: fakecloud's own load balancers proxy (Config.ProxyLoadBalancers).
	proxy bool
	// ignoreAffinity: no load balancer keeps a client on its backend,
	// whatever its spec says (Config.IgnoreClientAffinity).
	ignoreAffinity bool
	// unservedIPv6: no load balancer listens on its IPv6 address
	// (Config.UnservedIPv6).
	unservedIPv6 bool
}

func newDataplane(nets []netip.Prefix, proxy, ignoreAffinity bool) *dataplane {
	return &dataplane{
		nets:           nets,
		proxy:          proxy,
		ignoreAffinity: ignoreAffinity,
		lbs:            map[string]*lbRuntime{},
		udpIdle:        udpIdleTimeout,
		hcInterval:     healthInterval,
		hcTimeout:      healthTimeout,
		prober: &http.Client{
			Transport: &http.Transport{
				// No proxy from the environment and no redirects: a probe
				// goes to the backend and nowhere else. No keep-alives, so
				// no idle connection outlives a probe.
				Proxy:             nil,
				DialContext:       backendDialer(healthTimeout, nets).DialContext,
				DisableKeepAlives: true,
			},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// backendDialer refuses, at connect time, any address off this machine
// but in the backend networks (the node containers' network of a kind
// cluster): whatever a test gives instances as addresses, no byte leaves
// for anywhere else.
func backendDialer(timeout time.Duration, nets []netip.Prefix) *net.Dialer {
	return &net.Dialer{
		Timeout: timeout,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !mayDial(ap.Addr(), nets) {
				return fmt.Errorf("fakecloud connects only to loopback addresses and --backend-cidr networks, not %s", address)
			}
			return nil
		},
	}
}

// mayDial reports whether a backend at addr may be sent traffic.
func mayDial(addr netip.Addr, nets []netip.Prefix) bool {
	addr = addr.Unmap()
	if addr.IsLoopback() {
		return true
	}
	for _, n := range nets {
		if n.Contains(addr) {
			return true
		}
	}
	return false
}

// lbRuntime is one load balancer's sockets and health checker.
type lbRuntime struct {
	dp  *dataplane
	id  string
	cfg atomic.Pointer[lbConfig]
	rr  atomic.Uint64

	// listeners is guarded by dataplane.mu.
	listeners map[socketKey]frontend

	// mu guards health and sticky.
	mu     sync.Mutex
	health map[string]probeResult // by instance ID
	// sticky is each client's last backend, for client affinity.
	sticky map[netip.Addr]stickyBackend

	stopChecks context.CancelFunc
	checksDone chan struct{}
	nudge      chan struct{}
}

// frontend is a listener's socket with everything that serves it.
type frontend interface {
	serve()
	// close returns once the socket and every connection or session it
	// made are closed and their goroutines have ended.
	close()
}

// apply makes the sockets of lb match it: listeners that are new are
// opened first, and if one cannot be, the ones just opened are closed and
// nothing changes. Listeners that stay are left open.
func (dp *dataplane) apply(lb *LBRecord, backends []backend) error {
	cfg, err := newLBConfig(lb, backends, dp)
	if err != nil {
		return err
	}
	dp.mu.Lock()
	defer dp.mu.Unlock()
	if dp.closed {
		return ErrDataplaneClosed
	}
	var addrs []netip.Addr
	served := []string{lb.IP, lb.IPv6}
	if dp.unservedIPv6 {
		served = served[:1]
	}
	for _, s := range served {
		if s == "" {
			continue
		}
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return fmt.Errorf("load balancer IP %q: %w", s, err)
		}
		addrs = append(addrs, ip.Unmap())
	}
	want := map[socketKey]bool{}
	for k := range cfg.nodePorts {
		for _, a := range addrs {
			want[socketKey{a, k}] = true
		}
	}
	rt := dp.lbs[lb.ID]
	created := rt == nil
	if created {
		rt = &lbRuntime{dp: dp, id: lb.ID, listeners: map[socketKey]frontend{}, health: map[string]probeResult{}}
	}
	opened := map[socketKey]frontend{}
	for k := range want {
		if _, ok := rt.listeners[k]; ok {
			continue
		}
		fe, err := rt.listen(k)
		if err != nil {
			for _, o := range opened {
				o.close()
			}
			return err
		}
		opened[k] = fe
	}
	rt.cfg.Store(cfg)
	for k, fe := range rt.listeners {
		if !want[k] {
			fe.close()
			delete(rt.listeners, k)
		}
	}
	for k, fe := range opened {
		rt.listeners[k] = fe
		fe.serve()
	}
	if created {
		dp.lbs[lb.ID] = rt
		rt.startChecks()
	}
	rt.poke()
	return nil
}

// setBackends swaps in new backend facts, e.g. after an instance stopped.
func (dp *dataplane) setBackends(id string, backends []backend) {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	rt := dp.lbs[id]
	if rt == nil {
		return
	}
	next := *rt.cfg.Load()
	next.backends = backends
	rt.cfg.Store(&next)
	rt.poke()
}

func (dp *dataplane) remove(id string) {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	if rt := dp.lbs[id]; rt != nil {
		rt.stop()
		delete(dp.lbs, id)
	}
}

func (dp *dataplane) close() {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	dp.closed = true
	for id, rt := range dp.lbs {
		rt.stop()
		delete(dp.lbs, id)
	}
}

// status returns how the data plane sees each backend of load balancer id,
// or nil when it is not serving it.
func (dp *dataplane) status(id string) []api.BackendStatus {
	dp.mu.Lock()
	rt := dp.lbs[id]
	dp.mu.Unlock()
	if rt == nil {
		return nil
	}
	cfg := rt.cfg.Load()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := make([]api.BackendStatus, 0, len(cfg.backends))
	for _, b := range cfg.backends {
		st := api.BackendStatus{Instance: b.instance}
		if b.addr.IsValid() {
			st.Address = b.addr.String()
		}
		st.Healthy, st.LastError = rt.healthLocked(cfg, b)
		out = append(out, st)
	}
	return out
}

func (rt *lbRuntime) listen(s socketKey) (frontend, error) {
	k := s.listenerKey
	addr := netip.AddrPortFrom(s.addr, uint16(k.port))
	var fe frontend
	var err error
	switch k.protocol {
	case api.ProtocolTCP:
		fe, err = rt.listenTCP(k, addr)
	case api.ProtocolUDP:
		fe, err = rt.listenUDP(k, addr)
	default:
		err = fmt.Errorf("protocol %q is not supported", k.protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s/%s: %w", addr, k.protocol, listenCause(err))
	}
	return fe, nil
}

// listenCause drops what the message around it says already (the
// operation and address), keeping the errno for errors.Is.
func listenCause(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err
	}
	return err
}

func (rt *lbRuntime) stop() {
	for k, fe := range rt.listeners {
		fe.close()
		delete(rt.listeners, k)
	}
	rt.stopChecks()
	<-rt.checksDone
}

// pick chooses a healthy backend for a client at src: the one it last
// reached while the load balancer keeps clients on their backends and the
// client comes back in time, else the next one round-robin.
func (rt *lbRuntime) pick(cfg *lbConfig, src netip.Addr) (backend, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	healthy := make([]backend, 0, len(cfg.backends))
	for _, b := range cfg.backends {
		if ok, _ := rt.healthLocked(cfg, b); ok {
			healthy = append(healthy, b)
		}
	}
	if len(healthy) == 0 {
		return backend{}, false
	}
	now := time.Now()
	if cfg.affinity > 0 {
		if last, ok := rt.sticky[src]; ok && now.Sub(last.at) < cfg.affinity {
			// A backend that left or failed its health check loses its
			// clients, as a real load balancer's stickiness gives way.
			if i := slices.IndexFunc(healthy, func(b backend) bool { return b.instance == last.instance }); i >= 0 {
				rt.sticky[src] = stickyBackend{instance: last.instance, at: now}
				return healthy[i], true
			}
		}
	}
	b := healthy[(rt.rr.Add(1)-1)%uint64(len(healthy))]
	if cfg.affinity > 0 {
		rt.stickLocked(src, b.instance, now, cfg.affinity)
	}
	return b, true
}

// stickyBackend is the backend a client last reached, and when.
type stickyBackend struct {
	instance string
	at       time.Time
}

// stickyKeep bounds the clients remembered before the expired ones are
// forgotten: a test's clients are few, and a scan of them is cheap.
const stickyKeep = 256

func (rt *lbRuntime) stickLocked(src netip.Addr, instance string, now time.Time, affinity time.Duration) {
	if rt.sticky == nil {
		rt.sticky = map[netip.Addr]stickyBackend{}
	}
	if len(rt.sticky) >= stickyKeep {
		for a, s := range rt.sticky {
			if now.Sub(s.at) >= affinity {
				delete(rt.sticky, a)
			}
		}
	}
	rt.sticky[src] = stickyBackend{instance: instance, at: now}
}

// healthLocked says whether b may get new connections under cfg, and if
// not, why.
func (rt *lbRuntime) healthLocked(cfg *lbConfig, b backend) (bool, string) {
	if b.problem != "" {
		return false, b.problem
	}
	if cfg.hcPort == 0 {
		return true, ""
	}
	r, ok := rt.health[b.instance]
	if !ok || r.target != netip.AddrPortFrom(b.addr, cfg.hcPort) {
		// A result for another address or port says nothing about this one.
		return false, "not health-checked yet"
	}
	return r.healthy, r.err
}
