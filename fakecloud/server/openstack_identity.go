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
	"encoding/json"
	"net/http"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

// Keystone v3: version discovery and POST /v3/auth/tokens with password or
// application-credential authentication.

func keystoneVersionDoc(base string) map[string]any {
	return map[string]any{
		"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
		"links":       []map[string]string{{"rel": "self", "href": base + osIdentity + "/v3/"}},
		"media-types": []map[string]string{{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}},
	}
}

func (s *Server) keystoneVersions(w http.ResponseWriter, r *http.Request, c *model.Call) {
	model.WriteJSON(w, http.StatusMultipleChoices, map[string]any{"versions": map[string]any{"values": []any{keystoneVersionDoc(osBaseURL(r))}}})
}

func (s *Server) keystoneVersion(w http.ResponseWriter, r *http.Request, c *model.Call) {
	model.WriteJSON(w, http.StatusOK, map[string]any{"version": keystoneVersionDoc(osBaseURL(r))})
}

// keystoneAuthRequest is the part of Keystone's auth request fakecloud
// reads.
type keystoneAuthRequest struct {
	Auth struct {
		Identity struct {
			Methods  []string `json:"methods"`
			Password *struct {
				User struct {
					ID       string     `json:"id"`
					Name     string     `json:"name"`
					Password string     `json:"password"`
					Domain   *osNameRef `json:"domain"`
				} `json:"user"`
			} `json:"password"`
			ApplicationCredential *struct {
				ID     string `json:"id"`
				Name   string `json:"name"`
				Secret string `json:"secret"`
				User   *struct {
					ID     string     `json:"id"`
					Name   string     `json:"name"`
					Domain *osNameRef `json:"domain"`
				} `json:"user"`
			} `json:"application_credential"`
		} `json:"identity"`
		Scope json.RawMessage `json:"scope"`
	} `json:"auth"`
}

type osNameRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func (r osNameRef) is(id, name string) bool {
	return (r.ID == "" || r.ID == id) && (r.Name == "" || r.Name == name) && (r.ID != "" || r.Name != "")
}

type keystoneScope struct {
	Project *struct {
		osNameRef
		Domain *osNameRef `json:"domain"`
	} `json:"project"`
	Domain *osNameRef `json:"domain"`
}

func (s *Server) keystoneAuthenticate(w http.ResponseWriter, r *http.Request, c *model.Call) {
	c.Dialect = identityError
	var req keystoneAuthRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes)).Decode(&req); err != nil {
		identityError.WriteError(w, http.StatusBadRequest, "Expecting to find auth in request body: "+err.Error())
		return
	}
	// The inspector's user is spared the CCM's faults, as on every API;
	// whether its password is right is checked below, as anyone's.
	userName, userID, want := osUserName, osUserID, model.CallerCloud
	if p := req.Auth.Identity.Password; p != nil && len(s.inspToken) > 0 && (p.User.Name == api.OpenStackInspectorUser || p.User.ID == osInspectorUserID) {
		userName, userID, want = api.OpenStackInspectorUser, osInspectorUserID, model.CallerInspector
		c.Caller = want
	}
	if _, ok := s.ApplyFault(w, r, c, api.OpAuthenticate, func(string) bool { return true }); !ok {
		return
	}
	// One message for every refusal, as Keystone gives: it does not say
	// whether the user or the password was wrong.
	refuse := func() {
		identityError.WriteError(w, http.StatusUnauthorized, "The request you have made requires authentication.")
	}
	id := req.Auth.Identity
	var method string
	switch {
	case len(id.Methods) == 1 && id.Methods[0] == "password" && id.Password != nil:
		u := id.Password.User
		method = "password"
		c.Instance = u.Name
		byName := u.ID == "" && u.Name == userName && u.Domain != nil && u.Domain.is(osDomainID, osDomain)
		if who, ok := s.cloudCaller(u.Password); !(u.ID == userID || byName) || !ok || who != want {
			refuse()
			return
		}
	case len(id.Methods) == 1 && id.Methods[0] == "application_credential" && id.ApplicationCredential != nil:
		ac := id.ApplicationCredential
		method = "application_credential"
		byName := ac.ID == "" && ac.Name == osUserName && ac.User != nil && (ac.User.ID == osUserID || ac.User.Name == osUserName)
		if who, ok := s.cloudCaller(ac.Secret); !(ac.ID == osAppCredID || byName) || !ok || who != model.CallerCloud {
			refuse()
			return
		}
	default:
		identityError.WriteError(w, http.StatusBadRequest, "fakecloud's Keystone takes one method, password or application_credential")
		return
	}
	if len(req.Auth.Scope) > 0 && string(req.Auth.Scope) != "null" && string(req.Auth.Scope) != `"unscoped"` {
		var sc keystoneScope
		if err := json.Unmarshal(req.Auth.Scope, &sc); err != nil {
			identityError.WriteError(w, http.StatusBadRequest, "scope: "+err.Error())
			return
		}
		switch {
		case sc.Project != nil:
			if !sc.Project.is(osProjectID, osProject) || (sc.Project.ID == "" && (sc.Project.Domain == nil || !sc.Project.Domain.is(osDomainID, osDomain))) {
				refuse()
				return
			}
		case sc.Domain != nil:
			// A domain-scoped token has no catalog a CCM could use.
			identityError.WriteError(w, http.StatusForbidden, "fakecloud's user has no role on a domain; scope to project "+osProject)
			return
		}
	}
	c.Caller = want
	tok, exp := s.osIssueToken(want)
	base := osBaseURL(r)
	endpoint := func(name, typ, url string) map[string]any {
		return map[string]any{"id": "svc-" + name, "name": name, "type": typ, "endpoints": []map[string]string{{
			"id": "ep-" + name, "interface": "public", "region": s.Region(), "region_id": s.Region(), "url": url,
		}}}
	}
	domain := map[string]string{"id": osDomainID, "name": osDomain}
	w.Header().Set("X-Subject-Token", tok)
	model.WriteJSON(w, http.StatusCreated, map[string]any{"token": map[string]any{
		"methods":    []string{method},
		"user":       map[string]any{"id": userID, "name": userName, "domain": domain, "password_expires_at": nil},
		"project":    map[string]any{"id": osProjectID, "name": osProject, "domain": domain},
		"roles":      []map[string]string{{"id": "r-member", "name": "member"}, {"id": "r-lb-member", "name": "load-balancer_member"}},
		"issued_at":  time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"),
		"expires_at": exp.Format("2006-01-02T15:04:05.000000Z"),
		"audit_ids":  []string{tok[len(tok)-22:]},
		"catalog": []any{
			endpoint("keystone", "identity", base+osIdentity+"/v3/"),
			endpoint("nova", "compute", base+osCompute+"/v2.1/"),
			endpoint("neutron", "network", base+osNetwork+"/"),
			endpoint("octavia", "load-balancer", base+osLB+"/"),
			endpoint("glance", "image", base+osImage+"/"),
		},
	}})
}
