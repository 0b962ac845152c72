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

package scenarios

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"sigs.k8s.io/ccm-harness/internal/watchwait"
)

// WaitForCloud polls the cloud, which offers no watch, every half second,
// or as seldom as a check takes (a cloud plugin over a command line takes
// seconds: asked again at once, a few specs waiting would keep the cores
// busy with it), until check passes; on timeout it returns check's last
// complaint. Each
// poll gets its own bounded context rather than the wait's deadline, so the
// last complaint is about the cloud, not about a poll cut short; when the
// last poll was cut short by its own bound, the complaint of the last one
// that ran whole comes with it.
// cloudPollTimeout is the least bound of one poll of WaitForCloud: a
// cloud plugin answering for load balancers runs four command lines of a
// second's CPU each, and a loaded 2-core CI machine has taken over 10 s
// for them. A longer wait gives each poll half of it (pollBound).
var cloudPollTimeout = 30 * time.Second

// pollBound bounds each poll of a wait of the given timeout: half the
// wait, so that a second poll can still see what the first missed, and
// never under cloudPollTimeout. A poll bounded at 30 s alone never ended
// in make test's loaded e2e-plugin run: the suite's leak check asks the
// plugin for load balancers and then routes, and every poll of its 2
// minutes was cut short in the second question; no poll cut short can
// pass. A hung plugin is bounded by its own question timeout.
func pollBound(timeout time.Duration) time.Duration {
	return max(cloudPollTimeout, timeout/2)
}

func WaitForCloud(ctx context.Context, timeout time.Duration, what string, check func(context.Context) error) error {
	start := time.Now()
	deadline := start.Add(timeout)
	bound := pollBound(timeout)
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, bound)
		polled := time.Now()
		err := check(pctx)
		cutShort := pctx.Err() != nil && ctx.Err() == nil
		cancel()
		interval := max(500*time.Millisecond, time.Since(polled))
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			// Ended from outside (a spec's timeout, Ctrl-C, an answer
			// found elsewhere): the complaint of the last poll that ran
			// whole, not the cancelled one's.
			if last == nil {
				last = err
			}
			return fmt.Errorf("stopped after %s waiting for %s (%v): %w", time.Since(start).Round(time.Millisecond), what, context.Cause(ctx), last)
		case time.Now().After(deadline):
			if cutShort && last != nil {
				return fmt.Errorf("timed out after %s waiting for %s: %w (the last poll, cut short at %s: %v)", timeout, what, last, bound, err)
			}
			return fmt.Errorf("timed out after %s waiting for %s: %w", timeout, what, err)
		}
		if !cutShort || last == nil {
			last = err
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}

// ServiceCheck says what is wrong with a Service, or nil.
type ServiceCheck func(*v1.Service) error

// WaitForService waits on a watch until check passes for the Service and
// returns it as it then was.
func WaitForService(ctx context.Context, cs kubernetes.Interface, ns, name string, timeout time.Duration, what string, check ServiceCheck) (*v1.Service, error) {
	var last *v1.Service
	lastErr := fmt.Errorf("Service %s/%s: not seen", ns, name)
	eval := func(s *v1.Service, deleted bool) bool {
		if deleted {
			last, lastErr = nil, fmt.Errorf("Service %s/%s: deleted", ns, name)
			return false
		}
		last, lastErr = s, check(s)
		return lastErr == nil
	}
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "services", ns, fields.OneTermEqualSelector("metadata.name", name))
	err := watchwait.Until(ctx, lw, &v1.Service{}, timeout, what,
		func(services []*v1.Service) bool { return len(services) > 0 && eval(services[0], false) },
		eval, func() string { return lastErr.Error() })
	return last, err
}
