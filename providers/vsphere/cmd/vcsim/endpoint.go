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

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
)

// Session credentials: the SOAP API's cookie, the REST API's header.
const (
	soapCookie = "vmware_soap_session"
	restHeader = "vmware-api-session-id"
)

// restSessions are the REST API's login paths.
var restSessions = []string{"/rest/com/vmware/cis/session", "/api/session"}

// soapLogin finds the user name of a SOAP Login (other methods, such as
// SessionIsActive, name users too).
var soapLogin = regexp.MustCompile(`(?s)<(?:\w+:)?Login\b[^>]*>.*?<(?:\w+:)?userName>([^<]*)</`)

// endpoint serves one user only: the CCM's port the CCM's, the admin port
// the harness's. Both ports share one simulator, and so its sessions.
// Without this, the CCM under test could log in at the admin port, where
// no fault applies, with its own credentials. What another user tries is
// answered as vCenter answers wrong credentials or an unknown session: a
// login with another user's name fails as a wrong password does ("Login
// failure"), and a session made at the other port is no session here.
type endpoint struct {
	name, user string
	next       http.Handler

	mu       sync.Mutex
	sessions map[string]bool
}

func newEndpoint(name, user string, next http.Handler) *endpoint {
	return &endpoint{name: name, user: user, next: next, sessions: map[string]bool{}}
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(soapCookie); err == nil && !e.owns(c.Value) {
		e.refused(r, "a session this endpoint did not make")
		dropCookie(r, soapCookie)
	}
	if id := r.Header.Get(restHeader); id != "" && !e.owns(id) {
		e.refused(r, "a session this endpoint did not make")
		r.Header.Del(restHeader)
	}
	if u, _, ok := r.BasicAuth(); ok && u != e.user {
		e.refused(r, "a login as "+u)
		http.Error(w, "", http.StatusUnauthorized) // as the REST API answers wrong credentials
		return
	}
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if m := soapLogin.FindSubmatchIndex(body); m != nil && m[3] > m[2] && string(body[m[2]:m[3]]) != e.user {
			e.refused(r, "a login as "+string(body[m[2]:m[3]]))
			// No user name is valid: the simulator answers as to a
			// wrong password.
			body = append(append([]byte(nil), body[:m[2]]...), body[m[3]:]...)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	rec := httptest.NewRecorder()
	e.next.ServeHTTP(rec, r)
	e.remember(r, rec)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = rec.Body.WriteTo(w)
}

// dropCookie removes the cookie called name from r.
func dropCookie(r *http.Request, name string) {
	cookies := r.Cookies()
	r.Header.Del("Cookie")
	for _, c := range cookies {
		if c.Name != name {
			r.AddCookie(c)
		}
	}
}

// remember keeps the sessions a login at this endpoint made.
func (e *endpoint) remember(r *http.Request, rec *httptest.ResponseRecorder) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range (&http.Response{Header: rec.Header()}).Cookies() {
		if c.Name == soapCookie && c.Value != "" {
			e.sessions[c.Value] = true
		}
	}
	if r.Method != http.MethodPost || rec.Code != http.StatusOK || !isRESTLogin(r.URL.Path) {
		return
	}
	// /rest answers {"value":"<id>"}, /api "<id>".
	var wrapped struct {
		Value string `json:"value"`
	}
	var id string
	if json.Unmarshal(rec.Body.Bytes(), &wrapped) == nil {
		id = wrapped.Value
	} else {
		_ = json.Unmarshal(rec.Body.Bytes(), &id)
	}
	if id != "" {
		e.sessions[id] = true
	}
}

func isRESTLogin(path string) bool {
	for _, p := range restSessions {
		if strings.TrimSuffix(path, "/") == p {
			return true
		}
	}
	return false
}

func (e *endpoint) owns(session string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sessions[session]
}

func (e *endpoint) refused(r *http.Request, what string) {
	log.Printf("%s endpoint: refused %s %s: %s (it serves %s only)", e.name, r.Method, r.URL.Path, what, e.user)
}
