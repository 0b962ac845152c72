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

package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

// fakecloud speaks OpenStack too, over the same state: Keystone v3 hands
// out tokens and a catalog that points at this server for compute (Nova),
// network (Neutron) and load-balancer (Octavia). A server is an instance,
// its flavor the instance type, its availability zone the zone. Calls are
// audited and faulted under the operations of the native API they read, so
// one fault makes both dialects lie alike.
//
// Each service answers errors in its own shape, as the real services do:
// gophercloud and the CCMs built on it parse them.

// OpenStack's fixed names: the one user, project and domain fakecloud
// knows. The user's password, and the secret of its one application
// credential, are the cloud token.
const (
	osUserName = "ccm-harness"
	osUserID   = "u-ccm-harness"
	// osInspectorUserID is api.OpenStackInspectorUser's ID.
	osInspectorUserID = "u-ccm-harness-inspector"
	osProject         = "ccm-harness"
	osProjectID       = "p-ccm-harness"
	osDomain          = "Default"
	osDomainID        = "default"
	// osAppCredID is the application credential's id; its name is the
	// user's.
	osAppCredID = "ac-ccm-harness"
	// osTokenLife is how long a Keystone token lives, Keystone's default.
	osTokenLife = time.Hour
)

// The services' path prefixes, as a devstack catalog has them.
const (
	osIdentity = "/identity"
	osCompute  = "/compute"
	osNetwork  = "/network"
	osLB       = "/load-balancer"
	osImage    = "/image"
)

// dialect is an OpenStack service's shape of an error body.
type dialect func(status int, msg string) any

var (
	// Keystone, and keystonemiddleware in front of every service for a
	// token it refuses.
	identityError dialect = func(status int, msg string) any {
		return map[string]any{"error": map[string]any{"code": status, "title": http.StatusText(status), "message": msg}}
	}
	// Nova names the body after the fault: itemNotFound, badRequest, ...
	computeError dialect = func(status int, msg string) any {
		return map[string]any{nameOf(novaFaults, status, "computeFault"): map[string]any{"code": status, "message": msg}}
	}
	networkError dialect = func(status int, msg string) any {
		return map[string]any{"NeutronError": map[string]any{"type": nameOf(neutronErrors, status, "HTTPInternalServerError"), "message": msg, "detail": ""}}
	}
	imageError dialect = func(status int, msg string) any {
		return fmt.Sprintf("%d %s\n\n%s\n\n   ", status, http.StatusText(status), msg)
	}
	lbError dialect = func(status int, msg string) any {
		code := "Server"
		if status < 500 {
			code = "Client"
		}
		return map[string]any{"faultcode": code, "faultstring": msg, "debuginfo": nil}
	}
)

// novaFaults and neutronErrors name an error status as each service does.
var (
	novaFaults = map[int]string{
		http.StatusBadRequest: "badRequest", http.StatusForbidden: "forbidden",
		http.StatusNotFound: "itemNotFound", http.StatusConflict: "conflictingRequest",
		http.StatusTooManyRequests: "overLimit", http.StatusNotImplemented: "notImplemented",
		http.StatusServiceUnavailable: "serviceUnavailable",
	}
	neutronErrors = map[int]string{
		http.StatusBadRequest: "HTTPBadRequest", http.StatusNotFound: "HTTPNotFound",
		http.StatusConflict: "HTTPConflict", http.StatusTooManyRequests: "HTTPTooManyRequests",
		http.StatusNotImplemented: "HTTPNotImplemented",
	}
)

func nameOf(names map[int]string, status int, def string) string {
	if n, ok := names[status]; ok {
		return n
	}
	return def
}

func (d dialect) WriteError(w http.ResponseWriter, status int, msg string) {
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

// osTokens are the Keystone tokens handed out, with their expiry and whose
// they are. They live in memory only: after a restart a client
// authenticates again, as it would after Keystone's tokens expired.
type osTokens map[string]osToken

type osToken struct {
	expires time.Time
	who     model.Caller
}

// osHandle registers an OpenStack route: its errors, injected faults
// included, answer in d's shape, and it needs a live Keystone token in
// X-Auth-Token.
func (s *Server) osHandle(pattern string, d dialect, op string, h func(http.ResponseWriter, *http.Request, *model.Call)) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		c := callOf(r)
		c.Op = op
		c.Dialect = d
		who, ok := s.osAuthorized(r.Header.Get("X-Auth-Token"))
		if !ok {
			w.Header().Set("WWW-Authenticate", "Keystone uri=\""+osBaseURL(r)+osIdentity+"\"")
			identityError.WriteError(w, http.StatusUnauthorized, "The request you have made requires authentication.")
			return
		}
		c.Caller = who
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		h(w, r, c)
	})
}

func (s *Server) osAuthorized(token string) (model.Caller, bool) {
	if token == "" {
		return "", false
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	t, ok := s.osTokens[token]
	return t.who, ok && time.Now().Before(t.expires)
}

func (s *Server) osIssueToken(who model.Caller) (string, time.Time) {
	b := make([]byte, 32)
	rand.Read(b) // never fails, per crypto/rand
	tok := "gAAAAA" + hex.EncodeToString(b)
	exp := time.Now().Add(osTokenLife).UTC().Truncate(time.Second)
	s.Mu.Lock()
	defer s.Mu.Unlock()
	now := time.Now()
	for t, e := range s.osTokens {
		if now.After(e.expires) {
			delete(s.osTokens, t)
		}
	}
	s.osTokens[tok] = osToken{exp, who}
	return tok, exp
}

// osBaseURL is this server as the caller reached it: the catalog must
// point where the CCM can connect, loopback or the nodes' network.
func osBaseURL(r *http.Request) string {
	return "http://" + r.Host
}

func (s *Server) openstackRoutes() {
	s.osTokens = osTokens{}
	// Version discovery and token issue need no token.
	s.handle("GET "+osIdentity+"/{$}", model.CallerAnonymous, "", s.keystoneVersions)
	s.handle("GET "+osIdentity+"/v3/{$}", model.CallerAnonymous, "", s.keystoneVersion)
	s.handle("GET "+osIdentity+"/v3", model.CallerAnonymous, "", s.keystoneVersion)
	s.handle("POST "+osIdentity+"/v3/auth/tokens", model.CallerAnonymous, api.OpAuthenticate, s.keystoneAuthenticate)

	// Each service's version document needs no token either, as in
	// OpenStack; clients read it before their first call.
	s.handle("GET "+osCompute+"/{$}", model.CallerAnonymous, "", osVersions("v2.1", "2.1", osCompute+"/v2.1/"))
	s.handle("GET "+osNetwork+"/{$}", model.CallerAnonymous, "", osVersions("v2.0", "", osNetwork+"/v2.0/"))
	s.handle("GET "+osLB+"/{$}", model.CallerAnonymous, "", octaviaVersions)
	s.handle("GET "+osImage+"/{$}", model.CallerAnonymous, "", osVersions("v2.16", "", osImage+"/v2/"))

	s.osHandle("GET "+osCompute+"/v2.1/servers/detail", computeError, api.OpListInstances, s.novaListServers)
	s.osHandle("GET "+osCompute+"/v2.1/servers", computeError, api.OpListInstances, s.novaListServers)
	s.osHandle("GET "+osCompute+"/v2.1/servers/{id}", computeError, api.OpGetInstance, s.novaGetServer)
	// The inspector's power actions; the CCM makes none.
	s.osHandle("POST "+osCompute+"/v2.1/servers/{id}/action", computeError, "", s.novaServerAction)
	s.osHandle("DELETE "+osCompute+"/v2.1/servers/{id}", computeError, "", s.novaDeleteServer)
	s.osHandle("GET "+osCompute+"/v2.1/flavors", computeError, "", s.novaListFlavors)
	s.osHandle("GET "+osCompute+"/v2.1/flavors/detail", computeError, "", s.novaListFlavors)
	s.osHandle("GET "+osCompute+"/v2.1/flavors/{id}", computeError, "", s.novaGetFlavor)
	s.osHandle("GET "+osCompute+"/v2.1/flavors/{id}/os-extra_specs", computeError, "", novaFlavorExtraSpecs)
	s.osHandle("GET "+osCompute+"/v2.1/os-availability-zone", computeError, "", s.novaAvailabilityZones)
	s.osHandle("GET "+osCompute+"/v2.1/os-availability-zone/detail", computeError, "", s.novaAvailabilityZonesDetail)
	s.osHandle("GET "+osCompute+"/v2.1/{$}", computeError, "", s.novaVersion)

	s.osHandle("GET "+osNetwork+"/v2.0/ports", networkError, api.OpListInstances, s.neutronListPorts)
	s.osHandle("GET "+osNetwork+"/v2.0/ports/{id}", networkError, api.OpGetInstance, s.neutronGetPort)
	s.osHandle("GET "+osNetwork+"/v2.0/networks", networkError, "", s.neutronListNetworks)
	s.osHandle("GET "+osNetwork+"/v2.0/networks/{id}", networkError, "", s.neutronGetNetwork)
	s.osHandle("GET "+osNetwork+"/v2.0/subnets", networkError, "", s.neutronListSubnets)
	s.osHandle("GET "+osNetwork+"/v2.0/subnets/{id}", networkError, "", s.neutronGetSubnet)
	s.osHandle("GET "+osNetwork+"/v2.0/floatingips", networkError, "", s.neutronListFloatingIPs)
	s.osHandle("GET "+osNetwork+"/v2.0/extensions", networkError, "", s.neutronExtensions)
	s.osHandle("GET "+osNetwork+"/v2.0/security-groups", networkError, "", s.neutronListSecurityGroups)
	s.osHandle("PUT "+osNetwork+"/v2.0/ports/{id}", networkError, "", s.neutronUpdatePort)
	s.osHandle("GET "+osNetwork+"/v2.0/routers", networkError, api.OpListRoutes, s.neutronListRouters)
	s.osHandle("GET "+osNetwork+"/v2.0/routers/{id}", networkError, api.OpListRoutes, s.neutronGetRouter)
	s.osHandle("PUT "+osNetwork+"/v2.0/routers/{id}", networkError, api.OpCreateRoute, s.neutronUpdateRouter)
	s.osHandle("PUT "+osNetwork+"/v2.0/routers/{id}/add_extraroutes", networkError, api.OpCreateRoute, s.neutronExtraRoutes(true))
	s.osHandle("PUT "+osNetwork+"/v2.0/routers/{id}/remove_extraroutes", networkError, api.OpDeleteRoute, s.neutronExtraRoutes(false))
	s.octaviaRoutes()

	// What fakecloud does not emulate answers as the service does for a
	// path it has no route for: 404 in its shape, after authentication.
	s.osHandle(osCompute+"/", computeError, "", osNotFound(computeError))
	s.osHandle(osNetwork+"/", networkError, "", osNotFound(networkError))
	s.osHandle(osLB+"/", lbError, "", osNotFound(lbError))
	s.osHandle("GET "+osImage+"/v2/images", imageError, "", glanceListImages)
	s.osHandle(osImage+"/", imageError, "", osNotFound(imageError))
	s.handle(osIdentity+"/", model.CallerAnonymous, "", func(w http.ResponseWriter, r *http.Request, c *model.Call) {
		identityError.WriteError(w, http.StatusNotFound, "The resource could not be found.")
	})
}

// osVersions answers a service's unversioned discovery document: the one
// version fakecloud emulates, with its highest microversion if it has
// microversions.
func osVersions(id, micro, path string) func(http.ResponseWriter, *http.Request, *model.Call) {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call) {
		v := map[string]any{"id": id, "status": "CURRENT", "links": []osLink{{Rel: "self", Href: osBaseURL(r) + path}}}
		if micro != "" {
			v["version"], v["min_version"] = micro, "2.1"
		}
		model.WriteJSON(w, http.StatusOK, map[string]any{"versions": []any{v}})
	}
}

func osNotFound(d dialect) func(http.ResponseWriter, *http.Request, *model.Call) {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call) {
		d.WriteError(w, http.StatusNotFound, fmt.Sprintf("The resource could not be found: %s %s is not emulated by fakecloud.", r.Method, r.URL.Path))
	}
}

// osQuery returns the query parameter name, refusing filters fakecloud
// does not understand rather than ignoring them: an ignored filter would
// answer with more than the real service, silently.
func osQuery(w http.ResponseWriter, r *http.Request, d dialect, known ...string) (map[string]string, bool) {
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
