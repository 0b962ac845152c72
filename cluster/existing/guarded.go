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

	"sigs.k8s.io/ccm-harness/providers"
)

// guarded powers, through the cloud's own API, only the machines of the
// nodes allow lets through: those lent to the lifecycle specs, or those
// the join hook made. Nothing else of a cluster someone else made is the
// harness's to stop.
type guarded struct {
	machines providers.MachinePower
	allow    func(name string) error
	// ended, if set, hears of each machine terminated.
	ended func(name string)
}

func (g guarded) do(ctx context.Context, name, verb string, fn func(context.Context, string) error) error {
	if err := g.allow(name); err != nil {
		return err
	}
	if err := fn(ctx, name); err != nil {
		return fmt.Errorf("node %s: %s its machine: %w", name, verb, err)
	}
	return nil
}

func (g guarded) PowerOff(ctx context.Context, name string) error {
	return g.do(ctx, name, "stop", g.machines.Stop)
}

func (g guarded) PowerOn(ctx context.Context, name string) error {
	return g.do(ctx, name, "start", g.machines.Start)
}

func (g guarded) Terminate(ctx context.Context, name string) error {
	if err := g.do(ctx, name, "terminate", g.machines.Terminate); err != nil {
		return err
	}
	if g.ended != nil {
		g.ended(name)
	}
	return nil
}
