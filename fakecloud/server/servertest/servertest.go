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

// Package servertest runs a fakecloud server for tests: a Fixture is a
// Server behind a real HTTP listener, with the calls the tests of every
// API make (the native and admin APIs in raw HTTP, the AWS and OpenStack
// dialects through their SDKs, clients.go). It is a package of its own,
// not a _test file, because the tests of each front live in that front's
// package and drive the whole composed server, as a CCM would.
package servertest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
)

// The tokens a Fixture's server takes unless its Config says otherwise.
const (
	CloudToken = "cloud-secret"
	AdminToken = "admin-secret"
)

// Fixture is a Server behind a real HTTP listener, spoken to in raw HTTP so
// the tests pin down the wire contract, not just a client's view of it.
type Fixture struct {
	T   *testing.T
	Srv *server.Server
	URL string
}

// New serves a Server made of cfg, with the test tokens unless cfg has
// its own, until the test ends.
func New(t *testing.T, cfg server.Config) *Fixture {
	t.Helper()
	if cfg.CloudToken == "" {
		cfg.CloudToken = CloudToken
	}
	if cfg.AdminToken == "" {
		cfg.AdminToken = AdminToken
	}
	s, err := server.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(s.Close)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return &Fixture{T: t, Srv: s, URL: hs.URL}
}

// Response is a raw HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// ErrorBody decodes the answer as fakecloud's error body.
func (r Response) ErrorBody(t *testing.T) api.ErrorDetail {
	t.Helper()
	var eb api.ErrorBody
	if err := json.Unmarshal(r.Body, &eb); err != nil {
		t.Fatalf("error body %q is not JSON: %v", r.Body, err)
	}
	return eb.Error
}

// Do calls the server with token as the bearer token; body is sent as it
// is when a string, else as JSON.
func (f *Fixture) Do(method, path, token string, body any) Response {
	f.T.Helper()
	var rd *bytes.Reader
	switch b := body.(type) {
	case nil:
		rd = bytes.NewReader(nil)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		j, err := json.Marshal(b)
		if err != nil {
			f.T.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, f.URL+path, rd)
	if err != nil {
		f.T.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: buf.Bytes()}
}

// Must does a call that has to answer want and decodes its body into out.
func (f *Fixture) Must(want int, method, path, token string, body, out any) Response {
	f.T.Helper()
	r := f.Do(method, path, token, body)
	if r.Status != want {
		f.T.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Status, want, r.Body)
	}
	if out != nil {
		if err := json.Unmarshal(r.Body, out); err != nil {
			f.T.Fatalf("%s %s: decoding %q: %v", method, path, r.Body, err)
		}
	}
	return r
}

// Create makes an instance through the admin API.
func (f *Fixture) Create(name string) api.Instance {
	f.T.Helper()
	var inst api.Instance
	f.Must(http.StatusCreated, "POST", api.AdminPathInstances, AdminToken, api.CreateInstanceRequest{Name: name}, &inst)
	return inst
}

// AddFault adds a fault through the admin API.
func (f *Fixture) AddFault(fault api.Fault) api.Fault {
	f.T.Helper()
	var out api.Fault
	f.Must(http.StatusCreated, "POST", api.AdminPathFaults, AdminToken, fault, &out)
	return out
}

// Ensure PUTs a load balancer spec and wants status want.
func (f *Fixture) Ensure(name string, spec api.LoadBalancerSpec, want int) api.LoadBalancer {
	f.T.Helper()
	var lb api.LoadBalancer
	f.Must(want, "PUT", api.PathLoadBalancer+name, CloudToken, spec, &lb)
	return lb
}

// AdminLB is a load balancer as the admin API shows it.
func (f *Fixture) AdminLB(name string) api.LoadBalancer {
	f.T.Helper()
	var lb api.LoadBalancer
	f.Must(http.StatusOK, "GET", api.AdminPathLoadBalancer+name, AdminToken, nil, &lb)
	return lb
}

// TCP and UDP are listeners of a load balancer spec.
func TCP(port, nodePort uint16) api.Listener {
	return api.Listener{Port: int32(port), Protocol: api.ProtocolTCP, NodePort: int32(nodePort)}
}

// UDP: see TCP.
func UDP(port, nodePort uint16) api.Listener {
	return api.Listener{Port: int32(port), Protocol: api.ProtocolUDP, NodePort: int32(nodePort)}
}
