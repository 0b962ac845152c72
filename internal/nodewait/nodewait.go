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

// Package nodewait waits on a watch of Nodes until they pass a check, and
// says on timeout what each failing node last looked like. Scenarios and
// bring-ups wait the same way.
package nodewait

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"sigs.k8s.io/ccm-harness/internal/watchwait"
)

// Initialized passes once the CCM has removed the uninitialized taint.
func Initialized(n *v1.Node) error {
	for _, t := range n.Spec.Taints {
		if t.Key == cloudproviderapi.TaintExternalCloudProvider {
			return fmt.Errorf("node %s: expected taint %s removed by the CCM, actual: still present (providerID %q)",
				n.Name, cloudproviderapi.TaintExternalCloudProvider, n.Spec.ProviderID)
		}
	}
	return nil
}

// Check says what is wrong with a node, or nil when it is as wanted.
// Its error names the node, the expected and the actual value.
type Check func(*v1.Node) error

// For waits, on a watch, until check passes for every node in
// names (every node present at the start if names is empty, of which
// there must be one: a check of no node proves nothing). On timeout it
// returns what each failing node last looked like.
func For(ctx context.Context, cs kubernetes.Interface, timeout time.Duration, what string, names []string, check Check) error {
	return ForTimed(ctx, cs, timeout, what, names, check, nil)
}

// noNode keys the failure of a check of every node in a cluster with
// none.
const noNode = ""

// ForTimed is For that also records in passed when each node first passed
// the check: per-node latencies, for percentiles.
func ForTimed(ctx context.Context, cs kubernetes.Interface, timeout time.Duration, what string, names []string, check Check, passed map[string]time.Time) error {
	failing := map[string]error{}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
		failing[n] = fmt.Errorf("node %s: not seen", n)
	}
	eval := func(n *v1.Node, deleted bool) bool {
		switch {
		case len(want) > 0 && !want[n.Name]:
		case deleted:
			failing[n.Name] = fmt.Errorf("node %s: deleted", n.Name)
		default:
			delete(failing, noNode)
			if err := check(n); err != nil {
				failing[n.Name] = err
			} else {
				delete(failing, n.Name)
				if _, seen := passed[n.Name]; passed != nil && !seen {
					passed[n.Name] = time.Now()
				}
			}
		}
		return len(failing) == 0
	}
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "nodes", "", fields.Everything())
	return watchwait.Until(ctx, lw, &v1.Node{}, timeout, what,
		func(nodes []*v1.Node) bool {
			if len(want) == 0 && len(nodes) == 0 {
				failing[noNode] = fmt.Errorf("expected at least one node to check, actual: the cluster has none")
			}
			for _, n := range nodes {
				eval(n, false)
			}
			return len(failing) == 0
		}, eval, func() string { return "\n" + describe(failing) })
}

// Gone waits on a watch until the node is deleted.
func Gone(ctx context.Context, cs kubernetes.Interface, timeout time.Duration, name, why string) error {
	var last *v1.Node
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "nodes", "", fields.OneTermEqualSelector("metadata.name", name))
	return watchwait.Until(ctx, lw, &v1.Node{}, timeout, fmt.Sprintf("node %s to be deleted (%s)", name, why),
		func(nodes []*v1.Node) bool {
			if len(nodes) > 0 {
				last = nodes[0]
				return false
			}
			return true
		},
		func(n *v1.Node, deleted bool) bool {
			last = n
			return deleted
		},
		func() string {
			state := "not found"
			if last != nil {
				state = fmt.Sprintf("still present (Ready=%s, providerID %q, taints %s)", ReadyStatus(last), last.Spec.ProviderID, TaintKeys(last))
			}
			return "expected the Node deleted, actual: " + state
		})
}

// Holds watches node name for d and fails at the first moment the node is
// gone or check does not pass: what must stay true, as For waits for what
// must become true. Its error names the node, the expected and the actual
// value, and when it stopped holding. The caller made the node: one gone
// by the time the watch has listed (a deletion that beat the list) is
// deleted too, and says so in the same words.
func Holds(ctx context.Context, cs kubernetes.Interface, d time.Duration, what, name string, check Check) error {
	start := time.Now()
	var broke error
	eval := func(n *v1.Node, deleted bool) bool {
		if deleted {
			broke = fmt.Errorf("node %s: expected kept, actual: deleted", name)
		} else {
			broke = check(n)
		}
		return broke != nil
	}
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "nodes", "", fields.OneTermEqualSelector("metadata.name", name))
	err := watchwait.Until(ctx, lw, &v1.Node{}, d, what,
		func(nodes []*v1.Node) bool {
			if len(nodes) == 0 {
				broke = fmt.Errorf("node %s: expected kept, actual: deleted", name)
				return true
			}
			return eval(nodes[0], false)
		}, eval, func() string { return "held" })
	switch {
	case errors.Is(err, watchwait.ErrTimedOut):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("%s: stopped holding after %s: %w", what, time.Since(start).Round(time.Millisecond), broke)
}

func describe(failing map[string]error) string {
	var lines []string
	for _, err := range failing {
		lines = append(lines, "  "+err.Error())
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// ReadyStatus is the node's Ready condition, Unknown when it has none.
func ReadyStatus(n *v1.Node) v1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status
		}
	}
	return v1.ConditionUnknown
}

// TaintKeys lists the node's taint keys for a message.
func TaintKeys(n *v1.Node) string {
	var keys []string
	for _, t := range n.Spec.Taints {
		keys = append(keys, t.Key)
	}
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, ",")
}
