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

package manifests

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// openstackDS has the shape of cloud-provider-openstack's DaemonSet: the
// binary as its first arg, the cloud config's path from a variable, read
// from a Secret volume, and hostPath volumes beside it.
const openstackDS = `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: openstack-cloud-controller-manager, namespace: kube-system}
spec:
  selector: {matchLabels: {k8s-app: occm}}
  template:
    metadata: {labels: {k8s-app: occm}}
    spec:
      serviceAccountName: cloud-controller-manager
      securityContext: {runAsUser: 1001}
      hostNetwork: true
      containers:
      - name: openstack-cloud-controller-manager
        image: registry.k8s.io/provider-os/openstack-cloud-controller-manager:v1.36.0
        args:
        - /bin/openstack-cloud-controller-manager
        - --v=1
        - --cloud-config=$(CLOUD_CONFIG)
        - --cloud-provider=openstack
        - --use-service-account-credentials=false
        - --bind-address=127.0.0.1
        env:
        - {name: CLOUD_CONFIG, value: /etc/config/cloud.conf}
        - {name: CLUSTER_NAME, value: kubernetes}
        volumeMounts:
        - {mountPath: /etc/kubernetes/pki, name: k8s-certs, readOnly: true}
        - {mountPath: /etc/config, name: cloud-config-volume, readOnly: true}
      volumes:
      - {name: k8s-certs, hostPath: {path: /etc/kubernetes/pki, type: DirectoryOrCreate}}
      - {name: cloud-config-volume, secret: {secretName: cloud-config}}
`

func workload(t *testing.T, data string) *Workload {
	t.Helper()
	objs, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	w, rest, err := SplitWorkload(objs)
	if err != nil || w == nil || len(rest) != len(objs)-1 {
		t.Fatalf("workload %v, rest %d, %v", w, len(rest), err)
	}
	return w
}

func TestSubstituteOpenStackShape(t *testing.T) {
	w := workload(t, openstackDS)
	if w.String() != "DaemonSet kube-system/openstack-cloud-controller-manager" || w.ServiceAccount() != "cloud-controller-manager" {
		t.Errorf("workload %s as %s", w, w.ServiceAccount())
	}
	args := []string{"--cloud-provider=fakecloud", "--cloud-config=/harness/cloud-config", "--v=2", "--secure-port=10258", "--bind-address=0.0.0.0"}
	tmpl, cfg, err := w.Substitute("ccm-harness.local/ccm:abc", args, []string{"CLUSTER_NAME=run-1", "FAKECLOUD_TOKEN=t"}, []byte("[Global]\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := tmpl.Spec.Containers[0]
	if c.Image != "ccm-harness.local/ccm:abc" || c.ImagePullPolicy != corev1.PullNever {
		t.Errorf("image %s, pull %s", c.Image, c.ImagePullPolicy)
	}
	// The manifest's binary and cloud-config path stay; the harness's
	// flags replace the manifest's of the same name; others are kept.
	want := "/bin/openstack-cloud-controller-manager --cloud-config=$(CLOUD_CONFIG) --use-service-account-credentials=false " +
		"--cloud-provider=fakecloud --v=2 --secure-port=10258 --bind-address=0.0.0.0"
	if got := strings.Join(c.Args, " "); got != want {
		t.Errorf("args\n%s\nwant\n%s", got, want)
	}
	var env []string
	for _, e := range c.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	if got := strings.Join(env, " "); got != "CLOUD_CONFIG=/etc/config/cloud.conf CLUSTER_NAME=run-1 FAKECLOUD_TOKEN=t" {
		t.Errorf("env %s", got)
	}
	s, ok := cfg.(*corev1.Secret)
	if !ok || s.Namespace != "kube-system" || s.Name != "cloud-config" || string(s.Data["cloud.conf"]) != "[Global]\n" || len(s.Data) != 1 {
		t.Errorf("cloud config object %#v", cfg)
	}
	// The shipped template is untouched.
	if w.Template.Spec.Containers[0].Image == c.Image {
		t.Error("Substitute changed the workload's own template")
	}
}

// TestSubstituteConfigVolumes: where the cloud config's key comes from in
// a ConfigMap volume: the file's name, an item's path, a subPath.
func TestSubstituteConfigVolumes(t *testing.T) {
	for _, tt := range []struct{ mount, volume, wantKey string }{
		{"{name: cfg, mountPath: /etc/cloud}", "{name: cfg, configMap: {name: cloud-config}}", "vsphere.conf"},
		{"{name: cfg, mountPath: /etc/cloud}", "{name: cfg, configMap: {name: cloud-config, items: [{key: conf, path: vsphere.conf}]}}", "conf"},
		{"{name: cfg, mountPath: /etc/cloud/vsphere.conf, subPath: the-key}", "{name: cfg, configMap: {name: cloud-config}}", "the-key"},
	} {
		w := workload(t, `apiVersion: v1
kind: Pod
metadata: {name: vccm}
spec:
  containers:
  - name: vsphere-cloud-controller-manager
    image: x
    args: [--cloud-config=/etc/cloud/vsphere.conf]
    volumeMounts: [`+tt.mount+`]
  volumes: [`+tt.volume+`]
`)
		tmpl, cfg, err := w.Substitute("img", []string{"--cloud-config=/h/c"}, nil, []byte("global: {}\n"))
		if err != nil {
			t.Errorf("%s: %v", tt.volume, err)
			continue
		}
		cm, ok := cfg.(*corev1.ConfigMap)
		if !ok || cm.Namespace != "default" || cm.Name != "cloud-config" || cm.Data[tt.wantKey] != "global: {}\n" {
			t.Errorf("%s: %#v, want key %s", tt.volume, cfg, tt.wantKey)
		}
		if got := strings.Join(tmpl.Spec.Containers[0].Args, " "); got != "--cloud-config=/etc/cloud/vsphere.conf" {
			t.Errorf("%s: args %s", tt.volume, got)
		}
	}
}

// TestSubstituteNoConfigInManifest: a workload that reads no cloud config
// gets the harness's flag as it is, and the harness mounts the file.
func TestSubstituteNoConfigInManifest(t *testing.T) {
	w := DefaultWorkload("kube-system", "ccm")
	if w.Kind() != "Deployment" || w.Namespace() != "kube-system" || w.ServiceAccount() != "ccm" || w.Template.Spec.Containers[w.Container].Name != ContainerName {
		t.Fatalf("default workload %s as %s", w, w.ServiceAccount())
	}
	tmpl, cfg, err := w.Substitute("img", []string{"--cloud-config=/h/c", "--v=2"}, nil, []byte("x"))
	if err != nil || cfg != nil || strings.Join(tmpl.Spec.Containers[0].Args, " ") != "--cloud-config=/h/c --v=2" {
		t.Errorf("args %v, config %v, %v", tmpl.Spec.Containers[0].Args, cfg, err)
	}
	obj, err := w.WithTemplate(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if img, _, _ := nestedImage(obj.Object); img != "img" {
		t.Errorf("applied workload's image %q", img)
	}
}

func nestedImage(o map[string]any) (string, bool, error) {
	cs := o["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
	return cs[0].(map[string]any)["image"].(string), true, nil
}

func TestSplitWorkloadTwo(t *testing.T) {
	objs, err := Parse([]byte(openstackDS + "---\n" + strings.Replace(openstackDS, "kind: DaemonSet", "kind: Deployment", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := SplitWorkload(objs); err == nil || !strings.Contains(err.Error(), "both run pods; the harness runs one CCM") {
		t.Errorf("two workloads: %v", err)
	}
}

// TestCCMContainer: the image goes into the only container, or the one
// alone named for the CCM; none or two so named is an error.
func TestCCMContainer(t *testing.T) {
	c := func(names ...string) []corev1.Container {
		var cs []corev1.Container
		for _, n := range names {
			cs = append(cs, corev1.Container{Name: n})
		}
		return cs
	}
	for _, tt := range []struct {
		cs   []corev1.Container
		want int
		err  string
	}{
		{c("anything"), 0, ""},
		{c("sidecar", "openstack-cloud-controller-manager"), 1, ""},
		{c(), 0, "has no container"},
		{c("a", "b"), 0, "has containers a, b and not one alone named"},
		{c("cloud-controller-manager", "cloud-controller-manager-proxy"), 0, "not one alone named"},
	} {
		got, err := ccmContainer(tt.cs)
		if tt.err == "" && (err != nil || got != tt.want) || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%d containers: %d, %v; want %d, %q", len(tt.cs), got, err, tt.want, tt.err)
		}
	}
}
