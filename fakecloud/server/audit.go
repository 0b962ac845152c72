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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

const (
	// auditKeep bounds the audit entries kept in memory; AuditLog has them all.
	auditKeep = 10000
	// auditReserve is how many sequence numbers are reserved in the state
	// file at a time, so that numbering survives a restart without a state
	// write per request.
	auditReserve = 1024
)

// auditTrail is guarded by Server.mu.
type auditTrail struct {
	seq     int64
	entries []api.AuditEntry
	max     int
	w       io.Writer
}

// call collects what the handlers learn about a request for its audit entry.
type call struct {
	caller   caller
	op       string
	action   string
	instance string
	fault    string
	// dialect, when set, shapes the call's error bodies (an OpenStack
	// or AWS service's); nil is fakecloud's own.
	dialect errorShape
}

// fail answers an error in the call's dialect.
func (c *call) fail(w http.ResponseWriter, status int, code, msg string) {
	if c.dialect != nil {
		c.dialect.write(w, status, msg)
		return
	}
	writeError(w, status, code, msg)
}

// errorShape writes an error body in a dialect's shape.
type errorShape interface {
	write(w http.ResponseWriter, status int, msg string)
}

type callKey struct{}

func callOf(r *http.Request) *call { return r.Context().Value(callKey{}).(*call) }

// statusRecorder remembers the status a handler sent.
type statusRecorder struct {
	http.ResponseWriter
	status int
	start  time.Time
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Server) startCall(w http.ResponseWriter, r *http.Request) (*statusRecorder, *http.Request) {
	c := &call{caller: callerAnonymous}
	return &statusRecorder{ResponseWriter: w, start: time.Now()}, r.WithContext(context.WithValue(r.Context(), callKey{}, c))
}

func (s *Server) finishCall(w *statusRecorder, r *http.Request) {
	c := callOf(r)
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	e := api.AuditEntry{
		Time:      w.start.UTC(),
		Caller:    string(c.caller),
		Method:    r.Method,
		Path:      r.URL.Path,
		Operation: c.op,
		Action:    c.action,
		Instance:  c.instance,
		Status:    status,
		Fault:     c.fault,
		Duration:  api.Duration{Duration: time.Since(w.start)},
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordLocked(e)
}

func (s *Server) recordLocked(e api.AuditEntry) {
	a := &s.audit
	a.seq++
	e.Seq = a.seq
	if s.stateFile != "" && a.seq >= s.st.AuditSeqFloor {
		s.st.AuditSeqFloor = a.seq + auditReserve
		// A failed save costs at worst repeated numbers after a restart;
		// the request itself already succeeded, so there is no one to tell.
		_ = s.saveLocked()
	}
	a.entries = append(a.entries, e)
	if len(a.entries) > a.max {
		a.entries = a.entries[len(a.entries)-a.max:]
	}
	if a.w != nil {
		// Written under the lock so the log is in sequence order. A broken
		// log writer must not break the cloud, hence the ignored error.
		_ = json.NewEncoder(a.w).Encode(e)
	}
}

func (s *Server) adminAudit(w http.ResponseWriter, r *http.Request, c *call) {
	since, ok := int64Param(w, r, "since")
	if !ok {
		return
	}
	s.mu.Lock()
	out := api.AuditLog{Entries: []api.AuditEntry{}}
	for _, e := range s.audit.entries {
		if e.Seq > since {
			out.Entries = append(out.Entries, e)
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// int64Param reads an optional non-negative integer query parameter.
func int64Param(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		writeError(w, http.StatusBadRequest, api.CodeInvalid, fmt.Sprintf("%s=%q is not a non-negative integer", name, v))
		return 0, false
	}
	return n, true
}
