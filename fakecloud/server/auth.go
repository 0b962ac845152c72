package server

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// authorized reports whether r carries the token who needs. Anonymous routes
// need none.
func (s *Server) authorized(r *http.Request, who caller) bool {
	var want []byte
	switch who {
	case callerAnonymous:
		return true
	case callerCloud:
		want = s.cloudToken
	case callerAdmin:
		want = s.adminToken
	default:
		return false
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	// Constant time so that response timing does not reveal how much of a
	// guessed token was right.
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), want) == 1
}
