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

package ec2

import (
	"errors"
	"net/http"
	"net/netip"
	"strings"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/awsquery"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

type ec2Route struct {
	DestinationCidrBlock string `xml:"destinationCidrBlock"`
	GatewayID            string `xml:"gatewayId,omitempty"`
	InstanceID           string `xml:"instanceId,omitempty"`
	InstanceOwnerID      string `xml:"instanceOwnerId,omitempty"`
	NetworkInterfaceID   string `xml:"networkInterfaceId,omitempty"`
	State                string `xml:"state"`
	Origin               string `xml:"origin"`
}

// ec2Routes are the route table's routes: the VPC's local route, then
// fakecloud's routes of the table, blackholed when their instance is gone.
func (s *Front) ec2Routes() []ec2Route {
	// The internet gateway's default route makes the subnets public, where
	// the AWS CCM puts internet-facing load balancers.
	out := []ec2Route{{DestinationCidrBlock: s.awsVPCCIDR(), GatewayID: "local", State: "active", Origin: "CreateRouteTable"},
		{DestinationCidrBlock: "0.0.0.0/0", GatewayID: "igw-0fa4ec10d00000001", State: "active", Origin: "CreateRoute"}}
	for _, view := range s.EC2Routes() {
		rt := ec2Route{DestinationCidrBlock: view.DestinationCIDR, InstanceID: view.TargetInstance, InstanceOwnerID: api.AWSAccountID,
			NetworkInterfaceID: "eni-" + awsquery.Hash(17, view.TargetInstance), State: "active", Origin: "CreateRoute"}
		if view.Blackhole {
			rt.State = "blackhole"
		}
		out = append(out, rt)
	}
	return out
}

func (s *Front) ec2DescribeRouteTables(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		ids := q.List("RouteTableId")
		_, _ = q.Get("MaxResults"), q.Get("NextToken")
		filters, e := describeFilters(q, "route-table-id", "vpc-id", "association.main", "association.subnet-id")
		if e != nil {
			ec2Fail(w, e)
			return
		}
		for _, id := range ids {
			if id != api.AWSRouteTable {
				ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidRouteTableID.NotFound", "The routeTable ID '%s' does not exist", id))
				return
			}
		}
		if _, ok := s.ApplyFault(w, r, c, api.OpListRoutes, func(string) bool { return false }); !ok {
			return
		}
		type association struct {
			ID           string `xml:"routeTableAssociationId"`
			RouteTableID string `xml:"routeTableId"`
			SubnetID     string `xml:"subnetId,omitempty"`
			Main         bool   `xml:"main"`
		}
		type table struct {
			ID           string        `xml:"routeTableId"`
			VpcID        string        `xml:"vpcId"`
			OwnerID      string        `xml:"ownerId"`
			Routes       []ec2Route    `xml:"routeSet>item"`
			Associations []association `xml:"associationSet>item"`
			Tags         []model.Tag   `xml:"tagSet>item"`
		}
		t := table{ID: api.AWSRouteTable, VpcID: api.AWSVPCID, OwnerID: api.AWSAccountID, Routes: s.ec2Routes(),
			Associations: []association{{ID: "rtbassoc-" + awsquery.Hash(17, api.AWSRouteTable), RouteTableID: api.AWSRouteTable, Main: true}},
			Tags:         []model.Tag{{Key: "Name", Value: "ccm-harness"}, {Key: model.ClusterTag, Value: "owned"}}}
		body := struct {
			Tables []table `xml:"routeTableSet>item"`
		}{Tables: []table{}}
		values := map[string][]string{"route-table-id": {t.ID}, "vpc-id": {t.VpcID}, "association.main": {"true"}}
		if filters.match(values, t.Tags) {
			body.Tables = append(body.Tables, t)
		}
		svc.Answer(w, "DescribeRouteTables", body)
	}
}

// awsRouteName is the fakecloud route of the route table for a
// destination: EC2 keys routes by destination.
func awsRouteName(cidr string) string {
	return api.AWSRouteTable + "-" + strings.NewReplacer(".", "-", "/", "-", ":", "-").Replace(cidr)
}

// ec2RouteArgs reads a route change's table and destination.
func (s *Front) ec2RouteArgs(q *awsquery.Query) (string, *awsquery.Error) {
	table, dest := q.Get("RouteTableId"), q.Get("DestinationCidrBlock")
	if table != api.AWSRouteTable {
		return "", awsquery.Errorf(http.StatusBadRequest, "InvalidRouteTableID.NotFound", "The routeTable ID '%s' does not exist", table)
	}
	p, err := netip.ParsePrefix(dest)
	if err != nil {
		return "", awsquery.Errorf(http.StatusBadRequest, "InvalidParameterValue", "Value (%s) for parameter destinationCidrBlock is invalid. This is not a valid CIDR block.", dest)
	}
	return p.Masked().String(), nil
}

func (s *Front) ec2CreateRoute(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		dest, e := s.ec2RouteArgs(q)
		instanceID := q.Get("InstanceId")
		if e == nil {
			e = q.Done()
		}
		if e != nil {
			ec2Fail(w, e)
			return
		}
		name := awsRouteName(dest)
		c.Instance = instanceID
		f, ok := s.ApplyFault(w, r, c, api.OpCreateRoute, func(ref string) bool { return ref == name || ref == instanceID })
		if !ok {
			return
		}
		// An ignore fault answers as if the route were made, and makes none.
		ignored := f != nil && f.Kind == api.FaultIgnore
		if err := s.CreateEC2Route(name, dest, instanceID, ignored); err != nil {
			if errors.Is(err, model.ErrRouteExists) {
				ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "RouteAlreadyExists", "%s", err))
				return
			}
			instanceFail(w, err)
			return
		}
		svc.Answer(w, "CreateRoute", struct {
			Return bool `xml:"return"`
		}{true})
	}
}

func (s *Front) ec2DeleteRoute(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		dest, e := s.ec2RouteArgs(q)
		if e == nil {
			e = q.Done()
		}
		if e != nil {
			ec2Fail(w, e)
			return
		}
		name := awsRouteName(dest)
		if _, ok := s.ApplyFault(w, r, c, api.OpDeleteRoute, func(ref string) bool { return ref == name }); !ok {
			return
		}
		if err := s.DeleteEC2Route(name, dest); err != nil {
			if model.KindOf(err) == model.KindSave {
				model.SaveFailed(w, err)
				return
			}
			ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidRoute.NotFound", "%s", err))
			return
		}
		svc.Answer(w, "DeleteRoute", struct {
			Return bool `xml:"return"`
		}{true})
	}
}
