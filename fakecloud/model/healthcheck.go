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

package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"time"
)

// probeResult is the last health check of one backend.
type probeResult struct {
	// target is what was probed: a result for an old address or port must
	// not vouch for a new one.
	target  netip.AddrPort
	healthy bool
	err     string
}

// startChecks runs the load balancer's health checker until stop. It runs
// even without a health check port, idling, so that a later update that
// adds one needs no goroutine bookkeeping.
func (rt *lbRuntime) startChecks() {
	ctx, cancel := context.WithCancel(context.Background())
	rt.stopChecks = cancel
	rt.checksDone = make(chan struct{})
	rt.nudge = make(chan struct{}, 1)
	go rt.checkLoop(ctx)
}

// poke asks for a round of checks now rather than at the next tick, so a
// new or changed backend does not wait out the interval with no traffic.
func (rt *lbRuntime) poke() {
	select {
	case rt.nudge <- struct{}{}:
	default:
	}
}

func (rt *lbRuntime) checkLoop(ctx context.Context) {
	defer close(rt.checksDone)
	t := time.NewTicker(rt.dp.hcInterval)
	defer t.Stop()
	for {
		rt.checkAll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-rt.nudge:
		}
	}
}

// checkAll probes every backend that could serve, all at once so that one
// slow backend does not delay the verdict on the others.
func (rt *lbRuntime) checkAll(ctx context.Context) {
	cfg := rt.cfg.Load()
	results := make([]*probeResult, len(cfg.backends))
	if cfg.hcPort != 0 {
		var wg sync.WaitGroup
		for i, b := range cfg.backends {
			if b.problem != "" {
				continue
			}
			wg.Go(func() {
				r := rt.dp.probe(ctx, netip.AddrPortFrom(b.addr, cfg.hcPort))
				results[i] = &r
			})
		}
		wg.Wait()
	}
	if ctx.Err() != nil {
		// Stopped mid-round: the errors are ours, not the backends'.
		return
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	current := map[string]bool{}
	for i, b := range cfg.backends {
		current[b.instance] = true
		if results[i] != nil {
			rt.health[b.instance] = *results[i]
		}
	}
	for id := range rt.health {
		if !current[id] {
			delete(rt.health, id)
		}
	}
}

// probe asks target's /healthz, as kube-proxy serves it on a Service's
// health check node port: 200 is healthy, anything else is not.
func (dp *dataplane) probe(ctx context.Context, target netip.AddrPort) probeResult {
	ctx, cancel := context.WithTimeout(ctx, dp.hcTimeout)
	defer cancel()
	u := "http://" + target.String() + "/healthz"
	res := probeResult{target: target}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		res.err = err.Error()
		return res
	}
	resp, err := dp.prober.Do(req)
	if err != nil {
		// url.Error would repeat the method and URL this message has.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		res.err = fmt.Sprintf("GET %s: %v", u, err)
		return res
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		res.err = fmt.Sprintf("GET %s: %s", u, resp.Status)
		return res
	}
	res.healthy = true
	return res
}
