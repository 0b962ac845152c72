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
	"net/http"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

type callKey struct{}

func callOf(r *http.Request) *model.Call { return r.Context().Value(callKey{}).(*model.Call) }

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
	c := &model.Call{Caller: model.CallerAnonymous}
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
		Caller:    string(c.Caller),
		Method:    r.Method,
		Path:      r.URL.Path,
		Operation: c.Op,
		Action:    c.Action,
		Instance:  c.Instance,
		Status:    status,
		Fault:     c.Fault,
		Duration:  api.Duration{Duration: time.Since(w.start)},
	}
	s.Record(e)
}
