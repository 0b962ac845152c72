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

package incluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestPodContainer: what the local runtime makes of a pod's container, as
// a kubelet would: variables from values, fields and a ConfigMap, $(VAR)
// in args, ConfigMap and Secret volumes written (items honoured), a
// hostPath this machine lacks made under the node's root, the pod's user.
func TestPodContainer(t *testing.T) {
	client := fake.NewSimpleClientset(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "kube-system"}, Data: map[string]string{"region": "r1", "conf": "a: b\n"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud-config", Namespace: "kube-system"}, Data: map[string][]byte{"cloud.conf": []byte("[Global]\n")}},
	)
	uid := int64(1001)
	pod := &corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsUser: &uid},
		Containers: []corev1.Container{{
			Name: "ccm",
			Args: []string{"--cloud-config=$(CLOUD_CONFIG)", "--region=$(REGION)", "--ns=$(NS)", "--keep=$$(LITERAL)"},
			Env: []corev1.EnvVar{
				{Name: "CLOUD_CONFIG", Value: "/etc/config/cloud.conf"},
				{Name: "REGION", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "region"}}},
				{Name: "NS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
			},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "cloud-config", MountPath: "/etc/config", ReadOnly: true},
				{Name: "settings", MountPath: "/etc/settings.yaml", SubPath: "settings.yaml"},
				{Name: "pki", MountPath: "/etc/kubernetes/pki"},
			},
		}},
		Volumes: []corev1.Volume{
			{Name: "cloud-config", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "cloud-config"}}},
			{Name: "settings", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"},
				Items: []corev1.KeyToPath{{Key: "conf", Path: "settings.yaml"}}}}},
			{Name: "pki", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/nonexistent/ccm-harness/pki"}}},
		},
	}
	dir := t.TempDir()
	pc := &podContainer{client: client, namespace: "kube-system", pod: pod, c: &pod.Containers[0], dir: dir, nodeRoot: filepath.Join(dir, "node")}
	ctx := context.Background()
	env, err := pc.env(ctx)
	if err != nil || strings.Join(env, " ") != "CLOUD_CONFIG=/etc/config/cloud.conf REGION=r1 NS=kube-system" {
		t.Fatalf("env %v, %v", env, err)
	}
	_, args := pc.argv(env)
	if got := strings.Join(args, " "); got != "--cloud-config=/etc/config/cloud.conf --region=r1 --ns=kube-system --keep=$(LITERAL)" {
		t.Errorf("args %s", got)
	}
	mounts, err := pc.mounts(ctx)
	if err != nil || len(mounts) != 3 {
		t.Fatalf("mounts %+v, %v", mounts, err)
	}
	if data, err := os.ReadFile(filepath.Join(mounts[0].Source, "cloud.conf")); err != nil || string(data) != "[Global]\n" || mounts[0].Destination != "/etc/config" || !mounts[0].ReadOnly {
		t.Errorf("secret volume %+v: %q, %v", mounts[0], data, err)
	}
	if data, err := os.ReadFile(mounts[1].Source); err != nil || string(data) != "a: b\n" || mounts[1].Destination != "/etc/settings.yaml" {
		t.Errorf("configMap item by subPath %+v: %q, %v", mounts[1], data, err)
	}
	if want := filepath.Join(dir, "node", "/nonexistent/ccm-harness/pki"); mounts[2].Source != want {
		t.Errorf("hostPath this machine lacks at %s, want %s", mounts[2].Source, want)
	}
	if u, _ := pc.user(); u == nil || *u != 1001 {
		t.Errorf("user %v, want the pod's 1001", u)
	}
	// A volume kind the local runtime does not make is one line naming it.
	pod.Volumes[2].VolumeSource = corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "x", Path: "/"}}
	if _, err := pc.mounts(ctx); err == nil || err.Error() != "container ccm: volume pki: of a kind the local runtime does not make: use configMap, secret, emptyDir, hostPath or projected" {
		t.Errorf("nfs volume: %v", err)
	}
}
