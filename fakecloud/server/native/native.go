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

// Package native is fakecloud's own API: the cloud API (/v1) a
// cloud-controller-manager calls, and the admin API (/admin/v1) tests
// use to shape the cloud and read its real state, both JSON as package
// api defines it. It is a front over package model like the AWS and
// OpenStack ones, so that the server is only their composition: the
// tokens, the mux and the audit of each request.
package native

import (
	"encoding/json"
	"fmt"
	"net/http"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

// Front is fakecloud's own API and admin API over the cloud. It parses
// requests and writes answers; what they do to the cloud is the model's.
type Front struct{ cloud *model.Cloud }

// New is fakecloud's own API over cloud.
func New(cloud *model.Cloud) *Front { return &Front{cloud} }

// Handler serves one route; c is the call's audit record.
type Handler = func(w http.ResponseWriter, r *http.Request, c *model.Call)

// Router is how the front registers its routes with the server, which
// owns the mux, authentication and the audit of each request.
type Router interface {
	// Handle registers h for pattern behind who's bearer token; op names
	// the call in the audit log and for faults.
	Handle(pattern string, who model.Caller, op string, h Handler)
}

// Register adds the cloud API's and the admin API's routes.
func (s *Front) Register(r Router) {
	r.Handle("GET "+api.PathInstances, model.CallerCloud, api.OpListInstances, s.listInstances)
	r.Handle("GET "+api.PathInstance+"{id}", model.CallerCloud, api.OpGetInstance, s.getInstance)
	r.Handle("GET "+api.PathLoadBalancers, model.CallerCloud, api.OpListLoadBalancers, s.listLoadBalancers)
	r.Handle("GET "+api.PathLoadBalancer+"{name}", model.CallerCloud, api.OpGetLoadBalancer, s.getLoadBalancer)
	r.Handle("PUT "+api.PathLoadBalancer+"{name}", model.CallerCloud, api.OpEnsureLoadBalancer, s.ensureLoadBalancer)
	r.Handle("DELETE "+api.PathLoadBalancer+"{name}", model.CallerCloud, api.OpDeleteLoadBalancer, s.deleteLoadBalancer)
	r.Handle("GET "+api.PathRoutes, model.CallerCloud, api.OpListRoutes, s.listRoutes)
	r.Handle("PUT "+api.PathRoute+"{name}", model.CallerCloud, api.OpCreateRoute, s.createRoute)
	r.Handle("DELETE "+api.PathRoute+"{name}", model.CallerCloud, api.OpDeleteRoute, s.deleteRoute)

	r.Handle("GET "+api.AdminPathInstances, model.CallerAdmin, "", s.adminListInstances)
	r.Handle("POST "+api.AdminPathInstances, model.CallerAdmin, "", s.adminCreateInstance)
	r.Handle("GET "+api.AdminPathInstance+"{ref}", model.CallerAdmin, "", s.adminGetInstance)
	r.Handle("POST "+api.AdminPathInstance+"{ref}/{action}", model.CallerAdmin, "", s.adminInstanceAction)
	r.Handle("GET "+api.AdminPathLoadBalancers, model.CallerAdmin, "", s.adminListLoadBalancers)
	r.Handle("GET "+api.AdminPathLoadBalancer+"{ref}", model.CallerAdmin, "", s.adminGetLoadBalancer)
	r.Handle("GET "+api.AdminPathRoutes, model.CallerAdmin, "", s.adminListRoutes)
	r.Handle("DELETE "+api.AdminPathRoute+"{name}", model.CallerAdmin, "", s.adminDeleteRoute)
	r.Handle("GET "+api.AdminPathFaults, model.CallerAdmin, "", s.adminListFaults)
	r.Handle("POST "+api.AdminPathFaults, model.CallerAdmin, "", s.adminAddFault)
	r.Handle("DELETE "+api.AdminPathFaults, model.CallerAdmin, "", s.adminClearFaults)
	r.Handle("DELETE "+api.AdminPathFaults+"/{id}", model.CallerAdmin, "", s.adminDeleteFault)
	r.Handle("GET "+api.AdminPathAudit, model.CallerAdmin, "", s.adminAudit)

	// Catch-alls answer in JSON, and only after authentication so that an
	// unauthenticated caller learns nothing about which paths exist.
	r.Handle("/v1/", model.CallerCloud, "", NotFound)
	r.Handle("/admin/", model.CallerAdmin, "", NotFound)
}

// NotFound answers a path no API has, in fakecloud's own error shape.
func NotFound(w http.ResponseWriter, r *http.Request, c *model.Call) {
	model.WriteError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("no endpoint for %s %s", r.Method, r.URL.Path))
}

// fail answers a failure of the model in this API's words. The model's
// words are this API's own: it is the cloud's own API.
func fail(w http.ResponseWriter, err error) {
	status, code := http.StatusInternalServerError, api.CodeInternal
	switch model.KindOf(err) {
	case model.KindInvalid:
		status, code = http.StatusBadRequest, api.CodeInvalid
	case model.KindNotFound:
		status, code = http.StatusNotFound, api.CodeNotFound
	case model.KindConflict:
		status, code = http.StatusConflict, api.CodeConflict
	case model.KindPrecondition:
		// RFC 9110's 412, with the code that says why.
		status, code = http.StatusPreconditionFailed, api.CodeNotFound
	case model.KindUnavailable:
		status = http.StatusServiceUnavailable
	}
	model.WriteError(w, status, code, err.Error())
}

// decodeBody decodes a JSON request body strictly: a misspelt field in a
// test's request is a bug to report, not a default to apply.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		model.WriteError(w, http.StatusBadRequest, api.CodeInvalid, "request body: "+err.Error())
		return false
	}
	if dec.More() {
		model.WriteError(w, http.StatusBadRequest, api.CodeInvalid, "request body: more than one JSON value")
		return false
	}
	return true
}
