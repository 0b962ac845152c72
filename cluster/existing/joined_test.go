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

package existing

import (
	"context"
	"os"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/ccm-harness/cluster"
)

// TestJoinHook: the hook is run with the node's name and labels, its
// failure quoted in one line; only the machines it made are powered, and
// Remove terminates the machine and deletes the Node.
func TestJoinHook(t *testing.T) {
	ctx := context.Background()
	cs := nodes("a", "joined-1")
	p := &power{}
	if _, err := newJoined(cs, &powered{}, "true"); err == nil || !strings.Contains(err.Error(), "no way to stop, start or terminate") {
		t.Errorf("expected a hook without power refused, actual %v", err)
	}
	out := t.TempDir() + "/args"
	j, err := newJoined(cs, &powered{p: p}, `echo "$CCM_HARNESS_NODE_LABELS" >`+out+`; echo`)
	if err != nil {
		t.Fatal(err)
	}
	// The hook's kubelet registered joined-1 (the fake cluster has it).
	n, err := j.Add(ctx, "joined-1", cluster.WithLabels(map[string]string{"b": "2", "a": "1"}))
	if err != nil || n.Name != "joined-1" {
		t.Fatalf("expected joined-1 added, actual %v, %v", n, err)
	}
	if got, _ := os.ReadFile(out); strings.TrimSpace(string(got)) != "a=1,b=2" {
		t.Errorf("expected the hook given the labels a=1,b=2, actual %q", got)
	}
	if _, err := j.Add(ctx, "ip", cluster.WithProvidedNodeIP(func([]v1.NodeAddress) string { return "" })); err == nil || !strings.Contains(err.Error(), "labels only") {
		t.Errorf("expected a --node-ip refused, actual %v", err)
	}
	fail, _ := newJoined(cs, &powered{p: p}, `echo starting; echo "no quota for $1" >&2; exit 3;`)
	if _, err := fail.Add(ctx, "joined-2"); err == nil || !strings.Contains(err.Error(), `failed (exit status 3): no quota for joined-2`) {
		t.Errorf("expected the hook's failure quoted, actual %v", err)
	}
	if err := j.PowerOff(ctx, "a"); err == nil || !strings.Contains(err.Error(), "not made by the join hook") {
		t.Errorf("expected node a's machine refused, actual %v", err)
	}
	_ = j.PowerOff(ctx, "joined-1")
	if err := j.Remove(ctx, "joined-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Get(ctx, "joined-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("expected joined-1 deleted, actual %v", err)
	}
	if got, want := strings.Join(p.calls, ","), "stop joined-1,terminate joined-1"; got != want {
		t.Errorf("expected the cloud asked %q, actual %q", want, got)
	}
}
