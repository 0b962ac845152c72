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

// Cloud API.

func (s *Front) listInstances(w http.ResponseWriter, r *http.Request, c *model.Call) {
	name := r.URL.Query().Get("name")
	c.Instance = name
	f, ok := s.cloud.ApplyFault(w, r, c, api.OpListInstances, s.cloud.AboutInstancesNamed(name))
	if !ok {
		return
	}
	// The listing is taken after any injected latency: a slow cloud answers
	// with the state of when it answers.
	out := s.cloud.Instances(name)
	for i := range out {
		model.CorruptInstance(f, &out[i])
	}
	model.WriteJSON(w, http.StatusOK, api.InstanceList{Instances: out})
}

func (s *Front) getInstance(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	c.Instance = id
	f, ok := s.cloud.ApplyFault(w, r, c, api.OpGetInstance, s.cloud.AboutInstance(id))
	if !ok {
		return
	}
	out, found := s.cloud.Instance(id)
	if !found {
		fail(w, model.Errorf(model.KindNotFound, "instance %q not found", id))
		return
	}
	model.CorruptInstance(f, &out)
	model.WriteJSON(w, http.StatusOK, out)
}

// Admin API.

func (s *Front) adminListInstances(w http.ResponseWriter, r *http.Request, c *model.Call) {
	model.WriteJSON(w, http.StatusOK, api.InstanceList{Instances: s.cloud.Instances("")})
}

func (s *Front) adminGetInstance(w http.ResponseWriter, r *http.Request, c *model.Call) {
	ref := r.PathValue("ref")
	c.Instance = ref
	out, found := s.cloud.InstanceByRef(ref)
	if !found {
		fail(w, model.Errorf(model.KindNotFound, "instance %q not found", ref))
		return
	}
	model.WriteJSON(w, http.StatusOK, out)
}

func (s *Front) adminCreateInstance(w http.ResponseWriter, r *http.Request, c *model.Call) {
	var req api.CreateInstanceRequest
	if !decodeBody(w, r, &req) {
		return
	}
	c.Instance = req.Name
	if err := model.ValidateCreate(req); err != nil {
		model.WriteError(w, http.StatusBadRequest, api.CodeInvalid, err.Error())
		return
	}
	inst, err := s.cloud.CreateInstance(req)
	if err != nil {
		fail(w, err)
		return
	}
	model.WriteJSON(w, http.StatusCreated, inst)
}

// instanceActions are the states the admin API's actions move an instance to.
var instanceActions = map[string]api.InstanceState{
	"stop":      api.StateStopped,
	"start":     api.StateRunning,
	"terminate": api.StateTerminated,
}

func (s *Front) adminInstanceAction(w http.ResponseWriter, r *http.Request, c *model.Call) {
	ref, action := r.PathValue("ref"), r.PathValue("action")
	c.Instance = ref
	to, known := instanceActions[action]
	if !known {
		// An unknown instance is the answer before an unknown action.
		if _, found := s.cloud.InstanceByRef(ref); !found {
			fail(w, model.Errorf(model.KindNotFound, "instance %q not found", ref))
			return
		}
		NotFound(w, r, c)
		return
	}
	inst, err := s.cloud.SetInstanceState(ref, to, action)
	if err != nil {
		fail(w, err)
		return
	}
	model.WriteJSON(w, http.StatusOK, inst)
}
