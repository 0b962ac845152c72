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

package cluster

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The shape kube-controller-manager v1.30 and v1.36 answer /healthz?verbose
// in, a standby's and a leader's.
func TestControllers(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"standby", "[+]ping ok\n[+]log ok\n[+]leaderElection ok\nhealthz check passed\n", http.StatusOK, ""},
		{"leader", "[+]ping ok\n[+]leaderElection ok\n[+]service-lb-controller ok\n[+]node-ipam-controller ok\n[-]node-route-controller failed: reason withheld\nhealthz check failed\n", http.StatusInternalServerError,
			"service-lb-controller,node-ipam-controller,node-route-controller"},
		{"migration leader", "[+]leaderElection ok\n[+]leaderElection-migration ok\n[+]cloud-node-lifecycle-controller ok\n", http.StatusOK, "cloud-node-lifecycle-controller"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/healthz" || !r.URL.Query().Has("verbose") {
					t.Errorf("asked %s", r.URL)
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			m := Endpoint{URL: srv.URL, Client: srv.Client()}
			got, err := m.Controllers(context.Background())
			if err != nil || strings.Join(got, ",") != tt.want {
				t.Errorf("got %v, %v; want %q", got, err, tt.want)
			}
		})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) }))
	defer srv.Close()
	if _, err := (Endpoint{URL: srv.URL, Client: srv.Client()}).Controllers(context.Background()); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("403: %v, want an error naming it", err)
	}
}
