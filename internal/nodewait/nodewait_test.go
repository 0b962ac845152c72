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

package nodewait

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// emptyCluster is an API server with no node: its list is empty and its
// watch says nothing until the client gives up.
func emptyCluster(t *testing.T) kubernetes.Interface {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			w.WriteHeader(http.StatusOK)
			// client-go lists by a watch that streams the objects and
			// ends the list with a bookmark (WatchListClient).
			if r.URL.Query().Get("sendInitialEvents") == "true" {
				_, _ = w.Write([]byte(`{"type":"BOOKMARK","object":{"kind":"Node","apiVersion":"v1","metadata":{"resourceVersion":"1","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n"))
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		_, _ = w.Write([]byte(`{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`))
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// A check of every node passes only where there is a node to check: a
// cluster with none (--nodes=0, an empty existing cluster) used to pass
// the zone spec with nothing checked.
func TestEveryNodeOfNoneFails(t *testing.T) {
	err := For(context.Background(), emptyCluster(t), time.Second, "zone labels to match the cloud", nil, func(*v1.Node) error { return nil })
	const want = "timed out after 1s waiting for zone labels to match the cloud:\n  expected at least one node to check, actual: the cluster has none"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("expected %q, actual %v", want, err)
	}
}
