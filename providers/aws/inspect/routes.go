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
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"sigs.k8s.io/ccm-harness/providers"
)

// Routes are the routes to instances in the cluster's route tables (those
// tagged for Config.ClusterID, or every table without one): a pod CIDR's
// route names its node by the instance's private DNS name, and is a
// blackhole once its instance is gone. A route is named
// <route table>/<destination CIDR>, which DeleteRoute takes.
func (c *Cloud) Routes(ctx context.Context) ([]providers.Route, error) {
	tables, err := c.routeTables(ctx)
	if err != nil {
		return nil, err
	}
	names, err := c.names(ctx)
	if err != nil {
		return nil, err
	}
	var out []providers.Route
	for _, t := range tables {
		for _, r := range t.Routes {
			id := aws.ToString(r.InstanceId)
			if id == "" {
				continue // the VPC's local route, a gateway's
			}
			dest := aws.ToString(r.DestinationCidrBlock)
			out = append(out, providers.Route{
				Name:            aws.ToString(t.RouteTableId) + "/" + dest,
				DestinationCIDR: dest,
				TargetNode:      nameOf(names, id),
				Blackhole:       r.State == ec2types.RouteStateBlackhole,
			})
		}
	}
	return out, nil
}

func (c *Cloud) routeTables(ctx context.Context) ([]ec2types.RouteTable, error) {
	in := &ec2.DescribeRouteTablesInput{}
	if c.cfg.ClusterID != "" {
		in.Filters = []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{TagClusterPrefix + c.cfg.ClusterID}}}
	}
	var out []ec2types.RouteTable
	p := ec2.NewDescribeRouteTablesPaginator(c.ec2, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, c.fail("EC2", "DescribeRouteTables", err)
		}
		out = append(out, page.RouteTables...)
	}
	return out, nil
}

// DeleteRoute deletes the route called name (<route table>/<destination
// CIDR>, as Routes names it) with EC2's DeleteRoute, behind the CCM's back.
func (c *Cloud) DeleteRoute(ctx context.Context, name string) error {
	table, dest, ok := strings.Cut(name, "/")
	if !ok {
		return fmt.Errorf("route %q is not <route table>/<destination CIDR>", name)
	}
	_, err := c.ec2.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(table), DestinationCidrBlock: aws.String(dest)})
	return c.fail("EC2", "DeleteRoute", err)
}
