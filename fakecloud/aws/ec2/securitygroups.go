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
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/awsquery"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

// EC2 security groups: the nodes' group, which every instance is in, and
// the groups the AWS CCM makes for its load balancers. Their ingress rules
// are kept as authorized, merged by protocol and port range as EC2 shows
// them; a load balancer's groups' CIDR rules are its source ranges
// (the model derives it: its classicSpecLocked). Nothing filters packets by them but a load balancer's
// listeners.

func groupNotFound(id string) *awsquery.Error {
	return awsquery.Errorf(http.StatusBadRequest, "InvalidGroup.NotFound", "The security group '%s' does not exist", id)
}

// groupFail answers a refused change to a security group or its rules
// with EC2's code for why.
func groupFail(w http.ResponseWriter, err error) {
	code, status := "InternalError", http.StatusInternalServerError
	switch {
	case model.KindOf(err) == model.KindSave:
		model.SaveFailed(w, err)
		return
	case errors.Is(err, model.ErrNoSuchGroup):
		code, status = "InvalidGroup.NotFound", http.StatusBadRequest
	case errors.Is(err, model.ErrGroupInUse):
		code, status = "DependencyViolation", http.StatusBadRequest
	case errors.Is(err, model.ErrRuleExists):
		code, status = "InvalidPermission.Duplicate", http.StatusBadRequest
	case errors.Is(err, model.ErrNoSuchRule):
		code, status = "InvalidPermission.NotFound", http.StatusBadRequest
	}
	ec2Fail(w, awsquery.Errorf(status, code, "%s", err))
}

// ec2Group is a security group as DescribeSecurityGroups answers it.
type ec2Group struct {
	OwnerID     string          `xml:"ownerId"`
	ID          string          `xml:"groupId"`
	Name        string          `xml:"groupName"`
	Description string          `xml:"groupDescription"`
	VpcID       string          `xml:"vpcId"`
	Ingress     []ec2Permission `xml:"ipPermissions>item"`
	Egress      []ec2Permission `xml:"ipPermissionsEgress>item"`
	Tags        []model.Tag     `xml:"tagSet>item"`
}

type ec2Permission struct {
	Protocol string         `xml:"ipProtocol"`
	FromPort *int32         `xml:"fromPort,omitempty"`
	ToPort   *int32         `xml:"toPort,omitempty"`
	Groups   []ec2GroupPair `xml:"groups>item"`
	Ranges   []ec2Range     `xml:"ipRanges>item"`
}

type ec2GroupPair struct {
	UserID  string `xml:"userId"`
	GroupID string `xml:"groupId"`
}

type ec2Range struct {
	CIDR        string `xml:"cidrIp"`
	Description string `xml:"description,omitempty"`
}

func groupWire(g model.SecurityGroup) ec2Group {
	out := ec2Group{OwnerID: api.AWSAccountID, ID: g.ID, Name: g.Name, Description: g.Description, VpcID: api.AWSVPCID, Tags: g.Tags,
		Ingress: []ec2Permission{}, Egress: []ec2Permission{{Protocol: "-1", Ranges: []ec2Range{{CIDR: "0.0.0.0/0"}}}}}
	for _, p := range g.Ingress {
		w := ec2Permission{Protocol: p.Protocol, FromPort: p.FromPort, ToPort: p.ToPort}
		for _, r := range p.Ranges {
			w.Ranges = append(w.Ranges, ec2Range(r))
		}
		for _, id := range p.Groups {
			w.Groups = append(w.Groups, ec2GroupPair{api.AWSAccountID, id})
		}
		out.Ingress = append(out.Ingress, w)
	}
	return out
}

func (s *Front) ec2DescribeSecurityGroups(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		ids, names := q.List("GroupId"), q.List("GroupName")
		_, _ = q.Get("MaxResults"), q.Get("NextToken")
		filters, e := describeFilters(q, "group-id", "group-name", "vpc-id", "ip-permission.group-id", "description")
		if e != nil {
			ec2Fail(w, e)
			return
		}
		groups := s.SecurityGroups()
		for _, id := range ids {
			if !slices.ContainsFunc(groups, func(g model.SecurityGroup) bool { return g.ID == id }) {
				ec2Fail(w, groupNotFound(id))
				return
			}
		}
		body := struct {
			Groups []ec2Group `xml:"securityGroupInfo>item"`
		}{Groups: []ec2Group{}}
		for _, g := range groups {
			if (len(ids) > 0 && !slices.Contains(ids, g.ID)) || (len(names) > 0 && !slices.Contains(names, g.Name)) {
				continue
			}
			var peers []string
			for _, p := range g.Ingress {
				peers = append(peers, p.Groups...)
			}
			values := map[string][]string{"group-id": {g.ID}, "group-name": {g.Name}, "vpc-id": {api.AWSVPCID},
				"ip-permission.group-id": peers, "description": {g.Description}}
			if filters.match(values, g.Tags) {
				body.Groups = append(body.Groups, groupWire(g))
			}
		}
		svc.Answer(w, "DescribeSecurityGroups", body)
	}
}

// tagSpecifications reads TagSpecification.N.Tag.M of resource type typ.
func tagSpecifications(q *awsquery.Query, typ string) ([]model.Tag, *awsquery.Error) {
	var tags []model.Tag
	for i := 1; ; i++ {
		k := "TagSpecification." + strconv.Itoa(i)
		if !q.Has(k + ".ResourceType") {
			return tags, nil
		}
		if rt := q.Get(k + ".ResourceType"); rt != typ {
			return nil, awsquery.Errorf(http.StatusBadRequest, "InvalidParameterValue", "'%s' is not a valid taggable resource type for this operation.", rt)
		}
		for _, t := range q.Structs(k+".Tag", "Key", "Value") {
			tags = append(tags, model.Tag{Key: t["Key"], Value: t["Value"]})
		}
	}
}

func (s *Front) ec2CreateSecurityGroup(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		name, desc, vpc := q.Get("GroupName"), q.Get("GroupDescription"), q.Get("VpcId")
		tags, e := tagSpecifications(q, "security-group")
		if e == nil {
			e = q.Done()
		}
		switch {
		case e != nil:
		case name == "" || desc == "":
			e = awsquery.Errorf(http.StatusBadRequest, "MissingParameter", "The request must contain the parameters GroupName and GroupDescription")
		case strings.HasPrefix(name, "sg-"):
			e = awsquery.Errorf(http.StatusBadRequest, "InvalidParameterValue", "Group names may not be in the format sg-*.")
		case vpc != api.AWSVPCID:
			e = awsquery.Errorf(http.StatusBadRequest, "InvalidVpcID.NotFound", "The vpc ID '%s' does not exist", vpc)
		}
		if e != nil {
			ec2Fail(w, e)
			return
		}
		id, err := s.CreateSecurityGroup(name, desc, tags)
		switch {
		case model.KindOf(err) == model.KindSave:
			model.SaveFailed(w, err)
			return
		case err != nil:
			ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidGroup.Duplicate", "The security group '%s' already exists for VPC '%s'", name, vpc))
			return
		}
		svc.Answer(w, "CreateSecurityGroup", struct {
			Return  bool   `xml:"return"`
			GroupID string `xml:"groupId"`
		}{true, id})
	}
}

func (s *Front) ec2DeleteSecurityGroup(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		id := q.Get("GroupId")
		if e := q.Done(); e != nil {
			ec2Fail(w, e)
			return
		}
		// EC2 refuses to delete a group something still uses: an
		// instance, a load balancer, another group's rule.
		if err := s.DeleteSecurityGroup(id); err != nil {
			groupFail(w, err)
			return
		}
		svc.Answer(w, "DeleteSecurityGroup", struct {
			Return bool `xml:"return"`
		}{true})
	}
}

// permissions reads IpPermissions.N with their ranges and groups.
func permissions(q *awsquery.Query) ([]model.Permission, *awsquery.Error) {
	var out []model.Permission
	for i, p := range q.Structs("IpPermissions", "IpProtocol", "FromPort", "ToPort") {
		k := "IpPermissions." + strconv.Itoa(i+1)
		perm := model.Permission{Protocol: strings.ToLower(p["IpProtocol"])}
		switch perm.Protocol {
		case "tcp", "udp", "icmp", "6", "17", "1":
		case "-1", "all":
			perm.Protocol = "-1"
		default:
			return nil, awsquery.Errorf(http.StatusBadRequest, "InvalidParameterValue", "Invalid value '%s' for IP protocol. Unknown protocol.", p["IpProtocol"])
		}
		for _, f := range []string{"FromPort", "ToPort"} {
			v, ok := p[f]
			if !ok || perm.Protocol == "-1" {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return nil, awsquery.Errorf(http.StatusBadRequest, "InvalidParameterValue", "Invalid value '%s' for %s", v, f)
			}
			n32 := int32(n)
			if f == "FromPort" {
				perm.FromPort = &n32
			} else {
				perm.ToPort = &n32
			}
		}
		if perm.Protocol != "-1" && (perm.FromPort == nil || perm.ToPort == nil) {
			return nil, awsquery.Errorf(http.StatusBadRequest, "MissingParameter", "The request must contain the parameter ipPermissions.fromPort and toPort for protocol %s", perm.Protocol)
		}
		for _, rg := range q.Structs(k+".IpRanges", "CidrIp", "Description") {
			if _, err := netip.ParsePrefix(rg["CidrIp"]); err != nil {
				return nil, awsquery.Errorf(http.StatusBadRequest, "InvalidParameterValue", "CIDR block %s is malformed", rg["CidrIp"])
			}
			perm.Ranges = append(perm.Ranges, model.IPRange{CIDR: rg["CidrIp"], Description: rg["Description"]})
		}
		for _, gp := range q.Structs(k+".Groups", "GroupId", "UserId") {
			perm.Groups = append(perm.Groups, gp["GroupId"])
		}
		out = append(out, perm)
	}
	return out, nil
}

// ec2ChangeIngress authorizes (add) or revokes rules of a group: the
// rules' peers one by one, as EC2 keeps them, refusing a duplicate or a
// missing one as EC2 does. A load balancer whose group changed has its
// source ranges derived again.
func (s *Front) ec2ChangeIngress(svc *awsquery.Endpoint, add bool) awsquery.Handler {
	action := "RevokeSecurityGroupIngress"
	if add {
		action = "AuthorizeSecurityGroupIngress"
	}
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		id := q.Get("GroupId")
		perms, e := permissions(q)
		if e == nil {
			e = q.Done()
		}
		if e != nil {
			ec2Fail(w, e)
			return
		}
		if err := s.ChangeIngress(id, add, perms); err != nil {
			groupFail(w, err)
			return
		}
		svc.Answer(w, action, struct {
			Return bool `xml:"return"`
		}{true})
	}
}

// ec2CreateTags tags security groups, the one kind of resource the AWS
// CCM tags here.
func (s *Front) ec2CreateTags(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		ids := q.List("ResourceId")
		tags := q.Structs("Tag", "Key", "Value")
		if e := q.Done(); e != nil {
			ec2Fail(w, e)
			return
		}
		var set []model.Tag
		for _, t := range tags {
			set = append(set, model.Tag{Key: t["Key"], Value: t["Value"]})
		}
		if err := s.TagSecurityGroups(ids, set); err != nil {
			if model.KindOf(err) == model.KindSave {
				model.SaveFailed(w, err)
				return
			}
			ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidID", "%s", err))
			return
		}
		svc.Answer(w, "CreateTags", struct {
			Return bool `xml:"return"`
		}{true})
	}
}
