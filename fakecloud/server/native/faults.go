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
	"net/http"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

func (s *Front) adminListFaults(w http.ResponseWriter, r *http.Request, c *model.Call) {
	model.WriteJSON(w, http.StatusOK, api.FaultList{Faults: s.cloud.Faults()})
}

func (s *Front) adminAddFault(w http.ResponseWriter, r *http.Request, c *model.Call) {
	var f api.Fault
	if !decodeBody(w, r, &f) {
		return
	}
	if err := f.Validate(); err != nil {
		model.WriteError(w, http.StatusBadRequest, api.CodeInvalid, "fault: "+err.Error())
		return
	}
	c.Instance = f.Instance
	f, err := s.cloud.AddFault(f)
	if err != nil {
		fail(w, err)
		return
	}
	model.WriteJSON(w, http.StatusCreated, f)
}

func (s *Front) adminClearFaults(w http.ResponseWriter, r *http.Request, c *model.Call) {
	if err := s.cloud.ClearFaults(); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Front) adminDeleteFault(w http.ResponseWriter, r *http.Request, c *model.Call) {
	if err := s.cloud.DeleteFault(r.PathValue("id")); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
