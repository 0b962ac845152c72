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

package inspect

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/extraroutes"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"

	"sigs.k8s.io/ccm-harness/providers"
)

// Routes are the extra routes of the cluster's router (Config.RouterID,
// or every router without one): a pod CIDR's route names its node by the
// server whose fixed IP the next hop is, and is a blackhole where no
// server has it (the server is deleted), the next hop then standing for
// the node, as the OpenStack CCM shows it. A route is named
// <router>/<destination CIDR>/<next hop>, which DeleteRoute takes:
// Neutron's routes have no name, and one destination may have several
// next hops.
func (c *Cloud) Routes(ctx context.Context) ([]providers.Route, error) {
	s, err := c.services(ctx)
	if err != nil {
		return nil, err
	}
	var rs []routers.Router
	if c.cfg.RouterID != "" {
		r, err := routers.Get(ctx, s.network, c.cfg.RouterID).Extract()
		if err != nil {
			return nil, c.fail("Neutron", "get router "+c.cfg.RouterID, err)
		}
		rs = append(rs, *r)
	} else {
		pages, err := routers.List(s.network, routers.ListOpts{}).AllPages(ctx)
		if err != nil {
			return nil, c.fail("Neutron", "list routers", err)
		}
		if rs, err = routers.ExtractRouters(pages); err != nil {
			return nil, c.fail("Neutron", "list routers", err)
		}
	}
	owners, err := c.owners(ctx, s)
	if err != nil {
		return nil, err
	}
	var out []providers.Route
	for _, r := range rs {
		for _, rt := range r.Routes {
			node, found := nodeAt(owners, rt.NextHop)
			out = append(out, providers.Route{
				Name:            r.ID + "/" + rt.DestinationCIDR + "/" + rt.NextHop,
				DestinationCIDR: rt.DestinationCIDR,
				TargetNode:      node,
				Blackhole:       !found,
			})
		}
	}
	return out, nil
}

// DeleteRoute removes the route called name (<router>/<destination
// CIDR>/<next hop>, as Routes names it) with Neutron's remove_extraroutes,
// which leaves the router's other routes be, behind the CCM's back.
func (c *Cloud) DeleteRoute(ctx context.Context, name string) error {
	router, rest, _ := strings.Cut(name, "/")
	i := strings.LastIndex(rest, "/")
	if router == "" || i < 0 {
		return fmt.Errorf("route %q is not <router>/<destination CIDR>/<next hop>", name)
	}
	dest, hop := rest[:i], rest[i+1:]
	if _, err := netip.ParsePrefix(dest); err != nil {
		return fmt.Errorf("route %q is not <router>/<destination CIDR>/<next hop>: %w", name, err)
	}
	s, err := c.services(ctx)
	if err != nil {
		return err
	}
	_, err = extraroutes.Remove(ctx, s.network, router, extraroutes.Opts{Routes: &[]routers.Route{{DestinationCIDR: dest, NextHop: hop}}}).Extract()
	return c.fail("Neutron", "remove_extraroutes of router "+router, err)
}
