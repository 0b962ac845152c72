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

package kind

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"

	"sigs.k8s.io/ccm-harness/cluster"
)

// TestCrashLoopingPod: a CCM pod that restarts fails the wait at once,
// quoting its restart count, how it last ended and its last log lines,
// rather than timing out.
func TestCrashLoopingPod(t *testing.T) {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "occm-x7k2p", Namespace: "kube-system", Labels: map[string]string{"k8s-app": "occm"}},
		Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{
			Name:                 "openstack-cloud-controller-manager",
			RestartCount:         3,
			State:                v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1}},
		}}},
	}
	log := filepath.Join(t.TempDir(), "cloud-controller-manager.log")
	if err := os.WriteFile(log, []byte("I1125 starting\nError: unknown flag: --no-such-flag\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	workload := &unstructured.Unstructured{}
	workload.SetKind("DaemonSet")
	workload.SetName("occm")
	m := &podManager{
		spec:      cluster.ManagerSpec{Name: cluster.CloudControllerManager},
		in:        &instance{client: fake.NewSimpleClientset(pod)},
		namespace: "kube-system",
		workload:  workload,
		list:      metav1.ListOptions{LabelSelector: "k8s-app=occm"},
		log:       log,
	}
	err := m.waitServing(context.Background(), "")
	for _, want := range []string{
		"manager cloud-controller-manager: its pod occm-x7k2p crash-loops (restarted 3 times, CrashLoopBackOff, last exited with code 1): fix what its log says",
		"Error: unknown flag: --no-such-flag",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
}
