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
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// A cluster whose CCM does not lead now fails the bring-up, naming why:
// its nodes, initialized long ago, would pass the node specs for free.
func TestCCMRuns(t *testing.T) {
	now := time.Now()
	lease := func(holder string, renewed time.Duration) *coordinationv1.Lease {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: leaseNamespace, Name: leaseName},
			Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](15)}}
		if holder != "" {
			l.Spec.HolderIdentity = ptr.To(holder)
			l.Spec.RenewTime = &metav1.MicroTime{Time: now.Add(-renewed)}
		}
		return l
	}
	for _, tc := range []struct {
		name  string
		lease *coordinationv1.Lease
		want  string
	}{
		{"no lease", nil, "it has no Lease kube-system/cloud-controller-manager, which a CCM takes with leader election"},
		{"no holder", lease("", 0), "has no holder"},
		{"stale", lease("ccm-1", 5*time.Minute), "held by ccm-1, was last renewed 5m0s ago (it lasts 15s)"},
		{"renewed", lease("ccm-1", 3*time.Second), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			if tc.lease != nil {
				if _, err := cs.CoordinationV1().Leases(leaseNamespace).Create(context.Background(), tc.lease, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			holder, err := ccmRuns(context.Background(), cs, now)
			switch {
			case tc.want == "" && (err != nil || holder != "ccm-1"):
				t.Errorf("a CCM leads: holder %q, %v", holder, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
