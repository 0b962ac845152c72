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
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
)

func pod(ns, name, node string, hostNetwork bool, c corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{NodeName: node, HostNetwork: hostNetwork, Containers: []corev1.Container{c}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// The lease's holder names the CCM's pod: by the pod's name, or by its
// node for a pod on the host's network; a kube-controller-manager
// deferring to a CCM on the same node is not taken for one.
func TestLeaderPod(t *testing.T) {
	kcm := corev1.Container{Name: "kube-controller-manager", Command: []string{"kube-controller-manager", "--cloud-provider=external"}}
	aws := corev1.Container{Name: "aws-cloud-controller-manager", Image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.36.2", Args: []string{"--cloud-provider=aws", "--v=2"}}
	hetzner := corev1.Container{Name: "manager", Image: "docker.io/hetznercloud/hcloud-cloud-controller-manager:v1.26.0", Command: []string{"/bin/hcloud-cloud-controller-manager"}, Args: []string{"--secure-port", "10288"}}
	renamed := corev1.Container{Name: "ccm", Image: "example.com/ccm:v1", Args: []string{"--cloud-provider=example", "--secure-port=10300"}}
	cs := fake.NewClientset(
		pod("kube-system", "kube-controller-manager-cp-1", "cp-1", true, kcm),
		pod("kube-system", "aws-cloud-controller-manager-x1", "ip-10-0-0-1.ec2.internal", true, aws),
		pod("kube-system", "hcloud-ccm-7f9c", "cp-2", false, hetzner),
		pod("cloud", "example-ccm-0", "cp-3", false, renamed),
	)
	for _, tc := range []struct {
		holder, want string
		port         int
	}{
		{"ip-10-0-0-1_6b1c", "kube-system/aws-cloud-controller-manager-x1", 10258},
		{"hcloud-ccm-7f9c_0c2d", "kube-system/hcloud-ccm-7f9c", 10288},
		{"example-ccm-0_ab", "cloud/example-ccm-0", 10300},
		{"cp-1_77aa", "", 0},       // only a KCM on that node
		{"build-host_1f2e", "", 0}, // a CCM on a machine of its own
		{"kube-controller-manager-cp-1_1", "", 0},
	} {
		p, err := leaderPod(context.Background(), cs, tc.holder)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.want == "" && p != nil:
			t.Errorf("holder %s: found pod %s, want none", tc.holder, p)
		case tc.want != "" && (p == nil || p.namespace+"/"+p.name != tc.want || p.port != tc.port):
			t.Errorf("holder %s: found %v, want %s on port %d", tc.holder, p, tc.want, tc.port)
		}
	}
}

// The CCM's controllers are read from its /healthz?verbose through the
// API server's proxy to the pod, an unhealthy answer (500) included.
func TestCCMPodControllers(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path+"?"+r.URL.RawQuery)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("[+]ping ok\n[+]log ok\n[+]leaderElection ok\n[+]cloud-node-controller ok\n[-]service-lb-controller failed: reason withheld\nhealthz check failed\n"))
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	p := &ccmPod{cs: cs, namespace: "kube-system", name: "ccm-0", port: 10258}
	got, err := p.Controllers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"cloud-node-controller", "service-lb-controller"}) {
		t.Errorf("controllers %v", got)
	}
	if want := "/api/v1/namespaces/kube-system/pods/https:ccm-0:10258/proxy/healthz?verbose="; len(paths) != 1 || paths[0] != want {
		t.Errorf("asked %v, want %s", paths, want)
	}
}
