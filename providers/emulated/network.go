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
	"fmt"

	v1 "k8s.io/api/core/v1"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/cloudprovider"
	"sigs.k8s.io/ccm-harness/providers"
)

// LoadBalancers reads fakecloud's load balancers, naming backends by their
// node (instance) names.
func (i instances) LoadBalancers(ctx context.Context) ([]providers.LoadBalancer, error) {
	lbs, err := i.admin.LoadBalancers(ctx)
	if err != nil {
		return nil, err
	}
	names, err := i.instanceNames(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]providers.LoadBalancer, 0, len(lbs))
	for _, lb := range lbs {
		p := providers.LoadBalancer{
			Name:                lb.Name,
			Service:             lb.Tags[cloudprovider.TagService],
			ServiceUID:          lb.Tags[cloudprovider.TagServiceUID],
			IP:                  lb.IP,
			IPv6:                lb.IPv6,
			Hostname:            lb.Hostname,
			HealthCheckNodePort: lb.HealthCheckNodePort,
			SourceRanges:        lb.SourceRanges,
			ProxyProtocol:       lb.ProxyProtocol,
		}
		if lb.ClientAffinitySeconds > 0 {
			p.ClientAffinity = &providers.ClientAffinity{TimeoutSeconds: lb.ClientAffinitySeconds}
		}
		for _, l := range lb.Listeners {
			p.Listeners = append(p.Listeners, providers.Listener{Port: l.Port, Protocol: v1.Protocol(l.Protocol), NodePort: l.NodePort})
		}
		for _, id := range lb.Backends {
			// A backend no instance has (an OpenStack member's bare
			// address) shows as itself, as a route's target does.
			name := names[id]
			if name == "" {
				name = id
			}
			p.Backends = append(p.Backends, name)
		}
		out = append(out, p)
	}
	return out, nil
}

// Routes reads fakecloud's route table.
func (i instances) Routes(ctx context.Context) ([]providers.Route, error) {
	routes, err := i.admin.Routes(ctx)
	if err != nil {
		return nil, err
	}
	names, err := i.instanceNames(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]providers.Route, 0, len(routes))
	for _, r := range routes {
		target := names[r.TargetInstance]
		if target == "" {
			target = r.TargetInstance
		}
		out = append(out, providers.Route{Name: r.Name, DestinationCIDR: r.DestinationCIDR, TargetNode: target, Blackhole: r.Blackhole})
	}
	return out, nil
}

// DeleteRoute removes a route through the admin API, unseen by the CCM.
func (i instances) DeleteRoute(ctx context.Context, name string) error {
	return i.admin.DeleteRoute(ctx, name)
}

func (i instances) instanceNames(ctx context.Context) (map[string]string, error) {
	insts, err := i.admin.Instances(ctx)
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(insts))
	for _, inst := range insts {
		names[inst.ID] = inst.Name
	}
	return names, nil
}

// Fail injects an error fault on op until clear is called.
func (c *Cloud) Fail(ctx context.Context, op providers.Operation, message string) (func(context.Context) error, error) {
	var fop string
	switch op {
	case providers.OpEnsureLoadBalancer:
		fop = api.OpEnsureLoadBalancer
	default:
		return nil, fmt.Errorf("fakecloud cannot fail %q", op)
	}
	f, err := c.admin.AddFault(ctx, api.Fault{Operation: fop, Kind: api.FaultError, Status: 500, Message: message})
	if err != nil {
		return nil, err
	}
	cleared := false
	return func(ctx context.Context) error {
		if cleared {
			return nil
		}
		cleared = true
		return c.admin.DeleteFault(ctx, f.ID)
	}, nil
}
