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
	"fmt"
	"net/http"
	"slices"
	"strings"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/awsquery"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

// ec2ZoneID is a zone's ID, as EC2 names them: the region's initials,
// "-az" and the zone's number.
func ec2ZoneID(region string, i int) string {
	var b strings.Builder
	for _, part := range strings.Split(region, "-") {
		if part != "" && (part[0] < '0' || part[0] > '9') {
			b.WriteByte(part[0])
		} else {
			b.WriteString(part)
		}
	}
	return fmt.Sprintf("%s-az%d", b.String(), i+1)
}

func (s *Front) ec2DescribeAvailabilityZones(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		names := q.List("ZoneName")
		ids := q.List("ZoneId")
		_ = q.Get("AllAvailabilityZones")
		filters, e := describeFilters(q, "zone-name", "zone-id", "region-name", "state", "zone-type")
		if e != nil {
			ec2Fail(w, e)
			return
		}
		type zone struct {
			ZoneName    string `xml:"zoneName"`
			ZoneID      string `xml:"zoneId"`
			ZoneState   string `xml:"zoneState"`
			RegionName  string `xml:"regionName"`
			GroupName   string `xml:"groupName"`
			ZoneType    string `xml:"zoneType"`
			OptIn       string `xml:"optInStatus"`
			BorderGroup string `xml:"networkBorderGroup"`
		}
		body := struct {
			Zones []zone `xml:"availabilityZoneInfo>item"`
		}{Zones: []zone{}}
		for i, z := range s.Zones() {
			id := ec2ZoneID(s.Region(), i)
			if (len(names) > 0 && !slices.Contains(names, z)) || (len(ids) > 0 && !slices.Contains(ids, id)) {
				continue
			}
			values := map[string][]string{"zone-name": {z}, "zone-id": {id}, "region-name": {s.Region()}, "state": {"available"}, "zone-type": {"availability-zone"}}
			if filters.match(values, nil) {
				body.Zones = append(body.Zones, zone{z, id, "available", s.Region(), s.Region(), "availability-zone", "opt-in-not-required", s.Region()})
			}
		}
		svc.Answer(w, "DescribeAvailabilityZones", body)
	}
}

// ec2DescribeInstanceTopology answers as EC2 does in a region without
// instance topology, which fakecloud's regions are.
func ec2DescribeInstanceTopology(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
	ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "UnsupportedOperation", "The functionality you requested is not available in this region."))
}

// awsVPCCIDR is the VPC's CIDR: the instances' internal address pool.
func (s *Front) awsVPCCIDR() string { return s.InternalPool().Masked().String() }

func (s *Front) ec2DescribeVpcs(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		ids := q.List("VpcId")
		filters, e := describeFilters(q, "vpc-id", "cidr", "state", "is-default")
		if e != nil {
			ec2Fail(w, e)
			return
		}
		for _, id := range ids {
			if id != api.AWSVPCID {
				ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidVpcID.NotFound", "The vpc ID '%s' does not exist", id))
				return
			}
		}
		type vpc struct {
			ID        string      `xml:"vpcId"`
			OwnerID   string      `xml:"ownerId"`
			State     string      `xml:"state"`
			CidrBlock string      `xml:"cidrBlock"`
			IsDefault bool        `xml:"isDefault"`
			Tags      []model.Tag `xml:"tagSet>item"`
		}
		v := vpc{api.AWSVPCID, api.AWSAccountID, "available", s.awsVPCCIDR(), false, []model.Tag{{Key: "Name", Value: "ccm-harness"}, {Key: model.ClusterTag, Value: "owned"}}}
		body := struct {
			Vpcs []vpc `xml:"vpcSet>item"`
		}{Vpcs: []vpc{}}
		if filters.match(map[string][]string{"vpc-id": {v.ID}, "cidr": {v.CidrBlock}, "state": {v.State}, "is-default": {"false"}}, v.Tags) {
			body.Vpcs = append(body.Vpcs, v)
		}
		svc.Answer(w, "DescribeVpcs", body)
	}
}

// Subnet is a zone's subnet, tagged for the cluster and for internet-
// facing load balancers.
type Subnet struct {
	ID        string      `xml:"subnetId"`
	VpcID     string      `xml:"vpcId"`
	OwnerID   string      `xml:"ownerId"`
	State     string      `xml:"state"`
	CidrBlock string      `xml:"cidrBlock"`
	Zone      string      `xml:"availabilityZone"`
	ZoneID    string      `xml:"availabilityZoneId"`
	Available int         `xml:"availableIpAddressCount"`
	Tags      []model.Tag `xml:"tagSet>item"`
}

// Subnets are the VPC's subnets, one a zone: EC2 describes them, and
// Elastic Load Balancing places load balancers in them.
func (s *Front) Subnets() []Subnet {
	out := make([]Subnet, 0, len(s.Zones()))
	for i, z := range s.Zones() {
		// Every subnet is the VPC's whole range: fakecloud hands out
		// addresses from one pool, whatever the zone.
		out = append(out, Subnet{
			ID: api.AWSSubnetID(i), VpcID: api.AWSVPCID, OwnerID: api.AWSAccountID, State: "available",
			CidrBlock: s.awsVPCCIDR(), Zone: z, ZoneID: ec2ZoneID(s.Region(), i), Available: 4091,
			Tags: []model.Tag{{Key: "Name", Value: "ccm-harness-" + z}, {Key: model.ClusterTag, Value: "owned"}, {Key: awsTagELBRole, Value: "1"}},
		})
	}
	return out
}

func (s *Front) ec2DescribeSubnets(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		ids := q.List("SubnetId")
		filters, e := describeFilters(q, "subnet-id", "vpc-id", "availability-zone", "state", "cidr-block")
		if e != nil {
			ec2Fail(w, e)
			return
		}
		all := s.Subnets()
		for _, id := range ids {
			if !slices.ContainsFunc(all, func(sn Subnet) bool { return sn.ID == id }) {
				ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", id))
				return
			}
		}
		body := struct {
			Subnets []Subnet `xml:"subnetSet>item"`
		}{Subnets: []Subnet{}}
		for _, sn := range all {
			if len(ids) > 0 && !slices.Contains(ids, sn.ID) {
				continue
			}
			values := map[string][]string{"subnet-id": {sn.ID}, "vpc-id": {sn.VpcID}, "availability-zone": {sn.Zone}, "state": {sn.State}, "cidr-block": {sn.CidrBlock}}
			if filters.match(values, sn.Tags) {
				body.Subnets = append(body.Subnets, sn)
			}
		}
		svc.Answer(w, "DescribeSubnets", body)
	}
}
