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

// Package server is the fakecloud service: an in-memory cloud with a real
// HTTP/JSON API (see package api) that a cloud-controller-manager talks to,
// an admin API that tests use to shape it, fault injection to make it
// misbehave on purpose, a state file so it survives restarts, and an audit
// log of every call so tests can see what the CCM actually asked.
//
// Resources live in their own files (instances.go, loadbalancers.go,
// routes.go); cross-cutting concerns are auth.go, faults.go, audit.go and
// state.go. Load balancers are real: dataplane.go owns their sockets,
// proxy.go moves their traffic and healthcheck.go probes their backends.
package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// Config configures a Server. Only the tokens are required.
type Config struct {
	// Region defaults to "fake-region-1".
	Region string
	// Zones defaults to the region's name suffixed with a, b and c.
	Zones []string
	// InternalCIDR and ExternalCIDR are the pools instance addresses come
	// from. They default to loopback ranges (127.1.0.0/16, 127.2.0.0/16) so
	// that whatever a cluster does with a node address stays on the machine.
	InternalCIDR, ExternalCIDR string
	// LBCIDR is the pool load balancer IPs come from, default
	// 127.20.0.0/16. Those IPs are really listened on, so the pool must be
	// loopback: inside 127.0.0.0/8, or ::1/128.
	LBCIDR string
	// BackendCIDRs are networks off loopback that load balancers may
	// forward to: those of nodes that are real hosts on this machine (the
	// containers of a kind cluster). Any other address is never dialled.
	BackendCIDRs []netip.Prefix
	// ProxyLoadBalancers makes fakecloud's own load balancers proxy, so
	// that backends see fakecloud's address rather than the client's: a
	// cloud without pass-through load balancers, for a negative control of
	// a CCM's claim that it keeps the client address. (Classic Elastic
	// Load Balancers and Octavia's always proxy; network ones never do.)
	ProxyLoadBalancers bool
	// StateFile, when set, is loaded by New if it exists and rewritten
	// atomically after every change.
	StateFile string
	// NoSync skips the fsync of each state file write, and puts the write
	// off by up to 100 ms so that changes meanwhile share it: for a
	// throwaway cloud whose writes would otherwise dominate (1,000
	// instances made at once), as etcd's --unsafe-no-fsync. Close writes
	// what is pending.
	NoSync bool
	// CloudToken authenticates the cloud API, AdminToken the admin API.
	// They must differ, or the CCM under test could reshape its own cloud.
	CloudToken, AdminToken string
	// InspectorToken, when set, authenticates a second caller of the cloud
	// API, in every dialect: the harness's inspector, which asks the
	// cloud what is true as a real cloud's user would, with credentials of
	// its own. Faults are the CCM's view of the cloud; they never touch
	// the inspector's calls, so it tells the truth while the CCM is lied to.
	InspectorToken string
	// AuditLog, when set, receives one JSON api.AuditEntry per line.
	AuditLog io.Writer
	// Faults, when not empty, replace the faults of the state file: they
	// state what the cloud starts with, like a command line would.
	Faults []api.Fault
	// Machines, when set, is told of each change of an instance's state,
	// whichever API made it, as the machine behind the instance would feel
	// it: a kubelet stops with its stopped or terminated instance and
	// starts with it again (cmd/fakecloud's --kwok-kubeconfig: kwok's
	// nodes). Without it an instance is only data, and whoever runs the
	// nodes powers them too. Calls come one at a time, in the order of the
	// changes, apart from the API's handling: a slow machine slows no call.
	Machines func(name string, state api.InstanceState)
}

const (
	defaultRegion       = "fake-region-1"
	defaultInternalCIDR = "127.1.0.0/16"
	defaultExternalCIDR = "127.2.0.0/16"
	defaultLBCIDR       = "127.20.0.0/16"
	maxBodyBytes        = 1 << 20
)

// Server is the fakecloud service. It is an http.Handler.
type Server struct {
	region     string
	zones      []string
	internal   netip.Prefix
	external   netip.Prefix
	lbPool     netip.Prefix
	stateFile  string
	noSync     bool
	cloudToken []byte
	adminToken []byte
	inspToken  []byte
	mux        *http.ServeMux
	// machines carries state changes to Config.Machines; nil without it.
	machines     chan machineChange
	machinesDone chan struct{}
	closeOnce    sync.Once

	// mu guards st and audit. One lock keeps every change and its
	// persistence in one order, which is what the state file and the audit
	// sequence promise; the cloud is small, contention is not a concern.
	mu    sync.Mutex
	st    state
	audit auditTrail

	// savePending, saveTimer and saveErr are a NoSync cloud's put-off
	// state write (saveLocked), guarded by mu.
	savePending bool
	saveTimer   *time.Timer
	saveErr     error

	// osTokens are the Keystone tokens handed out, guarded by mu.
	osTokens osTokens

	// dp holds the load balancers' sockets. It is changed only under mu,
	// right after the state it mirrors, and never takes mu itself.
	dp *dataplane
}

// New builds a Server from cfg, loading cfg.StateFile if it exists and
// writing it at once so that an unwritable location fails here rather than
// at the first change.
func New(cfg Config) (*Server, error) {
	if cfg.CloudToken == "" || cfg.AdminToken == "" {
		return nil, errors.New("both a cloud token and an admin token are required")
	}
	if cfg.CloudToken == cfg.AdminToken {
		return nil, errors.New("the cloud token and the admin token are the same: they must differ so the CCM under test cannot use the admin API")
	}
	if cfg.InspectorToken != "" && (cfg.InspectorToken == cfg.CloudToken || cfg.InspectorToken == cfg.AdminToken) {
		return nil, errors.New("the inspector token is the cloud's or the admin's: it must differ from both, so that faults aimed at the CCM never reach the inspector and the inspector cannot reshape the cloud")
	}
	s := &Server{
		region:     cfg.Region,
		zones:      cfg.Zones,
		stateFile:  cfg.StateFile,
		noSync:     cfg.NoSync,
		cloudToken: []byte(cfg.CloudToken),
		adminToken: []byte(cfg.AdminToken),
		inspToken:  []byte(cfg.InspectorToken),
		audit:      auditTrail{w: cfg.AuditLog, max: auditKeep},
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
	if s.lbPool, err = parsePool("load balancer", cfg.LBCIDR, defaultLBCIDR); err != nil {
		return nil, err
	}
	if !isLoopbackPrefix(s.lbPool) {
		return nil, fmt.Errorf("load balancer CIDR %s is not inside 127.0.0.0/8 or ::1/128: fakecloud really listens on load balancer IPs, and only loopback keeps that traffic on this machine", s.lbPool)
	}
	for i, f := range cfg.Faults {
		if err := f.Validate(); err != nil {
			return nil, fmt.Errorf("initial fault %d: %w", i+1, err)
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
	if err := s.writeStateLocked(); err != nil {
		return nil, err
	}
	for _, n := range cfg.BackendCIDRs {
		if n.Addr().IsUnspecified() || n.Bits() < 8 {
			return nil, fmt.Errorf("backend CIDR %s is wider than a /8: name the nodes' own network, such as 172.18.0.0/16", n)
		}
	}
	s.dp = newDataplane(cfg.BackendCIDRs, cfg.ProxyLoadBalancers)
	for _, lb := range s.st.LoadBalancers {
		if err := s.dp.apply(lb, s.backendsLocked(lb.Backends)); err != nil {
			s.dp.close()
			return nil, fmt.Errorf("cannot re-open load balancer %q (%s) from state file %s: %w (free the address, or remove the load balancer from the file)", lb.Name, lb.ID, s.stateFile, err)
		}
	}
	s.routes()
	if cfg.Machines != nil {
		s.machines = make(chan machineChange, 1024)
		s.machinesDone = make(chan struct{})
		go func() {
			defer close(s.machinesDone)
			for c := range s.machines {
				cfg.Machines(c.name, c.state)
			}
		}()
	}
	return s, nil
}

// Close stops the load balancers' data plane: when it returns, every
// listener and proxied connection is closed and every health checker has
// stopped, and a NoSync cloud's put-off state write is made. The HTTP API
// still answers, but load balancers can no longer be created or changed.
// Closing twice is harmless.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.dp.close()
		s.flushState()
		// Under the lock that state changes hold: none is sent after.
		s.mu.Lock()
		ch := s.machines
		s.machines = nil
		s.mu.Unlock()
		if ch != nil {
			close(ch)
			<-s.machinesDone
		}
	})
}

// machineChange is an instance's new state, for Config.Machines.
type machineChange struct {
	name  string
	state api.InstanceState
}

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

func isLoopbackPrefix(p netip.Prefix) bool {
	if p.Addr().Is4() {
		return p.Bits() >= 8 && netip.MustParsePrefix("127.0.0.0/8").Contains(p.Addr())
	}
	return p == netip.MustParsePrefix("::1/128")
}

// caller says which token a route needs, and is what the audit log records.
type caller string

const (
	callerCloud caller = "cloud"
	// callerInspector is the harness's inspector on the cloud API (its
	// own token, access key or Keystone user): no fault touches its calls.
	callerInspector caller = "inspector"
	callerAdmin     caller = "admin"
	callerAnonymous caller = "anonymous"
)

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	s.handle("GET "+api.PathHealthz, callerAnonymous, "", func(w http.ResponseWriter, r *http.Request, c *call) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})

	s.handle("GET "+api.PathInstances, callerCloud, api.OpListInstances, s.listInstances)
	s.handle("GET "+api.PathInstance+"{id}", callerCloud, api.OpGetInstance, s.getInstance)
	s.handle("GET "+api.PathLoadBalancers, callerCloud, api.OpListLoadBalancers, s.listLoadBalancers)
	s.handle("GET "+api.PathLoadBalancer+"{name}", callerCloud, api.OpGetLoadBalancer, s.getLoadBalancer)
	s.handle("PUT "+api.PathLoadBalancer+"{name}", callerCloud, api.OpEnsureLoadBalancer, s.ensureLoadBalancer)
	s.handle("DELETE "+api.PathLoadBalancer+"{name}", callerCloud, api.OpDeleteLoadBalancer, s.deleteLoadBalancer)
	s.handle("GET "+api.PathRoutes, callerCloud, api.OpListRoutes, s.listRoutes)
	s.handle("PUT "+api.PathRoute+"{name}", callerCloud, api.OpCreateRoute, s.createRoute)
	s.handle("DELETE "+api.PathRoute+"{name}", callerCloud, api.OpDeleteRoute, s.deleteRoute)

	s.handle("GET "+api.AdminPathInstances, callerAdmin, "", s.adminListInstances)
	s.handle("POST "+api.AdminPathInstances, callerAdmin, "", s.adminCreateInstance)
	s.handle("GET "+api.AdminPathInstance+"{ref}", callerAdmin, "", s.adminGetInstance)
	s.handle("POST "+api.AdminPathInstance+"{ref}/{action}", callerAdmin, "", s.adminInstanceAction)
	s.handle("GET "+api.AdminPathLoadBalancers, callerAdmin, "", s.adminListLoadBalancers)
	s.handle("GET "+api.AdminPathLoadBalancer+"{ref}", callerAdmin, "", s.adminGetLoadBalancer)
	s.handle("GET "+api.AdminPathRoutes, callerAdmin, "", s.adminListRoutes)
	s.handle("DELETE "+api.AdminPathRoute+"{name}", callerAdmin, "", s.adminDeleteRoute)
	s.handle("GET "+api.AdminPathFaults, callerAdmin, "", s.adminListFaults)
	s.handle("POST "+api.AdminPathFaults, callerAdmin, "", s.adminAddFault)
	s.handle("DELETE "+api.AdminPathFaults, callerAdmin, "", s.adminClearFaults)
	s.handle("DELETE "+api.AdminPathFaults+"/{id}", callerAdmin, "", s.adminDeleteFault)
	s.handle("GET "+api.AdminPathAudit, callerAdmin, "", s.adminAudit)

	s.openstackRoutes()
	s.awsRoutes()

	// Catch-alls answer in JSON, and only after authentication so that an
	// unauthenticated caller learns nothing about which paths exist.
	s.handle("/v1/", callerCloud, "", notFound)
	s.handle("/admin/", callerAdmin, "", notFound)
	s.handle("/", callerAnonymous, "", notFound)
}

func notFound(w http.ResponseWriter, r *http.Request, c *call) {
	writeError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("no endpoint for %s %s", r.Method, r.URL.Path))
}

// handle registers h behind authentication for who, recording op in the
// audit entry of each call.
func (s *Server) handle(pattern string, who caller, op string, h func(http.ResponseWriter, *http.Request, *call)) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		c := callOf(r)
		c.op = op
		as, ok := s.authorized(r, who)
		if !ok {
			w.Header().Set("WWW-Authenticate", "Bearer")
			writeError(w, http.StatusUnauthorized, api.CodeUnauthorized,
				fmt.Sprintf("%s needs the %s token as \"Authorization: Bearer <token>\"", r.URL.Path, who))
			return
		}
		c.caller = as
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		h(w, r, c)
	})
}

// ServeHTTP serves both APIs and records every call in the audit trail.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec, r := s.startCall(w, r)
	defer s.finishCall(rec, r)
	s.mux.ServeHTTP(rec, r)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// The status is already sent; a failed write means the client left.
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: msg}})
}

// decodeBody decodes a JSON request body strictly: a misspelt field in a
// test's request is a bug to report, not a default to apply.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, api.CodeInvalid, "request body: "+err.Error())
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, api.CodeInvalid, "request body: more than one JSON value")
		return false
	}
	return true
}

// saveFailed answers a change that happened in memory but could not be
// persisted: the caller must know the state file no longer matches.
func saveFailed(w http.ResponseWriter, err error) {
	writeError(w, http.StatusInternalServerError, api.CodeInternal, err.Error())
}
