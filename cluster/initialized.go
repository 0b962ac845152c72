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

package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/ccm-harness/internal/nodewait"
	"sigs.k8s.io/ccm-harness/internal/process"
	"sigs.k8s.io/ccm-harness/providers"
)

// diagnoseEvery is how often a stalled initialization asks the cloud why.
// A healthy CCM initializes a few nodes well inside it.
const diagnoseEvery = 5 * time.Second

// WaitInitialized waits until the CCM has initialized every node. While it
// waits, a cloud that can diagnose is asked every few seconds why the CCM
// might be stuck, and its answer ends the wait at once: a CCM locked out of
// its cloud is no reason to sit out the timeout. A timeout quotes the CCM's
// last log lines.
func (c *Cluster) WaitInitialized(ctx context.Context, timeout time.Duration) error {
	return c.WaitInitializedTimed(ctx, timeout, nil)
}

// WaitInitializedTimed is WaitInitialized that also records in passed when
// the wait first saw each node initialized.
func (c *Cluster) WaitInitializedTimed(ctx context.Context, timeout time.Duration, passed map[string]time.Time) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- nodewait.ForTimed(ctx, cs, timeout, "the CCM to initialize every node", nil, nodewait.Initialized, passed)
	}()
	diag, _ := c.Cloud.(providers.Diagnoser)
	tick := time.NewTicker(diagnoseEvery)
	defer tick.Stop()
	start := time.Now()
	for {
		select {
		case err := <-done:
			if err != nil && ctx.Err() == nil {
				if m := c.Manager(CloudControllerManager); m != nil {
					err = fmt.Errorf("%w%s", err, process.LogTail(m.Log(), 10))
				}
			}
			return err
		case <-tick.C:
			if diag == nil {
				continue
			}
			if err := diag.Diagnose(ctx); err != nil {
				err = fmt.Errorf("the CCM has not initialized every node after %s: %w", time.Since(start).Round(time.Second), err)
				// The CCM's own words, after the cause and the fix.
				if m := c.Manager(CloudControllerManager); m != nil {
					if last := process.LastError(m.Log()); last != "" {
						err = fmt.Errorf("%w (the CCM's last error: %s)", err, last)
					}
				}
				return err
			}
		}
	}
}

// CheckClaims waits, up to timeout, until the CCM runs a controller for
// each capability its profile claims: a claim the CCM does not serve (its
// cloud lacks the interface, or --controllers leaves the controller out)
// would otherwise show as every spec of that capability timing out, or,
// on a cluster the harness did not make, as specs passing on what a CCM
// did long ago. Checked: the one CCM of a cluster the harness made (a
// standby of an HA control plane runs nothing), or the leading CCM of an
// existing cluster where the runtime found it.
func (c *Cluster) CheckClaims(ctx context.Context, timeout time.Duration) error {
	ccm := c.RunningCCM
	if m := c.Manager(CloudControllerManager); m != nil {
		ccm = m
	}
	if ccm == nil {
		return nil
	}
	var want []string
	for _, capability := range []providers.Capability{providers.Instances, providers.NodeLifecycle, providers.LoadBalancers, providers.Routes} {
		if c.Profile.Has(capability) {
			want = append(want, providers.ControllerOf(capability))
		}
	}
	deadline := time.Now().Add(timeout)
	for {
		running, err := ccm.Controllers(ctx)
		var missing []string
		if err == nil {
			for _, w := range want {
				if !slices.Contains(running, w) {
					missing = append(missing, w)
				}
			}
			if len(missing) == 0 {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if err != nil {
				return fmt.Errorf("cannot ask the CCM which controllers it runs: %w", err)
			}
			return fmt.Errorf("provider %s claims %s, but its CCM runs no %s after %s (it runs %s): drop the claim from the profile, or make the CCM serve it (its cloud's interface, --controllers); see %s",
				c.Profile.Name, c.Profile.Capabilities, strings.Join(missing, ", "), timeout, strings.Join(running, ", "), ccm.Log())
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Diagnosed is err, a CCM's failure to start, with its cloud's diagnosis
// in front where the cloud is a Diagnoser and finds something wrong: a
// CCM that exits at start because its cloud refuses its login says why
// only deep in its log, and the user needs the cause and the fix first.
func Diagnosed(ctx context.Context, cloud providers.Cloud, err error) error {
	diag, ok := cloud.(providers.Diagnoser)
	if !ok || err == nil || ctx.Err() != nil {
		return err
	}
	if why := diag.Diagnose(ctx); why != nil {
		return fmt.Errorf("%v: %w", why, err)
	}
	return err
}
