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
	"crypto/subtle"
	"net/http"
	"strings"

	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

// authorized reports whether r carries the token who needs, and as whom it
// calls: a cloud route takes the inspector's token too. Anonymous routes
// need none.
func (s *Server) authorized(r *http.Request, who model.Caller) (model.Caller, bool) {
	if who == model.CallerAnonymous {
		return who, true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	switch who {
	case model.CallerAdmin:
		return who, secretIs(token, s.adminToken)
	case model.CallerCloud:
		return s.cloudCaller(token)
	}
	return "", false
}

// cloudCaller is who secret authenticates on the cloud API, in any
// dialect: the CCM (the cloud token) or the inspector (its own token).
func (s *Server) cloudCaller(secret string) (model.Caller, bool) {
	switch {
	case secretIs(secret, s.cloudToken):
		return model.CallerCloud, true
	case len(s.inspToken) > 0 && secretIs(secret, s.inspToken):
		return model.CallerInspector, true
	}
	return "", false
}

// secretIs compares in constant time, so that response timing does not
// reveal how much of a guessed secret was right.
func secretIs(secret string, want []byte) bool {
	return subtle.ConstantTimeCompare([]byte(secret), want) == 1
}
