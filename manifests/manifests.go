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

// Package manifests reads a provider's Kubernetes manifests (a file, a
// folder of them, or a kustomization) and applies them to a cluster, as
// the provider's own installation would: the CCM's ServiceAccount, the
// RBAC it believes it needs, its ConfigMaps and Secrets. Without any, the
// harness applies Upstream: upstream's recommended RBAC, not admin rights.
package manifests

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Upstream is upstream's recommended cloud-controller-manager RBAC and the
// ServiceAccount it binds (upstream-rbac.yaml says where it comes from).
//
//go:embed upstream-rbac.yaml
var Upstream []byte

// The ServiceAccount a CCM runs as unless its manifests say otherwise:
// upstream's name.
const (
	ServiceAccountNamespace = "kube-system"
	ServiceAccountName      = "cloud-controller-manager"
)

// FieldManager owns what the harness applies.
const FieldManager = "ccm-harness"

// Read renders path: a YAML or JSON file of one or more objects, a folder
// of such files (in name order, not recursive), or a folder holding a
// kustomization.yaml, built as `kubectl kustomize` would. It returns the
// objects as one multi-document YAML stream.
func Read(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("manifests %s: %w", path, err)
	}
	var out []byte
	switch {
	case !st.IsDir():
		if out, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("manifests %s: %w", path, err)
		}
	case isKustomization(path):
		m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), path)
		if err != nil {
			return nil, fmt.Errorf("manifests %s: kustomize: %s", path, oneLine(err))
		}
		if out, err = m.AsYaml(); err != nil {
			return nil, fmt.Errorf("manifests %s: kustomize: %s", path, oneLine(err))
		}
	default:
		if out, err = Join(os.DirFS(path)); err != nil {
			return nil, fmt.Errorf("manifests %s: %s", path, strings.TrimPrefix(err.Error(), "manifests: "))
		}
	}
	if _, err := Parse(out); err != nil {
		return nil, fmt.Errorf("manifests %s: %s", path, strings.TrimPrefix(err.Error(), "manifests: "))
	}
	return out, nil
}

// Join is the .yaml, .yml and .json files at the top of fsys, in name
// order, as one stream: a folder of manifests, on disk or embedded.
func Join(fsys fs.FS) ([]byte, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); e.IsDir() || ext != ".yaml" && ext != ".yml" && ext != ".json" {
			continue
		}
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		// Each file's objects, with their file named in errors.
		if _, err := Parse(data); err != nil {
			return nil, fmt.Errorf("%s: %s", e.Name(), strings.TrimPrefix(err.Error(), "manifests: "))
		}
		out = append(append(out, "\n---\n"...), data...)
	}
	if out == nil {
		return nil, errors.New("the folder holds no .yaml, .yml or .json file")
	}
	return out, nil
}

// Embedded is Join of the folder dir of fsys, for a provider's manifests
// built into the harness; they are the harness's own, so a bad file is a
// bug that a test of the provider catches.
func Embedded(fsys fs.FS, dir string) []byte {
	sub, err := fs.Sub(fsys, dir)
	if err == nil {
		var data []byte
		if data, err = Join(sub); err == nil {
			return data
		}
	}
	panic("embedded manifests " + dir + ": " + err.Error())
}

func isKustomization(dir string) bool {
	for _, n := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// Parse splits a YAML or JSON stream into objects; every object needs an
// apiVersion, a kind and a name.
func Parse(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for i := 1; ; i++ {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("manifests: document %d does not parse: %s", i, oneLine(err))
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if items, ok := m["items"].([]any); ok && strings.HasSuffix(u.GetKind(), "List") {
			for _, it := range items {
				if im, ok := it.(map[string]any); ok {
					objs = append(objs, &unstructured.Unstructured{Object: im})
				}
			}
			continue
		}
		if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("manifests: document %d has no apiVersion, kind or metadata.name", i)
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// ServiceAccount is the one ServiceAccount the objects define, or
// upstream's kube-system/cloud-controller-manager when they define none;
// more than one is ambiguous.
func ServiceAccount(objs []*unstructured.Unstructured) (namespace, name string, err error) {
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "ServiceAccount" && o.GroupVersionKind().Group == "" {
			found = append(found, o)
		}
	}
	switch len(found) {
	case 0:
		return ServiceAccountNamespace, ServiceAccountName, nil
	case 1:
		ns := found[0].GetNamespace()
		if ns == "" {
			ns = "default"
		}
		return ns, found[0].GetName(), nil
	default:
		return "", "", fmt.Errorf("manifests: %d ServiceAccounts; the CCM runs as one: keep only the CCM's", len(found))
	}
}

// Apply applies the objects with server-side apply, in order: a
// namespace the manifests use must be among them or exist.
func Apply(ctx context.Context, rc *rest.Config, objs []*unstructured.Unstructured) error {
	dc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("manifests: %s %s: the cluster does not serve that kind (%v)", gvk.Kind, o.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := o.GetNamespace()
			if ns == "" {
				ns = "default"
			}
			ri = dyn.Resource(m.Resource).Namespace(ns)
		}
		if _, err := ri.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return fmt.Errorf("manifests: applying %s %s: %s", gvk.Kind, o.GetName(), oneLine(err))
		}
	}
	return nil
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
