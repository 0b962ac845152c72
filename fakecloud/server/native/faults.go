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
	"slices"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

func (s *Front) adminListFaults(w http.ResponseWriter, r *http.Request, c *model.Call) {
	s.Mu.Lock()
	out := api.FaultList{Faults: slices.Clone(s.St.Faults)}
	s.Mu.Unlock()
	model.WriteJSON(w, http.StatusOK, out)
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
	s.Mu.Lock()
	defer s.Mu.Unlock()
	f = s.AddFaultLocked(f)
	if err := s.SaveLocked(); err != nil {
		model.SaveFailed(w, err)
		return
	}
	model.WriteJSON(w, http.StatusCreated, f)
}

func (s *Front) adminClearFaults(w http.ResponseWriter, r *http.Request, c *model.Call) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.St.Faults = []api.Fault{}
	if err := s.SaveLocked(); err != nil {
		model.SaveFailed(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Front) adminDeleteFault(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	s.Mu.Lock()
	defer s.Mu.Unlock()
	i := slices.IndexFunc(s.St.Faults, func(f api.Fault) bool { return f.ID == id })
	if i < 0 {
		model.WriteError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("fault %q not found", id))
		return
	}
	s.St.Faults = slices.Delete(s.St.Faults, i, i+1)
	if err := s.SaveLocked(); err != nil {
		model.SaveFailed(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
