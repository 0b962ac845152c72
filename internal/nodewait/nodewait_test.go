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
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// oneNodeCluster is an API server with node n (none if nil), whose watch
// then sends after, a watch event's JSON, 100 ms later ("" for none).
func oneNodeCluster(t *testing.T, n *v1.Node, after string) kubernetes.Interface {
	t.Helper()
	node := ""
	if n != nil {
		b, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		node = string(b)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") != "true" {
			items := ""
			if node != "" {
				items = node
			}
			_, _ = fmt.Fprintf(w, `{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[%s]}`, items)
			return
		}
		w.WriteHeader(http.StatusOK)
		if r.URL.Query().Get("sendInitialEvents") == "true" {
			if node != "" {
				_, _ = fmt.Fprintf(w, `{"type":"ADDED","object":%s}`+"\n", node)
			}
			_, _ = w.Write([]byte(`{"type":"BOOKMARK","object":{"kind":"Node","apiVersion":"v1","metadata":{"resourceVersion":"1","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n"))
		}
		w.(http.Flusher).Flush()
		if after != "" {
			select {
			case <-time.After(100 * time.Millisecond):
				_, _ = w.Write([]byte(after + "\n"))
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// Holds passes only when the node stays as checked for the whole time, and
// says what broke it.
func TestHolds(t *testing.T) {
	node := &v1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "foreign-1", ResourceVersion: "1"}, Spec: v1.NodeSpec{ProviderID: "static://foreign-1"}}
	deleted, err := json.Marshal(map[string]any{"type": "DELETED", "object": node})
	if err != nil {
		t.Fatal(err)
	}
	tainted := node.DeepCopy()
	tainted.ResourceVersion = "2"
	tainted.Spec.Taints = []v1.Taint{{Key: "node.cloudprovider.kubernetes.io/shutdown", Effect: v1.TaintEffectNoSchedule}}
	modified, err := json.Marshal(map[string]any{"type": "MODIFIED", "object": tainted})
	if err != nil {
		t.Fatal(err)
	}
	untainted := func(n *v1.Node) error {
		if len(n.Spec.Taints) > 0 {
			return fmt.Errorf("node %s: expected no taint, actual %s", n.Name, TaintKeys(n))
		}
		return nil
	}
	for _, tc := range []struct {
		name  string
		node  *v1.Node
		after string
		want  string // "" for no error
	}{
		{"kept", node, "", ""},
		{"deleted", node, string(deleted), "the node kept: stopped holding after 1"},
		{"tainted", node, string(modified), "node foreign-1: expected no taint, actual node.cloudprovider.kubernetes.io/shutdown"},
		{"gone before the list", nil, "", "node foreign-1: expected kept, actual: deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Holds(context.Background(), oneNodeCluster(t, tc.node, tc.after), 700*time.Millisecond, "the node kept", "foreign-1", untainted)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("expected no error, actual %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("expected an error with %q, actual %v", tc.want, err)
			}
			if tc.name == "deleted" && !strings.Contains(err.Error(), "node foreign-1: expected kept, actual: deleted") {
				t.Fatalf("expected the deletion named, actual %v", err)
			}
		})
	}
}
