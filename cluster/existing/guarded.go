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
