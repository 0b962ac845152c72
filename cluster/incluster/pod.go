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
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"

	"sigs.k8s.io/ccm-harness/internal/container"
)

// podContainer is what a kubelet makes of a pod's container, for the
// OCI runtime: its environment resolved, its command and args with
// $(VAR) expanded, its volumes as mounts and its user. The pod runs on
// this machine, which plays its node: a hostPath is this machine's path
// where it exists, else a folder under nodeRoot, as on a fresh node.
type podContainer struct {
	client    kubernetes.Interface
	namespace string
	pod       *corev1.PodSpec
	c         *corev1.Container
	// dir gets the volumes' files; nodeRoot stands for the node's own
	// file system; serviceAccount is the projected account's folder.
	dir, nodeRoot, serviceAccount string
}

// env is the container's environment as KEY=value, in order.
func (p *podContainer) env(ctx context.Context) ([]string, error) {
	var out []string
	for _, from := range p.c.EnvFrom {
		data, err := p.source(ctx, from.ConfigMapRef, from.SecretRef)
		if err != nil {
			return nil, fmt.Errorf("container %s envFrom: %w", p.c.Name, err)
		}
		names := make([]string, 0, len(data))
		for k := range data {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			out = append(out, from.Prefix+k+"="+string(data[k]))
		}
	}
	vars := map[string]string{}
	for _, kv := range out {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	for _, e := range p.c.Env {
		v, err := p.value(ctx, e, vars)
		if err != nil {
			return nil, fmt.Errorf("container %s env %s: %w", p.c.Name, e.Name, err)
		}
		vars[e.Name] = v
		out = append(out, e.Name+"="+v)
	}
	return out, nil
}

// value is one variable's value, as the kubelet computes it.
func (p *podContainer) value(ctx context.Context, e corev1.EnvVar, vars map[string]string) (string, error) {
	from := e.ValueFrom
	if from == nil {
		return expansion.Expand(e.Value, expansion.MappingFuncFor(vars)), nil
	}
	switch {
	case from.FieldRef != nil:
		switch from.FieldRef.FieldPath {
		case "metadata.namespace":
			return p.namespace, nil
		case "metadata.name", "spec.nodeName":
			host, err := os.Hostname()
			return host, err
		case "status.podIP", "status.hostIP":
			// hostNetwork: the pod's address is the node's, here loopback.
			return "127.0.0.1", nil
		case "spec.serviceAccountName":
			return p.pod.ServiceAccountName, nil
		}
		return "", fmt.Errorf("fieldRef %s is not one the local runtime sets (metadata.namespace, metadata.name, spec.nodeName, spec.serviceAccountName, status.podIP, status.hostIP)", from.FieldRef.FieldPath)
	case from.ConfigMapKeyRef != nil || from.SecretKeyRef != nil:
		var cm *corev1.ConfigMapEnvSource
		var s *corev1.SecretEnvSource
		key, optional := "", false
		if r := from.ConfigMapKeyRef; r != nil {
			cm, key, optional = &corev1.ConfigMapEnvSource{LocalObjectReference: r.LocalObjectReference, Optional: r.Optional}, r.Key, r.Optional != nil && *r.Optional
		} else {
			r := from.SecretKeyRef
			s, key, optional = &corev1.SecretEnvSource{LocalObjectReference: r.LocalObjectReference, Optional: r.Optional}, r.Key, r.Optional != nil && *r.Optional
		}
		data, err := p.source(ctx, cm, s)
		if err != nil {
			return "", err
		}
		v, ok := data[key]
		if !ok && !optional {
			return "", fmt.Errorf("no key %s", key)
		}
		return string(v), nil
	}
	return "", fmt.Errorf("valueFrom of a kind the local runtime does not set: use value, fieldRef, configMapKeyRef or secretKeyRef")
}

// source is a ConfigMap's or Secret's data, empty for an optional one
// that does not exist.
func (p *podContainer) source(ctx context.Context, cm *corev1.ConfigMapEnvSource, s *corev1.SecretEnvSource) (map[string][]byte, error) {
	if cm != nil {
		return p.configMap(ctx, cm.Name, cm.Optional)
	}
	if s != nil {
		return p.secret(ctx, s.Name, s.Optional)
	}
	return nil, fmt.Errorf("neither a ConfigMap nor a Secret")
}

func (p *podContainer) configMap(ctx context.Context, name string, optional *bool) (map[string][]byte, error) {
	cm, err := p.client.CoreV1().ConfigMaps(p.namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && optional != nil && *optional {
		return map[string][]byte{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", p.namespace, name, err)
	}
	out := map[string][]byte{}
	for k, v := range cm.Data {
		out[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		out[k] = v
	}
	return out, nil
}

func (p *podContainer) secret(ctx context.Context, name string, optional *bool) (map[string][]byte, error) {
	s, err := p.client.CoreV1().Secrets(p.namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && optional != nil && *optional {
		return map[string][]byte{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("Secret %s/%s: %w", p.namespace, name, err)
	}
	return s.Data, nil
}

// argv is the container's command and args with $(VAR) expanded from env.
func (p *podContainer) argv(env []string) (command, args []string) {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	mapping := expansion.MappingFuncFor(vars)
	for _, a := range p.c.Command {
		command = append(command, expansion.Expand(a, mapping))
	}
	for _, a := range p.c.Args {
		args = append(args, expansion.Expand(a, mapping))
	}
	return command, args
}

// user is the pod's or the container's runAsUser and runAsGroup, the
// container's first.
func (p *podContainer) user() (uid, gid *int64) {
	if sc := p.pod.SecurityContext; sc != nil {
		uid, gid = sc.RunAsUser, sc.RunAsGroup
	}
	if sc := p.c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = sc.RunAsGroup
		}
	}
	return uid, gid
}

// mounts are the container's volume mounts as the runtime's, each
// volume's files written under dir first.
func (p *podContainer) mounts(ctx context.Context) ([]container.Mount, error) {
	sources := map[string]string{}
	var out []container.Mount
	for _, vm := range p.c.VolumeMounts {
		src, ok := sources[vm.Name]
		if !ok {
			var err error
			if src, err = p.volume(ctx, vm.Name); err != nil {
				return nil, fmt.Errorf("container %s: volume %s: %w", p.c.Name, vm.Name, err)
			}
			sources[vm.Name] = src
		}
		if vm.SubPath != "" {
			src = filepath.Join(src, vm.SubPath)
		}
		out = append(out, container.Mount{Source: src, Destination: vm.MountPath, ReadOnly: vm.ReadOnly})
	}
	return out, nil
}

// volume makes a volume's folder (or finds a hostPath's) and returns it.
func (p *podContainer) volume(ctx context.Context, name string) (string, error) {
	var v *corev1.Volume
	for i := range p.pod.Volumes {
		if p.pod.Volumes[i].Name == name {
			v = &p.pod.Volumes[i]
		}
	}
	if v == nil {
		return "", fmt.Errorf("the pod defines no such volume")
	}
	dir := filepath.Join(p.dir, "volumes", name)
	switch {
	case v.ConfigMap != nil:
		data, err := p.configMap(ctx, v.ConfigMap.Name, v.ConfigMap.Optional)
		if err != nil {
			return "", err
		}
		return dir, writeFiles(dir, data, v.ConfigMap.Items, v.ConfigMap.DefaultMode)
	case v.Secret != nil:
		data, err := p.secret(ctx, v.Secret.SecretName, v.Secret.Optional)
		if err != nil {
			return "", err
		}
		return dir, writeFiles(dir, data, v.Secret.Items, v.Secret.DefaultMode)
	case v.EmptyDir != nil:
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		return dir, os.Chmod(dir, 0o1777)
	case v.HostPath != nil:
		if _, err := os.Stat(v.HostPath.Path); err == nil {
			return v.HostPath.Path, nil
		}
		// Not on this machine: the node's own folder, empty, as a fresh
		// node's DirectoryOrCreate would be.
		node := filepath.Join(p.nodeRoot, v.HostPath.Path)
		return node, os.MkdirAll(node, 0o755)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			if s.ServiceAccountToken == nil && s.DownwardAPI == nil && (s.ConfigMap == nil || s.ConfigMap.Name != "kube-root-ca.crt") {
				return "", fmt.Errorf("projected: only the service account's token, CA and namespace are projected by the local runtime")
			}
		}
		return p.serviceAccount, nil
	}
	return "", fmt.Errorf("of a kind the local runtime does not make: use configMap, secret, emptyDir, hostPath or projected")
}

// writeFiles writes a ConfigMap's or Secret's keys (or its items) into
// dir, readable by the image's user, as a kubelet writes such a volume.
func writeFiles(dir string, data map[string][]byte, items []corev1.KeyToPath, defaultMode *int32) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if defaultMode != nil {
		mode = os.FileMode(*defaultMode) | 0o444
	}
	files := map[string]string{}
	for k := range data {
		files[k] = k
	}
	if len(items) > 0 {
		files = map[string]string{}
		for _, it := range items {
			if _, ok := data[it.Key]; !ok {
				return fmt.Errorf("no key %s", it.Key)
			}
			files[it.Path] = it.Key
		}
	}
	for path, key := range files {
		target := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, data[key], mode); err != nil {
			return err
		}
	}
	return nil
}
