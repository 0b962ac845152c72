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

package cloudprovider

import (
	"context"
	"fmt"
	"net/netip"

	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/client"
)

// RouteName is what CreateRoute calls the route to cidr. The cluster's
// name comes first because fakecloud's route names are global, like a VPC
// route table's, while the route controller's name hint (the node's UID)
// is only unique within one cluster; and it is the same for each of a
// dual-stack node's pod CIDRs, so the IPv6 one's name says its family
// (as Azure's CCM names a route by node and CIDR): with the hint alone,
// the second route of a node was refused as taken ("409 Conflict"), seen
// on a dual-stack kind cluster.
func RouteName(clusterName, nameHint, cidr string) string {
	if p, err := netip.ParsePrefix(cidr); err == nil && p.Addr().Is6() {
		return clusterName + "-" + nameHint + "-ipv6"
	}
	return clusterName + "-" + nameHint
}

// ListRoutes lists the routes of clusterName, naming each target by its
// instance's name, which is the node's name.
func (c *Cloud) ListRoutes(ctx context.Context, clusterName string) ([]*cloudprovider.Route, error) {
	if node := c.unroutable.Load(); node != nil && c.misbehaves[FailRoutesOnForeignNodes] {
		return nil, fmt.Errorf("fakecloud (misbehaving on purpose, %s=%s): listing the routes of cluster %q: node %q has no instance", MisbehaveEnv, FailRoutesOnForeignNodes, clusterName, *node)
	}
	routes, err := c.api.ListRoutes(ctx, clusterName)
	if err != nil {
		return nil, fmt.Errorf("listing the routes of cluster %q: %w", clusterName, err)
	}
	out := []*cloudprovider.Route{}
	if len(routes) == 0 {
		return out, nil
	}
	insts, err := c.api.ListInstances(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("listing instances to name the targets of routes: %w", err)
	}
	names := map[string]string{}
	for _, inst := range insts {
		names[inst.ID] = inst.Name
	}
	// The cloud answers only clusterName's routes.
	for _, r := range routes {
		out = append(out, &cloudprovider.Route{
			Name: r.Name,
			// Empty for an instance the cloud no longer knows; such a
			// route is a blackhole anyway.
			TargetNode:      types.NodeName(names[r.TargetInstance]),
			DestinationCIDR: r.DestinationCIDR,
			Blackhole:       r.Blackhole,
		})
	}
	return out, nil
}

// CreateRoute sends route.DestinationCIDR to the live instance named after
// route.TargetNode.
func (c *Cloud) CreateRoute(ctx context.Context, clusterName string, nameHint string, route *cloudprovider.Route) error {
	inst, err := c.byName(ctx, string(route.TargetNode))
	if err != nil {
		return fmt.Errorf("creating a route to node %q: finding its instance: %w", route.TargetNode, err)
	}
	if inst == nil {
		if c.misbehaves[FailRoutesOnForeignNodes] {
			node := string(route.TargetNode)
			c.unroutable.CompareAndSwap(nil, &node)
		}
		return fmt.Errorf("creating a route to node %q: no live instance has that name", route.TargetNode)
	}
	name := RouteName(clusterName, nameHint, route.DestinationCIDR)
	spec := api.RouteSpec{Cluster: clusterName, DestinationCIDR: route.DestinationCIDR, TargetInstance: inst.ID}
	if _, err := c.api.CreateRoute(ctx, name, spec); err != nil {
		return fmt.Errorf("creating route %s to node %q: %w", name, route.TargetNode, err)
	}
	return nil
}

// DeleteRoute deletes a route ListRoutes returned; one already gone is
// deleted.
func (c *Cloud) DeleteRoute(ctx context.Context, clusterName string, route *cloudprovider.Route) error {
	if err := c.api.DeleteRoute(ctx, route.Name); err != nil && !client.IsNotFound(err) {
		return fmt.Errorf("deleting route %s: %w", route.Name, err)
	}
	return nil
}
