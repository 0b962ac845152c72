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

package native

import (
	"fmt"
	"net/http"
	"strconv"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

func (s *Front) adminAudit(w http.ResponseWriter, r *http.Request, c *model.Call) {
	since, ok := int64Param(w, r, "since")
	if !ok {
		return
	}
	model.WriteJSON(w, http.StatusOK, api.AuditLog{Entries: s.cloud.AuditSince(since)})
}

// int64Param reads an optional non-negative integer query parameter.
func int64Param(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		model.WriteError(w, http.StatusBadRequest, api.CodeInvalid, fmt.Sprintf("%s=%q is not a non-negative integer", name, v))
		return 0, false
	}
	return n, true
}
