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
	"net/http"

	"sigs.k8s.io/ccm-harness/fakecloud/model"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/keystone"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/neutron"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/nova"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/octavia"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/openstackjson"
)

// fakecloud speaks OpenStack too, over the same state: Keystone v3 hands
// out tokens and a catalog that points at this server for compute (Nova),
// network (Neutron) and load-balancer (Octavia), each a front of its own
// under fakecloud/openstack. A server is an instance,
// its flavor the instance type, its availability zone the zone. Calls are
// audited and faulted under the operations of the native API they read, so
// one fault makes both dialects lie alike.
//
// Each service answers errors in its own shape, as the real services do:
// gophercloud and the CCMs built on it parse them.

// osHandle registers an OpenStack route: its errors, injected faults
// included, answer in d's shape, and it needs a live Keystone token in
// X-Auth-Token.
func (s *Server) osHandle(pattern string, d openstackjson.Dialect, op string, h func(http.ResponseWriter, *http.Request, *model.Call)) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		c := callOf(r)
		c.Op = op
		c.Dialect = d
		who, ok := s.keystone.Authorized(r.Header.Get("X-Auth-Token"))
		if !ok {
			w.Header().Set("WWW-Authenticate", "Keystone uri=\""+openstackjson.BaseURL(r)+openstackjson.Identity+"\"")
			openstackjson.IdentityError.WriteError(w, http.StatusUnauthorized, "The request you have made requires authentication.")
			return
		}
		c.Caller = who
		r.Body = http.MaxBytesReader(w, r.Body, model.MaxBodyBytes)
		h(w, r, c)
	})
}

// osRouter registers the OpenStack fronts' routes on the server's mux.
type osRouter struct{ s *Server }

func (o osRouter) Handle(pattern string, d openstackjson.Dialect, op string, h openstackjson.Handler) {
	o.s.osHandle(pattern, d, op, h)
}

func (o osRouter) Open(pattern, op string, h openstackjson.Handler) {
	o.s.handle(pattern, model.CallerAnonymous, op, h)
}

func (s *Server) openstackRoutes() {
	s.keystone = keystone.New(s.Cloud, s.cloudCaller, len(s.inspToken) > 0)
	r := osRouter{s}
	s.keystone.Register(r)
	nova.New(s.Cloud).Register(r)
	neutron.New(s.Cloud).Register(r)
	octavia.New(s.Cloud).Register(r)
}
