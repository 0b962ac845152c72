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

// Package openstackjson is OpenStack's JSON protocol as fakecloud's
// OpenStack fronts (keystone, nova, neutron, octavia) share it: the
// services' path prefixes in the catalog, the one tenant's fixed names
// that every service's objects carry, the shape of an error body
// (Dialect), the route registration they are given (Router), and the
// reading of queries and version documents. It is separate so that no
// front imports another: each service depends on this protocol and on the
// model, as the real services depend on Keystone and the database. It
// knows nothing of fakecloud's state.
package openstackjson

import (
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

// The services' path prefixes, as a devstack catalog has them.
const (
	Identity = "/identity"
	Compute  = "/compute"
	Network  = "/network"
	LB       = "/load-balancer"
	Image    = "/image"
)

// The one tenant's names, which every service's objects carry: its user
// and project (Keystone's), and its networks (Neutron's, named by Nova's
// addresses and Octavia's VIPs).
const (
	UserID    = "u-ccm-harness"
	ProjectID = "p-ccm-harness"
	// NetworkName is the tenant network every instance has its port on;
	// Nova names its fixed addresses after it.
	NetworkName     = "private"
	PrivateNetID    = "net-private"
	PrivateSubnetID = api.OpenStackSubnetID
	PublicNetID     = "net-public"
	PublicSubnetID  = "subnet-public"
)

// Handler serves one route; c is the call's audit record, whose Dialect
// the router has set.
type Handler = func(w http.ResponseWriter, r *http.Request, c *model.Call)

// Router is how a front registers its routes with the server, which owns
// the mux, authentication and the audit of each request.
type Router interface {
	// Handle registers h behind a Keystone token (X-Auth-Token); its
	// errors, injected faults included, answer in d's shape, and op names
	// the call in the audit log and for faults.
	Handle(pattern string, d Dialect, op string, h Handler)
	// Open registers h with no token needed, as OpenStack's version
	// discovery and Keystone's token issue are.
	Open(pattern, op string, h Handler)
}

// Dialect is an OpenStack service's shape of an error body.
type Dialect func(status int, msg string) any

// IdentityError is Keystone's error body, and keystonemiddleware's in
// front of every service for a token it refuses.
var IdentityError Dialect = func(status int, msg string) any {
	return map[string]any{"error": map[string]any{"code": status, "title": http.StatusText(status), "message": msg}}
}

// StatusName is the name a service gives an error status, def if it has
// none.
func StatusName(names map[int]string, status int, def string) string {
	if n, ok := names[status]; ok {
		return n
	}
	return def
}

// WriteError writes an error in d's shape; it makes Dialect a
// model.ErrorShape, so that a fault answers as the service would.
func (d Dialect) WriteError(w http.ResponseWriter, status int, msg string) {
	body := d(status, msg)
	// Glance's errors are webob's plain text.
	if text, ok := body.(string); ok {
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, text)
		return
	}
	model.WriteJSON(w, status, body)
}

// BaseURL is this server as the caller reached it: the catalog must
// point where the CCM can connect, loopback or the nodes' network.
func BaseURL(r *http.Request) string {
	return "http://" + r.Host
}

// Link is a link in a version document or to a resource.
type Link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

// Versions answers a service's unversioned discovery document: the one
// version fakecloud emulates, with its highest microversion if it has
// microversions.
func Versions(id, micro, path string) Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call) {
		v := map[string]any{"id": id, "status": "CURRENT", "links": []Link{{Rel: "self", Href: BaseURL(r) + path}}}
		if micro != "" {
			v["version"], v["min_version"] = micro, "2.1"
		}
		model.WriteJSON(w, http.StatusOK, map[string]any{"versions": []any{v}})
	}
}

// NotFound answers a path the service has and fakecloud does not emulate.
func NotFound(d Dialect) Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call) {
		d.WriteError(w, http.StatusNotFound, fmt.Sprintf("The resource could not be found: %s %s is not emulated by fakecloud.", r.Method, r.URL.Path))
	}
}

// Query returns the query parameters, refusing filters fakecloud does not
// understand rather than ignoring them: an ignored filter would answer
// with more than the real service, silently.
func Query(w http.ResponseWriter, r *http.Request, d Dialect, known ...string) (map[string]string, bool) {
	out := map[string]string{}
	for k, v := range r.URL.Query() {
		if !slices.Contains(known, k) {
			d.WriteError(w, http.StatusBadRequest, fmt.Sprintf("fakecloud does not emulate the query parameter %q of %s (it knows %s)", k, r.URL.Path, strings.Join(known, ", ")))
			return nil, false
		}
		out[k] = v[0]
	}
	return out, true
}

// IPVersion is 6 for an IPv6 address, else 4.
func IPVersion(addr string) int {
	if a, err := netip.ParseAddr(addr); err == nil && a.Is6() {
		return 6
	}
	return 4
}
