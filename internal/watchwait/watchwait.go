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

// Package watchwait is the one way the harness waits on the Kubernetes
// API: on a watch (after a list), not by polling, until every object
// seen passes, with a timeout that says what was waited for. Node and
// Service waits are built on it.
package watchwait

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// ErrTimedOut is Until's error when its own deadline passed: what must
// hold for a while (nodewait.Holds) waits for it.
var ErrTimedOut = errors.New("timed out")

// Until lists and watches lw's objects, of obj's type, until the list
// (synced) or an event (changed, deleted set when the object went) says
// done. On timeout the error says what was waited for and why it is not
// done yet: last, asked then.
func Until[T runtime.Object](ctx context.Context, lw cache.ListerWatcher, obj T, timeout time.Duration, what string,
	synced func(objs []T) bool, changed func(obj T, deleted bool) bool, last func() string) error {
	start := time.Now()
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := watchtools.UntilWithSync(ctx, lw, obj,
		func(store cache.Store) (bool, error) {
			var objs []T
			for _, o := range store.List() {
				if t, ok := o.(T); ok {
					objs = append(objs, t)
				}
			}
			return synced(objs), nil
		},
		func(ev watch.Event) (bool, error) {
			t, ok := ev.Object.(T)
			if !ok {
				return false, nil
			}
			return changed(t, ev.Type == watch.Deleted), nil
		})
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, watchtools.ErrWatchClosed) || ctx.Err() != nil {
		why := last()
		if !strings.HasPrefix(why, "\n") { // a list of lines starts on its own
			why = " " + why
		}
		if parent.Err() != nil {
			// The caller ended the wait (a spec's timeout, Ctrl-C, an
			// answer found elsewhere), not the wait's own deadline.
			return fmt.Errorf("stopped after %s waiting for %s (%v):%s", time.Since(start).Round(time.Millisecond), what, context.Cause(parent), why)
		}
		return fmt.Errorf("%w after %s waiting for %s:%s", ErrTimedOut, timeout, what, why)
	}
	return fmt.Errorf("waiting for %s: %w", what, err)
}
