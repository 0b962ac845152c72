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
