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

// Package machines gives fakecloud's instances machines that feel their
// instance stop, start and end, as a real cloud's machines do: a stopped
// instance's kubelet stops reporting without anyone but the cloud being
// told, whether the cluster's nodes are simulated by kwok (Kwok) or are
// containers, such as kind's (Docker).
package machines

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// patchFor is how long a node's change is tried: the API server may be
// starting (the cloud starts first) or busy.
const patchFor = 30 * time.Second

// Kwok is machines whose kubelets are kwok's: kwok reports for a node
// while it carries label ("key=value", the label kwok manages nodes by),
// so an instance that stops or is terminated takes it off the node of its
// name, and one that runs again puts it back. The cluster is read from
// kubeconfig when the first change comes (it may not exist yet when the
// cloud starts). A node that is not there (never registered, or deleted)
// is no error: a machine without a kubelet.
func Kwok(kubeconfig, label string, logger *log.Logger) (func(name string, state api.InstanceState), error) {
	key, value, ok := strings.Cut(label, "=")
	if !ok || key == "" || value == "" {
		return nil, fmt.Errorf("kwok label %q is not key=value (kwok's --manage-nodes-with-label-selector, such as kwok.x-k8s.io/node=fake)", label)
	}
	// The client is made at the first change that finds the cluster up;
	// changes of different machines come at once (model's machines).
	var (
		mu     sync.Mutex
		shared kubernetes.Interface
	)
	clientOf := func() (kubernetes.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		if shared == nil {
			c, err := newClient(kubeconfig)
			if err != nil {
				return nil, err
			}
			shared = c
		}
		return shared, nil
	}
	return func(name string, state api.InstanceState) {
		var v any // JSON null takes the label off
		if state == api.StateRunning {
			v = value
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: v}}})
		ctx, cancel := context.WithTimeout(context.Background(), patchFor)
		defer cancel()
		for {
			client, err := clientOf()
			if err == nil {
				_, err = client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
				if err == nil || apierrors.IsNotFound(err) {
					return
				}
			}
			select {
			case <-ctx.Done():
				logger.Printf("machine %s: its kubelet did not follow the instance to %s within %s: %v", name, state, patchFor, err)
				return
			case <-time.After(time.Second):
			}
		}
	}, nil
}

func newClient(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}
