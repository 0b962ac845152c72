package local

import (
	"context"
	"fmt"

	"sigs.k8s.io/ccm-harness/cluster"
)

// controlPlane starts managers beside a running cluster's.
type controlPlane struct{ in *instance }

func (c controlPlane) Start(ctx context.Context, spec cluster.ManagerSpec) (cluster.Manager, error) {
	for _, r := range c.in.procs.Records() {
		if r.Name == spec.Name {
			return nil, fmt.Errorf("manager %s: a process of that name runs already", spec.Name)
		}
	}
	m, err := c.in.startManager(ctx, spec)
	if err != nil {
		return nil, err
	}
	return m, nil
}
