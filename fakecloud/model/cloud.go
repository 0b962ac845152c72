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

// Package model is the fakecloud cloud itself: its instances, load
// balancers, routes and the objects each dialect keeps of its own
// (security groups, target groups, Octavia's trees), the faults that make
// it misbehave, the audit trail of calls, the state file that makes it
// survive a restart, and the load balancers' real data plane (dataplane.go
// owns their sockets, proxy.go moves their traffic, healthcheck.go probes
// their backends).
//
// It is separate from the APIs that speak for it (fakecloud's own API and
// admin API in server/native, and the AWS and OpenStack fronts) so that every
// front changes one cloud, under one lock, with one persistence and one
// audit order: an instance stopped through EC2 is stopped for Nova too.
// The model serves no HTTP route; what it knows of HTTP is the call
// record a front fills in (Call) and the answer a fault makes (ApplyFault),
// because faults are the cloud's and must act the same whichever front
// was called.
package model

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/lbroute"
)

// Config configures a Cloud: package server's Config less what only the
// HTTP side needs (the tokens). Its fields mean what Config's there say.
type Config struct {
	Region                     string
	Zones                      []string
	InternalCIDR, ExternalCIDR string
	InternalCIDRv6             string
	LBCIDRv6                   string
	LBCIDR                     string
	BackendCIDRs               []netip.Prefix
	ProxyLoadBalancers         bool
	IgnoreClientAffinity       bool
	UnservedIPv6               bool
	StateFile                  string
	NoSync                     bool
	AuditLog                   io.Writer
	Faults                     []api.Fault
	Machines                   func(name string, state api.InstanceState)
}

// MaxBodyBytes bounds a request body, in every API.
const MaxBodyBytes = 1 << 20

const (
	defaultRegion       = "fake-region-1"
	defaultInternalCIDR = "127.1.0.0/16"
	defaultExternalCIDR = "127.2.0.0/16"
	defaultLBCIDR       = "127.20.0.0/16"
)

// Cloud is the simulated cloud. Every front works on it through its
// methods, each of which takes its lock.
type Cloud struct {
	region   string
	zones    []string
	internal netip.Prefix
	// internal6 is the pool of the instances' IPv6 InternalIPs; zero in
	// an IPv4-only cloud.
	internal6 netip.Prefix
	external  netip.Prefix
	lbPool    netip.Prefix
	// lbPool6 is the range of dual-stack load balancers' IPv6 addresses;
	// zero where the cloud has none.
	lbPool6   netip.Prefix
	stateFile string
	noSync    bool
	// machines carries state changes to Config.Machines; nil without it.
	machines  *machines
	closeOnce sync.Once

	// mu guards st and the audit trail. One lock keeps every change and
	// its persistence in one order, which is what the state file and the
	// audit sequence promise; the cloud is small, contention is not a
	// concern. It is the model's alone: a front reads and changes the
	// cloud through methods that take it, so no front can leave the state
	// half changed or answer with a pointer into it.
	mu sync.Mutex
	// st is the cloud's state, guarded by mu.
	st    State
	audit auditTrail

	// savePending, saveTimer and saveErr are a NoSync cloud's put-off
	// state write (saveLocked), guarded by mu.
	savePending bool
	saveTimer   *time.Timer
	saveErr     error

	// dp holds the load balancers' sockets. It is changed only under mu,
	// right after the state it mirrors, and never takes mu itself.
	dp *dataplane
}

// New builds a Cloud from cfg, loading cfg.StateFile if it exists and
// writing it at once so that an unwritable location fails here rather than
// at the first change.
func New(cfg Config) (*Cloud, error) {
	s := &Cloud{
		region:    cfg.Region,
		zones:     cfg.Zones,
		stateFile: cfg.StateFile,
		noSync:    cfg.NoSync,
		audit:     auditTrail{w: cfg.AuditLog, max: auditKeep},
	}
	if s.region == "" {
		s.region = defaultRegion
	}
	if len(s.zones) == 0 {
		s.zones = []string{s.region + "a", s.region + "b", s.region + "c"}
	}
	for i, z := range s.zones {
		if z == "" {
			return nil, fmt.Errorf("zone %d of %v is empty", i+1, s.zones)
		}
	}
	var err error
	if s.internal, err = parsePool("internal", cfg.InternalCIDR, defaultInternalCIDR); err != nil {
		return nil, err
	}
	if s.external, err = parsePool("external", cfg.ExternalCIDR, defaultExternalCIDR); err != nil {
		return nil, err
	}
	if cfg.InternalCIDRv6 != "" {
		if s.internal6, err = parsePool("internal IPv6", cfg.InternalCIDRv6, ""); err != nil {
			return nil, err
		}
		if !s.internal6.Addr().Is6() || s.internal6.Addr().Is4In6() || s.internal6.Bits() > 120 {
			return nil, fmt.Errorf("internal IPv6 CIDR %s: give an IPv6 range of at least 256 addresses, such as fd00:1::/64", s.internal6)
		}
	}
	if s.lbPool, err = parsePool("load balancer", cfg.LBCIDR, defaultLBCIDR); err != nil {
		return nil, err
	}
	if err := isLocalPrefix(s.lbPool); err != nil {
		return nil, fmt.Errorf("load balancer CIDR %s is not this machine's (%v): fakecloud really listens on load balancer IPs; give a range of 127.0.0.0/8, or route this one here (fakecloud --lb-route)", s.lbPool, err)
	}
	if cfg.LBCIDRv6 != "" {
		if s.lbPool6, err = parsePool("load balancer IPv6", cfg.LBCIDRv6, ""); err != nil {
			return nil, err
		}
		if !s.lbPool6.Addr().Is6() || s.lbPool6.Addr().Is4In6() || s.lbPool6.Bits() > 120 {
			return nil, fmt.Errorf("load balancer IPv6 CIDR %s: give an IPv6 range of at least 256 addresses, such as fd00:2::/64", s.lbPool6)
		}
		if err := lbroute.Allowed(s.lbPool6); err != nil {
			return nil, fmt.Errorf("load balancer IPv6 CIDR %s is not this machine's to route (%v): give a unique local range, such as fd00:2::/64, with --lb-route", s.lbPool6, err)
		}
		// An IPv6 socket binds an address routed here only with
		// IP_FREEBIND (which the data plane sets), so asking the
		// kernel where the range's traffic goes is the test.
		if err := lbroute.Local(s.lbPool6.Addr().Next()); err != nil {
			return nil, fmt.Errorf("load balancer IPv6 CIDR %s is not routed to this machine (%v): fakecloud really listens on load balancer IPs; route it here (fakecloud --lb-route)", s.lbPool6, err)
		}
	}
	for i, f := range cfg.Faults {
		if err := f.Validate(); err != nil {
			return nil, fmt.Errorf("initial fault %d: %w", i+1, err)
		}
	}
	for _, n := range cfg.BackendCIDRs {
		if n.Addr().IsUnspecified() || n.Bits() < 8 {
			return nil, fmt.Errorf("backend CIDR %s is wider than a /8: name the nodes' own network, such as 172.18.0.0/16", n)
		}
	}

	s.st = newState()
	if s.stateFile != "" {
		loaded, err := loadState(s.stateFile)
		if err != nil {
			return nil, err
		}
		if loaded != nil {
			s.st = *loaded
		}
	}
	if len(cfg.Faults) > 0 {
		s.st.Faults = nil
		for _, f := range cfg.Faults {
			s.addFaultLocked(f)
		}
	}
	// Audit numbers continue above anything handed out before a restart, so
	// a reader polling with since= never misses or repeats an entry.
	s.audit.seq = s.st.AuditSeqFloor
	s.dp = newDataplane(cfg.BackendCIDRs, cfg.ProxyLoadBalancers, cfg.IgnoreClientAffinity)
	s.dp.unservedIPv6 = cfg.UnservedIPv6
	for _, lb := range s.st.LoadBalancers {
		if err := s.dp.apply(lb, s.backendsLocked(lb.Backends)); err != nil {
			s.dp.close()
			return nil, fmt.Errorf("cannot re-open load balancer %q (%s) from state file %s: %w (free the address, or remove the load balancer from the file)", lb.Name, lb.ID, s.stateFile, err)
		}
	}
	// Written only now: a start that fails above leaves the file as it was.
	if err := s.writeStateLocked(); err != nil {
		s.dp.close()
		return nil, err
	}
	if cfg.Machines != nil {
		s.machines = newMachines(cfg.Machines)
	}
	return s, nil
}

// Close stops the load balancers' data plane: when it returns, every
// listener and proxied connection is closed and every health checker has
// stopped, and a NoSync cloud's put-off state write is made. Closing
// twice is harmless.
func (s *Cloud) Close() {
	s.closeOnce.Do(func() {
		s.dp.close()
		s.flushState()
		// Under the lock that state changes hold: none is sent after.
		s.mu.Lock()
		m := s.machines
		s.machines = nil
		s.mu.Unlock()
		if m != nil {
			m.close()
		}
	})
}

// Region is the cloud's region.
func (s *Cloud) Region() string { return s.region }

// Zones are the cloud's zones, in the order instances take them.
func (s *Cloud) Zones() []string { return s.zones }

// InternalPool and ExternalPool are the pools instance addresses come
// from: the fronts' networks and subnets are built on them.
func (s *Cloud) InternalPool() netip.Prefix { return s.internal }

// ExternalPool: see InternalPool.
func (s *Cloud) ExternalPool() netip.Prefix { return s.external }

func parsePool(name, cidr, def string) (netip.Prefix, error) {
	if cidr == "" {
		cidr = def
	}
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%s CIDR %q: %w", name, cidr, err)
	}
	return p.Masked(), nil
}

// isLocalPrefix says why load balancers could not listen in p: its
// addresses must be this machine's, on loopback (127.0.0.0/8, ::1) or
// routed here (a local route, fakecloud --lb-route), so that the traffic
// to them stays on this machine. Binding p's first address tells.
func isLocalPrefix(p netip.Prefix) error {
	if err := lbroute.Allowed(p); err != nil {
		return err
	}
	l, err := net.Listen("tcp", netip.AddrPortFrom(p.Addr(), 0).String())
	if err != nil {
		return err
	}
	return l.Close()
}

// Caller says which token a route needs, and is what the audit log records.
type Caller string

const (
	CallerCloud Caller = "cloud"
	// callerInspector is the harness's inspector on the cloud API (its
	// own token, access key or Keystone user): no fault touches its calls.
	CallerInspector Caller = "inspector"
	CallerAdmin     Caller = "admin"
	CallerAnonymous Caller = "anonymous"
)

// WriteJSON writes v as a JSON body with status: the native API's and
// OpenStack's answers alike.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// The status is already sent; a failed write means the client left.
	_ = json.NewEncoder(w).Encode(v)
}

// WriteError writes fakecloud's own error body, the shape a Call fails in
// when its front set no Dialect.
func WriteError(w http.ResponseWriter, status int, code, msg string) {
	WriteJSON(w, status, api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: msg}})
}

// SaveFailed answers a change that happened in memory but could not be
// persisted: the caller must know the state file no longer matches.
func SaveFailed(w http.ResponseWriter, err error) {
	WriteError(w, http.StatusInternalServerError, api.CodeInternal, err.Error())
}
