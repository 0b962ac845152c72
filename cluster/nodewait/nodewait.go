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
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	cloudproviderapi "k8s.io/cloud-provider/api"
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
// names (every node present at the start if names is empty). On timeout it
// returns what each failing node last looked like.
func For(ctx context.Context, cs kubernetes.Interface, timeout time.Duration, what string, names []string, check Check) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	failing := map[string]error{}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
		failing[n] = fmt.Errorf("node %s: not seen", n)
	}
	eval := func(n *v1.Node) {
		if len(want) > 0 && !want[n.Name] {
			return
		}
		if err := check(n); err != nil {
			failing[n.Name] = err
		} else {
			delete(failing, n.Name)
		}
	}
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "nodes", "", fields.Everything())
	_, err := watchtools.UntilWithSync(ctx, lw, &v1.Node{},
		func(store cache.Store) (bool, error) {
			for _, obj := range store.List() {
				eval(obj.(*v1.Node))
			}
			return len(failing) == 0, nil
		},
		func(ev watch.Event) (bool, error) {
			n, ok := ev.Object.(*v1.Node)
			if !ok {
				return false, nil
			}
			if ev.Type == watch.Deleted {
				if len(want) == 0 || want[n.Name] {
					failing[n.Name] = fmt.Errorf("node %s: deleted", n.Name)
				}
				return false, nil
			}
			eval(n)
			return len(failing) == 0, nil
		})
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, watchtools.ErrWatchClosed) || ctx.Err() != nil {
		return fmt.Errorf("timed out after %s waiting for %s:\n%s", timeout, what, describe(failing))
	}
	return fmt.Errorf("waiting for %s: %w", what, err)
}

// Gone waits on a watch until the node is deleted.
func Gone(ctx context.Context, cs kubernetes.Interface, timeout time.Duration, name, why string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last *v1.Node
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "nodes", "", fields.OneTermEqualSelector("metadata.name", name))
	_, err := watchtools.UntilWithSync(ctx, lw, &v1.Node{},
		func(store cache.Store) (bool, error) {
			if objs := store.List(); len(objs) > 0 {
				last = objs[0].(*v1.Node)
				return false, nil
			}
			return true, nil
		},
		func(ev watch.Event) (bool, error) {
			if ev.Type == watch.Deleted {
				return true, nil
			}
			if n, ok := ev.Object.(*v1.Node); ok {
				last = n
			}
			return false, nil
		})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		state := "not found"
		if last != nil {
			state = fmt.Sprintf("still present (Ready=%s, providerID %q, taints %s)", ReadyStatus(last), last.Spec.ProviderID, TaintKeys(last))
		}
		return fmt.Errorf("timed out after %s waiting for node %s to be deleted (%s): expected the Node deleted, actual: %s", timeout, name, why, state)
	}
	return fmt.Errorf("waiting for node %s to be deleted: %w", name, err)
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
