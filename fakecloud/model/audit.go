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

package model

import (
	"encoding/json"
	"io"
	"net/http"

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

// auditTrail is guarded by Cloud.mu.
type auditTrail struct {
	seq     int64
	entries []api.AuditEntry
	max     int
	w       io.Writer
}

// Call collects what the handlers learn about a request for its audit entry.
type Call struct {
	Caller   Caller
	Op       string
	Action   string
	Instance string
	Fault    string
	// dialect, when set, shapes the call's error bodies (an OpenStack
	// or AWS service's); nil is fakecloud's own.
	Dialect ErrorShape
}

// Fail answers an error in the call's dialect.
func (c *Call) Fail(w http.ResponseWriter, status int, code, msg string) {
	if c.Dialect != nil {
		c.Dialect.WriteError(w, status, msg)
		return
	}
	WriteError(w, status, code, msg)
}

// ErrorShape writes an error body in a dialect's shape.
type ErrorShape interface {
	WriteError(w http.ResponseWriter, status int, msg string)
}

// recordLocked appends e to the audit trail with the next sequence number,
// and to the audit log; the server calls it as each request finishes.
func (s *Cloud) recordLocked(e api.AuditEntry) {
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

// AuditSince is the audit entries kept in memory with a sequence number
// above since, oldest first; never nil, as the admin API answers a list.
func (s *Cloud) AuditSince(since int64) []api.AuditEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []api.AuditEntry{}
	for _, e := range s.audit.entries {
		if e.Seq > since {
			out = append(out, e)
		}
	}
	return out
}

// Record adds e to the audit trail.
func (s *Cloud) Record(e api.AuditEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordLocked(e)
}
