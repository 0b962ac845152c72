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
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"sigs.k8s.io/ccm-harness/cluster"
)

// defaultSecurePort is where a CCM of k8s.io/cloud-provider serves its
// /healthz when its --secure-port is not given.
const defaultSecurePort = 10258

// ccmPod is the pod of the CCM that leads an existing cluster, asked
// through the API server's proxy to the pod: an existing cluster's CCM
// serves on its node or pod network, which the harness may not reach, and
// the API server does.
type ccmPod struct {
	cs              kubernetes.Interface
	namespace, name string
	port            int
}

var _ cluster.RunningCCM = (*ccmPod)(nil)

// Controllers are the controllers the CCM runs now, from its
// /healthz?verbose, as of a manager the harness runs.
func (p *ccmPod) Controllers(ctx context.Context) ([]string, error) {
	body, err := p.cs.CoreV1().RESTClient().Get().
		Namespace(p.namespace).Resource("pods").Name("https:"+p.name+":"+strconv.Itoa(p.port)).
		SubResource("proxy").Suffix("healthz").Param("verbose", "").DoRaw(ctx)
	// An unhealthy check answers 500 with the same list: the controllers
	// are read whatever the status.
	if err != nil && !bytes.Contains(body, []byte("[+]")) {
		return nil, fmt.Errorf("read /healthz?verbose of the CCM's pod %s through the API server: %w", p, err)
	}
	return cluster.HealthzControllers(bytes.NewReader(body))
}

// Log says where the CCM's log is.
func (p *ccmPod) Log() string {
	return fmt.Sprintf("its log (kubectl -n %s logs %s)", p.namespace, p.name)
}

func (p *ccmPod) String() string {
	return p.namespace + "/" + p.name + " (its /healthz on port " + strconv.Itoa(p.port) + ")"
}

// leaderPod is the pod of the CCM holding the lease, or nil where the
// holder runs in no pod of the cluster (on a machine of its own). A
// lease holder of k8s.io/cloud-provider is "<hostname>_<uuid>", and a
// pod's hostname is its name, or its node's for a pod on the host's
// network (the usual DaemonSet of a CCM): a real cloud's node names can
// be the hostname with a domain.
func leaderPod(ctx context.Context, cs kubernetes.Interface, holder string) (*ccmPod, error) {
	host := holder
	if i := strings.LastIndex(holder, "_"); i > 0 {
		host = holder[:i]
	}
	pods, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Running"})
	if err != nil {
		return nil, fmt.Errorf("list the cluster's pods, to find the CCM that holds the lease (%s): %w", holder, err)
	}
	for _, p := range pods.Items {
		onHost := p.Spec.HostNetwork && (p.Spec.NodeName == host || strings.HasPrefix(p.Spec.NodeName, host+"."))
		if p.Name != host && !onHost {
			continue
		}
		for _, c := range p.Spec.Containers {
			if port, ok := ccmContainer(c); ok {
				return &ccmPod{cs: cs, namespace: p.Namespace, name: p.Name, port: port}, nil
			}
		}
	}
	return nil, nil
}

// ccmContainer tells a CCM's container, and the port of its /healthz: a
// container that names a cloud-controller-manager, or passes a cloud
// provider of its own. A kube-controller-manager deferring to a CCM
// (--cloud-provider=external), on the same node, is none.
func ccmContainer(c corev1.Container) (port int, ok bool) {
	words := append(append([]string{c.Name, c.Image}, c.Command...), c.Args...)
	port = defaultSecurePort
	for i, w := range words {
		switch {
		case strings.Contains(w, "kube-controller-manager"):
			return 0, false
		case strings.Contains(w, "cloud-controller-manager"):
			ok = true
		case strings.HasPrefix(w, "--cloud-provider="):
			if v := strings.TrimPrefix(w, "--cloud-provider="); v != "" && v != "external" {
				ok = true
			}
		}
		v, isPort := strings.CutPrefix(w, "--secure-port=")
		if w == "--secure-port" && i+1 < len(words) {
			v, isPort = words[i+1], true
		}
		if n, err := strconv.Atoi(v); isPort && err == nil && n > 0 {
			port = n
		}
	}
	return port, ok
}
