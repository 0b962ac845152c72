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
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/providers"
)

// WithJoinHook makes the specs' new nodes with hook, a shell command run
// as `hook NODE`: it must make a machine whose kubelet, started with
// --cloud-provider=external, registers as NODE with the labels in
// $CCM_HARNESS_NODE_LABELS (k=v,...: its --node-labels). The machines it
// makes are stopped, started and terminated through the cloud's own API,
// as lent nodes are, and terminated after their spec.
func WithJoinHook(hook string) Option {
	return func(r *Runtime) { r.joinHook = hook }
}

// NodeLabelsEnv is the variable a join hook reads the new node's labels
// from.
const NodeLabelsEnv = "CCM_HARNESS_NODE_LABELS"

// joinTimeout bounds the hook and the node's registration after it: a
// cloud's machine boots in minutes.
const joinTimeout = 5 * time.Minute

// joined is the node pool of a cluster someone else made, whose user
// gave a join hook: nodes are made by the hook and powered through the
// cloud's own API; only those it made are the harness's to power.
type joined struct {
	guarded
	hook   string
	client kubernetes.Interface

	mu   sync.Mutex
	made []string
}

var _ cluster.NodePool = (*joined)(nil)

func newJoined(client kubernetes.Interface, cloud providers.Cloud, hook string) (*joined, error) {
	power := providers.PowerOf(cloud)
	if power == nil {
		return nil, fmt.Errorf("existing cluster: --join-hook: the harness has no way to stop, start or terminate the machines it makes: give a profile that reaches the cluster's cloud (reach:, or an inspector plugin that answers stop, start and terminate)")
	}
	j := &joined{hook: hook, client: client}
	j.guarded = guarded{machines: power, allow: j.mine}
	return j, nil
}

// Add runs the hook, then waits for the node to register. A hook takes
// labels only: a spec that needs another kubelet option says so
// (NeedChosenNodeIP) and is skipped before it asks.
func (j *joined) Add(ctx context.Context, name string, opts ...cluster.NodeOption) (*v1.Node, error) {
	var o cluster.NodeOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.ProvidedNodeIP != nil || o.InTreeCloud {
		return nil, fmt.Errorf("node %s: a join hook is given labels only, not a --node-ip or an in-tree cloud provider", name)
	}
	ctx, cancel := context.WithTimeout(ctx, joinTimeout)
	defer cancel()
	var labels []string
	for _, k := range slices.Sorted(maps.Keys(o.Labels)) {
		labels = append(labels, k+"="+o.Labels[k])
	}
	// The node name is the hook's argument, never part of the command
	// line the shell reads.
	cmd := exec.CommandContext(ctx, "sh", "-c", j.hook+` "$1"`, "join-hook", name)
	cmd.Env = append(os.Environ(), NodeLabelsEnv+"="+strings.Join(labels, ","))
	j.mu.Lock()
	j.made = append(j.made, name)
	j.mu.Unlock()
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("node %s: the join hook %q failed (%v): %s", name, j.hook, err, lastLine(out))
	}
	for {
		n, err := j.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			return n, nil
		}
		if !apierrors.IsNotFound(err) && ctx.Err() == nil {
			return nil, fmt.Errorf("node %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("node %s: the join hook %q ended, and no node %s registered within %s (its kubelet must register as the name it is given)", name, j.hook, name, joinTimeout)
		case <-time.After(time.Second):
		}
	}
}

// lastLine is the last non-empty line of a command's output.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// mine refuses a node the hook did not make.
func (j *joined) mine(name string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !slices.Contains(j.made, name) {
		return fmt.Errorf("node %s was not made by the join hook: its machine is not the harness's to power", name)
	}
	return nil
}

// Remove terminates the machine the hook made and deletes its Node,
// whatever the spec did: the clouds' terminate of a machine already gone,
// or never made, is no error, nor is a Node already deleted.
func (j *joined) Remove(ctx context.Context, name string) error {
	if err := j.mine(name); err != nil {
		return err
	}
	var errs []error
	if err := j.machines.Terminate(ctx, name); err != nil {
		errs = append(errs, fmt.Errorf("node %s: terminate its machine: %w", name, err))
	}
	if err := j.client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("node %s: delete it: %w", name, err))
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}
