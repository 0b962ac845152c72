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
)

// authorized reports whether r carries the token who needs, and as whom it
// calls: a cloud route takes the inspector's token too. Anonymous routes
// need none.
func (s *Server) authorized(r *http.Request, who caller) (caller, bool) {
	if who == callerAnonymous {
		return who, true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	switch who {
	case callerAdmin:
		return who, secretIs(token, s.adminToken)
	case callerCloud:
		return s.cloudCaller(token)
	}
	return "", false
}

// cloudCaller is who secret authenticates on the cloud API, in any
// dialect: the CCM (the cloud token) or the inspector (its own token).
func (s *Server) cloudCaller(secret string) (caller, bool) {
	switch {
	case secretIs(secret, s.cloudToken):
		return callerCloud, true
	case len(s.inspToken) > 0 && secretIs(secret, s.inspToken):
		return callerInspector, true
	}
	return "", false
}

// secretIs compares in constant time, so that response timing does not
// reveal how much of a guessed secret was right.
func secretIs(secret string, want []byte) bool {
	return subtle.ConstantTimeCompare([]byte(secret), want) == 1
}
