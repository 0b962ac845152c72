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
	"context"
	_ "embed"
	"fmt"
	"os"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
)

// WorkloadKinds run the CCM's pods: a provider ships a Deployment or a
// DaemonSet on its control-plane nodes, or a static Pod.
var WorkloadKinds = []string{"Deployment", "DaemonSet", "Pod"}

// ContainerName is what the CCM's container is called where a workload
// runs more than one: the harness substitutes the image into the one
// container whose name holds it.
const ContainerName = "cloud-controller-manager"

// defaultWorkload runs a CCM whose manifests ship none: a Deployment of
// one on the control-plane node, with the host's network and the
// tolerations a CCM needs to start on a node it has not initialized, as
// the providers' own manifests run it.
//
//go:embed default-workload.yaml
var defaultWorkload []byte

// Workload is the CCM's workload: the provider's Deployment, DaemonSet or
// Pod as shipped, or the harness's default.
type Workload struct {
	// Object is the workload as shipped, its namespace set.
	Object *unstructured.Unstructured
	// Template is its pod template (a Pod's own metadata and spec).
	Template corev1.PodTemplateSpec
	// Container is the index of the CCM's container in Template.
	Container int
}

// Kind, Namespace and Name name the workload.
func (w *Workload) Kind() string      { return w.Object.GetKind() }
func (w *Workload) Namespace() string { return w.Object.GetNamespace() }
func (w *Workload) Name() string      { return w.Object.GetName() }

func (w *Workload) String() string { return w.Kind() + " " + w.Namespace() + "/" + w.Name() }

// ServiceAccount is the account its pods run as, in its namespace.
func (w *Workload) ServiceAccount() string {
	if sa := w.Template.Spec.ServiceAccountName; sa != "" {
		return sa
	}
	return "default"
}

// SplitWorkload takes the CCM's workload out of objs: nil when the
// manifests ship none, an error when they ship more than one or one with
// no container the image can go into.
func SplitWorkload(objs []*unstructured.Unstructured) (*Workload, []*unstructured.Unstructured, error) {
	var w *Workload
	var rest []*unstructured.Unstructured
	for _, o := range objs {
		if !isWorkload(o) {
			rest = append(rest, o)
			continue
		}
		if w != nil {
			return nil, nil, fmt.Errorf("manifests: %s and %s %s both run pods; the harness runs one CCM: keep only its workload (a kustomization can)", w, o.GetKind(), o.GetName())
		}
		var err error
		if w, err = newWorkload(o); err != nil {
			return nil, nil, err
		}
	}
	return w, rest, nil
}

// DefaultWorkload is the harness's workload for a CCM whose manifests ship
// none, run as the ServiceAccount namespace/name.
func DefaultWorkload(namespace, serviceAccount string) *Workload {
	objs, err := Parse(defaultWorkload)
	if err != nil || len(objs) != 1 {
		panic(fmt.Sprintf("default-workload.yaml: %v", err)) // embedded: a test reads it
	}
	objs[0].SetNamespace(namespace)
	w, err := newWorkload(objs[0])
	if err != nil {
		panic(err)
	}
	w.Template.Spec.ServiceAccountName = serviceAccount
	return w
}

func isWorkload(o *unstructured.Unstructured) bool {
	for _, k := range WorkloadKinds {
		if o.GetKind() == k {
			return true
		}
	}
	return false
}

func newWorkload(o *unstructured.Unstructured) (*Workload, error) {
	o = o.DeepCopy()
	if o.GetNamespace() == "" {
		o.SetNamespace("default")
	}
	w := &Workload{Object: o}
	var err error
	if o.GetKind() == "Pod" {
		var pod corev1.Pod
		err = runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &pod)
		w.Template = corev1.PodTemplateSpec{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec}
	} else {
		tmpl, _, _ := unstructured.NestedMap(o.Object, "spec", "template")
		err = runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, &w.Template)
	}
	if err != nil {
		return nil, fmt.Errorf("manifests: %s: its pod template does not parse: %s", w, oneLine(err))
	}
	if w.Container, err = ccmContainer(w.Template.Spec.Containers); err != nil {
		return nil, fmt.Errorf("manifests: %s %s", w, err)
	}
	// Where its cloud config comes from is known now: a volume the
	// harness cannot write fails here, before a cluster is up.
	c := &w.Template.Spec.Containers[w.Container]
	if p := w.cloudConfigPath(c); p != "" {
		if _, err := w.configObject(c, p, nil); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// ccmContainer is the container the CCM's image goes into: the only one,
// or the one whose name holds ContainerName.
func ccmContainer(cs []corev1.Container) (int, error) {
	switch len(cs) {
	case 0:
		return 0, fmt.Errorf("has no container to run the CCM's image in: give it one")
	case 1:
		return 0, nil
	}
	var names []string
	var named []int
	for i, c := range cs {
		names = append(names, c.Name)
		if strings.Contains(c.Name, ContainerName) {
			named = append(named, i)
		}
	}
	if len(named) != 1 {
		return 0, fmt.Errorf("has containers %s and not one alone named *%s*: name the CCM's container so, for the harness to run its image there", strings.Join(names, ", "), ContainerName)
	}
	return named[0], nil
}

// CloudConfigFlag is the flag by which a CCM reads its cloud config.
const CloudConfigFlag = "--cloud-config"

// CloudConfig is the content of the file args' --cloud-config names, nil
// without one.
func CloudConfig(args []string) ([]byte, error) {
	for _, a := range args {
		if p, ok := strings.CutPrefix(a, CloudConfigFlag+"="); ok && p != "" {
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("cloud config: %w", err)
			}
			return data, nil
		}
	}
	return nil, nil
}

// Substitute returns the workload's pod template to run the CCM under
// test: its image in the CCM's container, with the harness's flags and
// environment in place of the manifest's of the same names (the others
// kept, as the provider set them) and, where the manifest's container
// reads its cloud config from a ConfigMap or Secret volume, the harness's
// cloud config (the file of its --cloud-config) as config: the object to
// write under that volume's key, with the manifest's flag kept. Where it
// reads none, the harness's --cloud-config is passed as it is.
func (w *Workload) Substitute(image string, args, env []string, cloudConfig []byte) (tmpl *corev1.PodTemplateSpec, config runtime.Object, err error) {
	tmpl = w.Template.DeepCopy()
	c := &tmpl.Spec.Containers[w.Container]
	c.Image = image
	// The image is loaded into the nodes (or unpacked here): never pulled.
	c.ImagePullPolicy = corev1.PullNever
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		c.Env = setEnv(c.Env, k, v)
	}
	manifestConfig := w.cloudConfigPath(c)
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		if name == CloudConfigFlag && manifestConfig != "" {
			continue
		}
		c.Command = dropFlag(c.Command, name)
		c.Args = append(dropFlag(c.Args, name), a)
	}
	if manifestConfig == "" || cloudConfig == nil {
		return tmpl, nil, nil
	}
	config, err = w.configObject(c, manifestConfig, cloudConfig)
	return tmpl, config, err
}

// cloudConfigPath is the path of the container's --cloud-config, with
// $(VAR) references expanded as the kubelet expands them.
func (w *Workload) cloudConfigPath(c *corev1.Container) string {
	vars := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			vars[e.Name] = e.Value
		}
	}
	mapping := expansion.MappingFuncFor(vars)
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		if v, ok := strings.CutPrefix(expansion.Expand(a, mapping), CloudConfigFlag+"="); ok {
			return v
		}
	}
	return ""
}

// configObject is the ConfigMap or Secret, holding only the cloud config's
// key, behind the volume the container reads p from.
func (w *Workload) configObject(c *corev1.Container, p string, data []byte) (runtime.Object, error) {
	var mount *corev1.VolumeMount
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		mp := path.Clean(m.MountPath)
		if (mp == p || strings.HasPrefix(p, mp+"/")) && (mount == nil || len(mp) > len(path.Clean(mount.MountPath))) {
			mount = m
		}
	}
	if mount == nil {
		return nil, fmt.Errorf("manifests: %s: its container %s reads %s=%s from none of its volumes: mount the ConfigMap or Secret that holds it", w, c.Name, CloudConfigFlag, p)
	}
	var vol *corev1.Volume
	for i := range w.Template.Spec.Volumes {
		if w.Template.Spec.Volumes[i].Name == mount.Name {
			vol = &w.Template.Spec.Volumes[i]
		}
	}
	if vol == nil {
		return nil, fmt.Errorf("manifests: %s: its container %s mounts volume %s, which the pod does not define", w, c.Name, mount.Name)
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(p, path.Clean(mount.MountPath)), "/")
	if mount.SubPath != "" {
		rel = path.Join(mount.SubPath, rel)
	}
	meta := metav1.ObjectMeta{Namespace: w.Namespace()}
	switch {
	case vol.ConfigMap != nil:
		meta.Name = vol.ConfigMap.Name
		key, err := itemKey(vol.ConfigMap.Items, rel)
		if err != nil {
			return nil, fmt.Errorf("manifests: %s: ConfigMap volume %s: %v", w, vol.Name, err)
		}
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta, Data: map[string]string{key: string(data)}}, nil
	case vol.Secret != nil:
		meta.Name = vol.Secret.SecretName
		key, err := itemKey(vol.Secret.Items, rel)
		if err != nil {
			return nil, fmt.Errorf("manifests: %s: Secret volume %s: %v", w, vol.Name, err)
		}
		return &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: meta, Data: map[string][]byte{key: data}}, nil
	default:
		return nil, fmt.Errorf("manifests: %s: its container %s reads %s=%s from volume %s, which is neither a ConfigMap nor a Secret; the harness writes the cloud config it made into one of those: mount one there (a kustomization patch can)", w, c.Name, CloudConfigFlag, p, vol.Name)
	}
}

// itemKey is the key a volume's file rel comes from.
func itemKey(items []corev1.KeyToPath, rel string) (string, error) {
	for _, it := range items {
		if path.Clean(it.Path) == rel {
			return it.Key, nil
		}
	}
	if len(items) > 0 {
		return "", fmt.Errorf("no item of the volume is the file %s", rel)
	}
	if rel == "" || strings.Contains(rel, "/") {
		return "", fmt.Errorf("the file %q is not a key of the volume", rel)
	}
	return rel, nil
}

// dropFlag removes --name and --name=... from args.
func dropFlag(args []string, name string) []string {
	var out []string
	for _, a := range args {
		if n, _, _ := strings.Cut(a, "="); n == name {
			continue
		}
		out = append(out, a)
	}
	return out
}

func setEnv(env []corev1.EnvVar, k, v string) []corev1.EnvVar {
	for i := range env {
		if env[i].Name == k {
			env[i] = corev1.EnvVar{Name: k, Value: v}
			return env
		}
	}
	return append(env, corev1.EnvVar{Name: k, Value: v})
}

// WriteConfig writes a ConfigMap's or Secret's keys into the cluster's
// object of that name with server-side apply: made if missing, its other
// keys (the provider's) left as they are.
func WriteConfig(ctx context.Context, c kubernetes.Interface, obj runtime.Object) error {
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	var err error
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		_, err = c.CoreV1().ConfigMaps(o.Namespace).Apply(ctx, corev1ac.ConfigMap(o.Name, o.Namespace).WithData(o.Data), opts)
	case *corev1.Secret:
		_, err = c.CoreV1().Secrets(o.Namespace).Apply(ctx, corev1ac.Secret(o.Name, o.Namespace).WithData(o.Data), opts)
	default:
		return fmt.Errorf("cloud config into a %T: only a ConfigMap or a Secret", obj)
	}
	if err != nil {
		m, _ := meta.Accessor(obj)
		return fmt.Errorf("cloud config into %s %s/%s: %s", obj.GetObjectKind().GroupVersionKind().Kind, m.GetNamespace(), m.GetName(), oneLine(err))
	}
	return nil
}

// WithTemplate is the workload as shipped with tmpl as its pod template,
// to apply to a cluster.
func (w *Workload) WithTemplate(tmpl *corev1.PodTemplateSpec) (*unstructured.Unstructured, error) {
	o := w.Object.DeepCopy()
	if o.GetKind() == "Pod" {
		spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&tmpl.Spec)
		if err != nil {
			return nil, err
		}
		o.Object["spec"] = spec
		return o, nil
	}
	t, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tmpl)
	if err != nil {
		return nil, err
	}
	return o, unstructured.SetNestedMap(o.Object, t, "spec", "template")
}
