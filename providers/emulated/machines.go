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

package emulated

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"sigs.k8s.io/ccm-harness/providers"
)

// CloudAPI is an emulated cloud's own API as the harness uses it (package
// inspect of AWS or OpenStack): it reads a node's machine, and stops,
// starts and terminates it.
type CloudAPI interface {
	providers.Inspector
	Stop(ctx context.Context, name string) error
	Start(ctx context.Context, name string) error
	Terminate(ctx context.Context, name string) error
}

// Machines are the machines of a cloud fakecloud emulates, as far as
// possible through that cloud's own API: made through fakecloud's admin
// API (no cloud API makes a machine with the node's name, nor records a
// kind node's container as one), then read back, stopped, started and
// terminated through cloud.
func (c *Cloud) Machines(cloud CloudAPI) providers.InstanceControl {
	return machines{shaper: instances{c.admin, c.dialect}, cloud: cloud}
}

type machines struct {
	shaper instances
	cloud  CloudAPI
}

func (m machines) Create(ctx context.Context, name string) (providers.Instance, error) {
	if _, err := m.shaper.Create(ctx, name); err != nil {
		return providers.Instance{}, err
	}
	return m.cloud.Instance(ctx, name)
}

func (m machines) Adopt(ctx context.Context, name string, addresses []v1.NodeAddress) (providers.Instance, error) {
	if _, err := m.shaper.Adopt(ctx, name, addresses); err != nil {
		return providers.Instance{}, err
	}
	return m.cloud.Instance(ctx, name)
}

func (m machines) Stop(ctx context.Context, name string) error  { return m.cloud.Stop(ctx, name) }
func (m machines) Start(ctx context.Context, name string) error { return m.cloud.Start(ctx, name) }
func (m machines) Terminate(ctx context.Context, name string) error {
	return m.cloud.Terminate(ctx, name)
}

var (
	_ providers.InstanceControl = machines{}
	_ providers.InstanceAdopter = machines{}
)
