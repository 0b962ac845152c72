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

// Package keystone is fakecloud's Keystone v3: version discovery, and the
// token issue that checks the one user's password or application
// credential and answers with a catalog pointing at this server. It is the
// OpenStack front that the others depend on only through the server's
// router, which asks it whether a token is live (Front.Authorized): the
// tokens are Keystone's, not the cloud's, so they live here and in memory
// only.
package keystone

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/openstackjson"
)

// OpenStack's fixed names: the one user, project and domain fakecloud
// knows, which a client names to log in. The user's password, and the
// secret of its one application credential, are the cloud token.
const (
	UserName = "ccm-harness"
	// osInspectorUserID is api.OpenStackInspectorUser's ID.
	osInspectorUserID = "u-ccm-harness-inspector"
	Project           = "ccm-harness"
	Domain            = "Default"
	osDomainID        = "default"
	// AppCredID is the application credential's id; its name is the
	// user's.
	AppCredID = "ac-ccm-harness"
	// osTokenLife is how long a Keystone token lives, Keystone's default.
	osTokenLife = time.Hour
)

// Front is Keystone v3 over the cloud: it checks the one user's
// credentials and hands out the tokens every other OpenStack service
// takes (Authorized).
type Front struct {
	*model.Cloud
	// callerOf says whose a secret is, the CCM's (the cloud token) or the
	// inspector's, as package server's authentication knows them.
	callerOf func(secret string) (model.Caller, bool)
	// hasInspector says the inspector has a token, and so a user.
	hasInspector bool
	// mu guards tokens: they are Keystone's own state, not the cloud's,
	// so they need no part of the cloud's lock.
	mu     sync.Mutex
	tokens tokens
}

// New is Keystone over cloud; callerOf and hasInspector: see Front.
func New(cloud *model.Cloud, callerOf func(secret string) (model.Caller, bool), hasInspector bool) *Front {
	return &Front{Cloud: cloud, callerOf: callerOf, hasInspector: hasInspector, tokens: tokens{}}
}

// Register adds Keystone's routes: version discovery and token issue,
// which need no token, and a 404 in Keystone's shape for the rest.
func (s *Front) Register(r openstackjson.Router) {
	r.Open("GET "+openstackjson.Identity+"/{$}", "", s.keystoneVersions)
	r.Open("GET "+openstackjson.Identity+"/v3/{$}", "", s.keystoneVersion)
	r.Open("GET "+openstackjson.Identity+"/v3", "", s.keystoneVersion)
	r.Open("POST "+openstackjson.Identity+"/v3/auth/tokens", api.OpAuthenticate, s.keystoneAuthenticate)
	r.Open(openstackjson.Identity+"/", "", func(w http.ResponseWriter, r *http.Request, c *model.Call) {
		openstackjson.IdentityError.WriteError(w, http.StatusNotFound, "The resource could not be found.")
	})
}

// tokens are the Keystone tokens handed out, with their expiry and whose
// they are. They live in memory only: after a restart a client
// authenticates again, as it would after Keystone's tokens expired.
type tokens map[string]token

type token struct {
	expires time.Time
	who     model.Caller
}

// Authorized says whose token is, if it is a live one.
func (s *Front) Authorized(token string) (model.Caller, bool) {
	if token == "" {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[token]
	return t.who, ok && time.Now().Before(t.expires)
}

func (s *Front) issueToken(who model.Caller) (string, time.Time) {
	b := make([]byte, 32)
	rand.Read(b) // never fails, per crypto/rand
	tok := "gAAAAA" + hex.EncodeToString(b)
	exp := time.Now().Add(osTokenLife).UTC().Truncate(time.Second)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for t, e := range s.tokens {
		if now.After(e.expires) {
			delete(s.tokens, t)
		}
	}
	s.tokens[tok] = token{exp, who}
	return tok, exp
}

// Keystone v3: version discovery and POST /v3/auth/tokens with password or
// application-credential authentication.

func keystoneVersionDoc(base string) map[string]any {
	return map[string]any{
		"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
		"links":       []map[string]string{{"rel": "self", "href": base + openstackjson.Identity + "/v3/"}},
		"media-types": []map[string]string{{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}},
	}
}

func (s *Front) keystoneVersions(w http.ResponseWriter, r *http.Request, c *model.Call) {
	model.WriteJSON(w, http.StatusMultipleChoices, map[string]any{"versions": map[string]any{"values": []any{keystoneVersionDoc(openstackjson.BaseURL(r))}}})
}

func (s *Front) keystoneVersion(w http.ResponseWriter, r *http.Request, c *model.Call) {
	model.WriteJSON(w, http.StatusOK, map[string]any{"version": keystoneVersionDoc(openstackjson.BaseURL(r))})
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

func (s *Front) keystoneAuthenticate(w http.ResponseWriter, r *http.Request, c *model.Call) {
	c.Dialect = openstackjson.IdentityError
	var req keystoneAuthRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, model.MaxBodyBytes)).Decode(&req); err != nil {
		openstackjson.IdentityError.WriteError(w, http.StatusBadRequest, "Expecting to find auth in request body: "+err.Error())
		return
	}
	// The inspector's user is spared the CCM's faults, as on every API;
	// whether its password is right is checked below, as anyone's.
	userName, userID, want := UserName, openstackjson.UserID, model.CallerCloud
	if p := req.Auth.Identity.Password; p != nil && s.hasInspector && (p.User.Name == api.OpenStackInspectorUser || p.User.ID == osInspectorUserID) {
		userName, userID, want = api.OpenStackInspectorUser, osInspectorUserID, model.CallerInspector
		c.Caller = want
	}
	if _, ok := s.ApplyFault(w, r, c, api.OpAuthenticate, func(string) bool { return true }); !ok {
		return
	}
	// One message for every refusal, as Keystone gives: it does not say
	// whether the user or the password was wrong.
	refuse := func() {
		openstackjson.IdentityError.WriteError(w, http.StatusUnauthorized, "The request you have made requires authentication.")
	}
	id := req.Auth.Identity
	var method string
	switch {
	case len(id.Methods) == 1 && id.Methods[0] == "password" && id.Password != nil:
		u := id.Password.User
		method = "password"
		c.Instance = u.Name
		byName := u.ID == "" && u.Name == userName && u.Domain != nil && u.Domain.is(osDomainID, Domain)
		if who, ok := s.callerOf(u.Password); !(u.ID == userID || byName) || !ok || who != want {
			refuse()
			return
		}
	case len(id.Methods) == 1 && id.Methods[0] == "application_credential" && id.ApplicationCredential != nil:
		ac := id.ApplicationCredential
		method = "application_credential"
		byName := ac.ID == "" && ac.Name == UserName && ac.User != nil && (ac.User.ID == openstackjson.UserID || ac.User.Name == UserName)
		if who, ok := s.callerOf(ac.Secret); !(ac.ID == AppCredID || byName) || !ok || who != model.CallerCloud {
			refuse()
			return
		}
	default:
		openstackjson.IdentityError.WriteError(w, http.StatusBadRequest, "fakecloud's Keystone takes one method, password or application_credential")
		return
	}
	if len(req.Auth.Scope) > 0 && string(req.Auth.Scope) != "null" && string(req.Auth.Scope) != `"unscoped"` {
		var sc keystoneScope
		if err := json.Unmarshal(req.Auth.Scope, &sc); err != nil {
			openstackjson.IdentityError.WriteError(w, http.StatusBadRequest, "scope: "+err.Error())
			return
		}
		switch {
		case sc.Project != nil:
			if !sc.Project.is(openstackjson.ProjectID, Project) || (sc.Project.ID == "" && (sc.Project.Domain == nil || !sc.Project.Domain.is(osDomainID, Domain))) {
				refuse()
				return
			}
		case sc.Domain != nil:
			// A domain-scoped token has no catalog a CCM could use.
			openstackjson.IdentityError.WriteError(w, http.StatusForbidden, "fakecloud's user has no role on a domain; scope to project "+Project)
			return
		}
	}
	c.Caller = want
	tok, exp := s.issueToken(want)
	base := openstackjson.BaseURL(r)
	endpoint := func(name, typ, url string) map[string]any {
		return map[string]any{"id": "svc-" + name, "name": name, "type": typ, "endpoints": []map[string]string{{
			"id": "ep-" + name, "interface": "public", "region": s.Region(), "region_id": s.Region(), "url": url,
		}}}
	}
	domain := map[string]string{"id": osDomainID, "name": Domain}
	w.Header().Set("X-Subject-Token", tok)
	model.WriteJSON(w, http.StatusCreated, map[string]any{"token": map[string]any{
		"methods":    []string{method},
		"user":       map[string]any{"id": userID, "name": userName, "domain": domain, "password_expires_at": nil},
		"project":    map[string]any{"id": openstackjson.ProjectID, "name": Project, "domain": domain},
		"roles":      []map[string]string{{"id": "r-member", "name": "member"}, {"id": "r-lb-member", "name": "load-balancer_member"}},
		"issued_at":  time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"),
		"expires_at": exp.Format("2006-01-02T15:04:05.000000Z"),
		"audit_ids":  []string{tok[len(tok)-22:]},
		"catalog": []any{
			endpoint("keystone", "identity", base+openstackjson.Identity+"/v3/"),
			endpoint("nova", "compute", base+openstackjson.Compute+"/v2.1/"),
			endpoint("neutron", "network", base+openstackjson.Network+"/"),
			endpoint("octavia", "load-balancer", base+openstackjson.LB+"/"),
			endpoint("glance", "image", base+openstackjson.Image+"/"),
		},
	}})
}
