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
// The cloud itself (state, faults, audit trail, data plane) is package
// model, and each API it speaks is a front over it: package native
// (fakecloud's own API and admin API), the AWS fronts under fakecloud/aws
// and the OpenStack ones under fakecloud/openstack. This package is their
// composition root: Config and New, authentication (auth.go), the mux and
// the audit of each request (server.go, audit.go), the routers each
// protocol family's fronts register on (aws.go: the AWS query protocol's
// signatures and dispatch; openstack.go: Keystone tokens), and the load
// balancers' DNS (dns.go).
package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/keystone"
	"sigs.k8s.io/ccm-harness/fakecloud/server/native"
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
	// InternalCIDRv6, if set, makes the cloud dual-stack: every instance
	// also gets an IPv6 InternalIP from it, after its IPv4 ones. The
	// addresses are only data (nothing listens on them).
	InternalCIDRv6 string
	// LBCIDR is the pool load balancer IPs come from, default
	// 127.20.0.0/16. Those IPs are really listened on, so the pool must be
	// loopback: inside 127.0.0.0/8, or ::1/128.
	LBCIDR string
	// LBCIDRv6 is the pool a dual-stack load balancer's IPv6 address
	// comes from: a unique local range routed to this machine (fakecloud
	// --lb-route). Empty: a load balancer asked for IPv6 is refused.
	LBCIDRv6 string
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
	// IgnoreClientAffinity makes every load balancer balance each
	// connection afresh while it keeps and reports the client affinity it
	// was given: a cloud whose data plane does not do what its API says,
	// for a negative control of the session-affinity data path.
	IgnoreClientAffinity bool
	// UnservedIPv6 gives a dual-stack load balancer its IPv6 address, and
	// reports it, but listens on its IPv4 address alone: a cloud whose
	// IPv6 frontend carries nothing, for a negative control of the
	// dual-stack data path.
	UnservedIPv6 bool
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
	// nodes powers them too. A machine's calls come one at a time, in the
	// order of its changes; different machines' calls may overlap, so that
	// a machine slow to follow holds back no other. All come apart from the
	// API's handling: a slow machine slows no call.
	Machines func(name string, state api.InstanceState)
}

// Server is the fakecloud service. It is an http.Handler. It embeds the
// cloud it serves, so that each API's handlers reach the model's state and
// operations directly.
type Server struct {
	*model.Cloud
	cloudToken []byte
	adminToken []byte
	inspToken  []byte
	mux        *http.ServeMux

	// keystone hands out the tokens the other OpenStack fronts take.
	keystone *keystone.Front
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
	cloud, err := model.New(model.Config{
		Region:               cfg.Region,
		Zones:                cfg.Zones,
		InternalCIDR:         cfg.InternalCIDR,
		ExternalCIDR:         cfg.ExternalCIDR,
		InternalCIDRv6:       cfg.InternalCIDRv6,
		LBCIDR:               cfg.LBCIDR,
		LBCIDRv6:             cfg.LBCIDRv6,
		BackendCIDRs:         cfg.BackendCIDRs,
		ProxyLoadBalancers:   cfg.ProxyLoadBalancers,
		IgnoreClientAffinity: cfg.IgnoreClientAffinity,
		UnservedIPv6:         cfg.UnservedIPv6,
		StateFile:            cfg.StateFile,
		NoSync:               cfg.NoSync,
		AuditLog:             cfg.AuditLog,
		Faults:               cfg.Faults,
		Machines:             cfg.Machines,
	})
	if err != nil {
		return nil, err
	}
	s := &Server{
		Cloud:      cloud,
		cloudToken: []byte(cfg.CloudToken),
		adminToken: []byte(cfg.AdminToken),
		inspToken:  []byte(cfg.InspectorToken),
	}
	s.routes()
	return s, nil
}

// Close stops the load balancers' data plane: when it returns, every
// listener and proxied connection is closed and every health checker has
// stopped, and a NoSync cloud's put-off state write is made. The HTTP API
// still answers, but load balancers can no longer be created or changed.
// Closing twice is harmless.
func (s *Server) Close() { s.Cloud.Close() }

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	s.handle("GET "+api.PathHealthz, model.CallerAnonymous, "", func(w http.ResponseWriter, r *http.Request, c *model.Call) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})

	native.New(s.Cloud).Register(nativeRouter{s})

	s.openstackRoutes()
	s.awsRoutes()

	// Whatever no API has answers in fakecloud's own shape.
	s.handle("/", model.CallerAnonymous, "", native.NotFound)
}

// nativeRouter registers fakecloud's own API's routes on the server's mux.
type nativeRouter struct{ s *Server }

func (n nativeRouter) Handle(pattern string, who model.Caller, op string, h native.Handler) {
	n.s.handle(pattern, who, op, h)
}

// handle registers h behind authentication for who, recording op in the
// audit entry of each call.
func (s *Server) handle(pattern string, who model.Caller, op string, h func(http.ResponseWriter, *http.Request, *model.Call)) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		c := callOf(r)
		c.Op = op
		as, ok := s.authorized(r, who)
		if !ok {
			w.Header().Set("WWW-Authenticate", "Bearer")
			model.WriteError(w, http.StatusUnauthorized, api.CodeUnauthorized,
				fmt.Sprintf("%s needs the %s token as \"Authorization: Bearer <token>\"", r.URL.Path, who))
			return
		}
		c.Caller = as
		r.Body = http.MaxBytesReader(w, r.Body, model.MaxBodyBytes)
		h(w, r, c)
	})
}

// ServeHTTP serves both APIs and records every call in the audit trail.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec, r := s.startCall(w, r)
	defer s.finishCall(rec, r)
	s.mux.ServeHTTP(rec, r)
}
