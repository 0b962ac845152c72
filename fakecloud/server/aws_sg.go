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

package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server/awsquery"
)

// EC2 security groups: the nodes' group, which every instance is in, and
// the groups the AWS CCM makes for its load balancers. Their ingress rules
// are kept as authorized, merged by protocol and port range as EC2 shows
// them; a load balancer's groups' CIDR rules are its source ranges
// (aws_elb.go). Nothing filters packets by them but a load balancer's
// listeners.

// awsSecurityGroup is a security group as stored.
type awsSecurityGroup struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Tags        []ec2Tag        `json:"tags"`
	Ingress     []awsPermission `json:"ingress"`
}

// awsPermission is one ingress rule: a protocol and port range, from CIDR
// ranges and other groups. Ports are absent for protocol -1.
type awsPermission struct {
	Protocol string     `json:"protocol"`
	FromPort *int32     `json:"fromPort,omitempty"`
	ToPort   *int32     `json:"toPort,omitempty"`
	Ranges   []awsRange `json:"ranges,omitempty"`
	Groups   []string   `json:"groups,omitempty"`
}

type awsRange struct {
	CIDR        string `json:"cidr"`
	Description string `json:"description,omitempty"`
}

func (p awsPermission) sameRule(q awsPermission) bool {
	eq := func(a, b *int32) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	return p.Protocol == q.Protocol && eq(p.FromPort, q.FromPort) && eq(p.ToPort, q.ToPort)
}

// describe names a rule as EC2's errors do.
func (p awsPermission) describe(peer string) string {
	ports := ""
	if p.FromPort != nil {
		ports = fmt.Sprintf(", from port: %d, to port: %d", *p.FromPort, *p.ToPort)
	}
	return fmt.Sprintf("peer: %s, %s%s, ALLOW", peer, strings.ToUpper(p.Protocol), ports)
}

// awsNodeGroupName is the nodes' group's name.
const awsNodeGroupName = "ccm-harness-nodes"

// awsGroupsLocked are the security groups, the nodes' first, made on
// first use.
func (s *Server) awsGroupsLocked() []*awsSecurityGroup {
	if !slices.ContainsFunc(s.st.SecurityGroups, func(g *awsSecurityGroup) bool { return g.ID == api.AWSNodeSecurityGroup }) {
		s.st.SecurityGroups = append([]*awsSecurityGroup{{
			ID: api.AWSNodeSecurityGroup, Name: awsNodeGroupName, Description: "the cluster's nodes",
			Tags: []ec2Tag{{Key: "Name", Value: awsNodeGroupName}, {Key: awsClusterTag, Value: "owned"}},
		}}, s.st.SecurityGroups...)
	}
	return s.st.SecurityGroups
}

func (s *Server) awsGroupLocked(id string) *awsSecurityGroup {
	for _, g := range s.awsGroupsLocked() {
		if g.ID == id {
			return g
		}
	}
	return nil
}

func groupNotFound(id string) *awsquery.Error {
	return awsquery.Errorf(http.StatusBadRequest, "InvalidGroup.NotFound", "The security group '%s' does not exist", id)
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
	Tags        []ec2Tag        `xml:"tagSet>item"`
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

func (g *awsSecurityGroup) wire() ec2Group {
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

func (s *Server) ec2DescribeSecurityGroups(svc *awsService) awsHandler {
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsquery.Query) {
		ids, names := q.List("GroupId"), q.List("GroupName")
		_, _ = q.Get("MaxResults"), q.Get("NextToken")
		filters, e := describeFilters(q, "group-id", "group-name", "vpc-id", "ip-permission.group-id", "description")
		if e != nil {
			ec2Fail(w, e)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, id := range ids {
			if s.awsGroupLocked(id) == nil {
				ec2Fail(w, groupNotFound(id))
				return
			}
		}
		body := struct {
			Groups []ec2Group `xml:"securityGroupInfo>item"`
		}{Groups: []ec2Group{}}
		for _, g := range s.awsGroupsLocked() {
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
				body.Groups = append(body.Groups, g.wire())
			}
		}
		svc.Answer(w, "DescribeSecurityGroups", body)
	}
}

// tagSpecifications reads TagSpecification.N.Tag.M of resource type typ.
func tagSpecifications(q *awsquery.Query, typ string) ([]ec2Tag, *awsquery.Error) {
	var tags []ec2Tag
	for i := 1; ; i++ {
		k := "TagSpecification." + strconv.Itoa(i)
		if !q.Has(k + ".ResourceType") {
			return tags, nil
		}
		if rt := q.Get(k + ".ResourceType"); rt != typ {
			return nil, awsquery.Errorf(http.StatusBadRequest, "InvalidParameterValue", "'%s' is not a valid taggable resource type for this operation.", rt)
		}
		for _, t := range q.Structs(k+".Tag", "Key", "Value") {
			tags = append(tags, ec2Tag{Key: t["Key"], Value: t["Value"]})
		}
	}
}

func (s *Server) ec2CreateSecurityGroup(svc *awsService) awsHandler {
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsquery.Query) {
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
		s.mu.Lock()
		defer s.mu.Unlock()
		if slices.ContainsFunc(s.awsGroupsLocked(), func(g *awsSecurityGroup) bool { return g.Name == name }) {
			ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidGroup.Duplicate", "The security group '%s' already exists for VPC '%s'", name, vpc))
			return
		}
		b := make([]byte, 9)
		rand.Read(b) // never fails, per crypto/rand
		g := &awsSecurityGroup{ID: "sg-" + hex.EncodeToString(b)[:17], Name: name, Description: desc, Tags: tags}
		s.st.SecurityGroups = append(s.st.SecurityGroups, g)
		if err := s.saveLocked(); err != nil {
			saveFailed(w, err)
			return
		}
		svc.Answer(w, "CreateSecurityGroup", struct {
			Return  bool   `xml:"return"`
			GroupID string `xml:"groupId"`
		}{true, g.ID})
	}
}

func (s *Server) ec2DeleteSecurityGroup(svc *awsService) awsHandler {
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsquery.Query) {
		id := q.Get("GroupId")
		if e := q.Done(); e != nil {
			ec2Fail(w, e)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		g := s.awsGroupLocked(id)
		if g == nil {
			ec2Fail(w, groupNotFound(id))
			return
		}
		// EC2 refuses to delete a group something still uses: an
		// instance, a load balancer, another group's rule.
		inUse := id == api.AWSNodeSecurityGroup
		for _, lb := range s.st.LoadBalancers {
			inUse = inUse || (lb.ELB != nil && slices.Contains(lb.ELB.SecurityGroups, id))
		}
		for _, other := range s.st.SecurityGroups {
			for _, p := range other.Ingress {
				inUse = inUse || (other.ID != id && slices.Contains(p.Groups, id))
			}
		}
		if inUse {
			ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "DependencyViolation", "resource %s has a dependent object", id))
			return
		}
		s.st.SecurityGroups = slices.DeleteFunc(s.st.SecurityGroups, func(x *awsSecurityGroup) bool { return x == g })
		if err := s.saveLocked(); err != nil {
			saveFailed(w, err)
			return
		}
		svc.Answer(w, "DeleteSecurityGroup", struct {
			Return bool `xml:"return"`
		}{true})
	}
}

// permissions reads IpPermissions.N with their ranges and groups.
func permissions(q *awsquery.Query) ([]awsPermission, *awsquery.Error) {
	var out []awsPermission
	for i, p := range q.Structs("IpPermissions", "IpProtocol", "FromPort", "ToPort") {
		k := "IpPermissions." + strconv.Itoa(i+1)
		perm := awsPermission{Protocol: strings.ToLower(p["IpProtocol"])}
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
			perm.Ranges = append(perm.Ranges, awsRange{CIDR: rg["CidrIp"], Description: rg["Description"]})
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
func (s *Server) ec2ChangeIngress(svc *awsService, add bool) awsHandler {
	action := "RevokeSecurityGroupIngress"
	if add {
		action = "AuthorizeSecurityGroupIngress"
	}
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsquery.Query) {
		id := q.Get("GroupId")
		perms, e := permissions(q)
		if e == nil {
			e = q.Done()
		}
		if e != nil {
			ec2Fail(w, e)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		g := s.awsGroupLocked(id)
		if g == nil {
			ec2Fail(w, groupNotFound(id))
			return
		}
		next := slices.Clone(g.Ingress)
		for i := range next {
			next[i].Ranges, next[i].Groups = slices.Clone(next[i].Ranges), slices.Clone(next[i].Groups)
		}
		for _, p := range perms {
			for _, peer := range p.Groups {
				if add && s.awsGroupLocked(peer) == nil {
					ec2Fail(w, groupNotFound(peer))
					return
				}
			}
			j := slices.IndexFunc(next, p.sameRule)
			if add && j < 0 {
				next = append(next, awsPermission{Protocol: p.Protocol, FromPort: p.FromPort, ToPort: p.ToPort})
				j = len(next) - 1
			}
			for _, rg := range p.Ranges {
				k := -1
				if j >= 0 {
					k = slices.IndexFunc(next[j].Ranges, func(x awsRange) bool { return x.CIDR == rg.CIDR })
				}
				switch {
				case add && k >= 0:
					ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidPermission.Duplicate", "the specified rule \"%s\" already exists", p.describe(rg.CIDR)))
					return
				case add:
					next[j].Ranges = append(next[j].Ranges, rg)
				case k < 0:
					ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidPermission.NotFound", "The specified rule does not exist in this security group."))
					return
				default:
					next[j].Ranges = slices.Delete(next[j].Ranges, k, k+1)
				}
			}
			for _, peer := range p.Groups {
				k := -1
				if j >= 0 {
					k = slices.Index(next[j].Groups, peer)
				}
				switch {
				case add && k >= 0:
					ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidPermission.Duplicate", "the specified rule \"%s\" already exists", p.describe(peer)))
					return
				case add:
					next[j].Groups = append(next[j].Groups, peer)
				case k < 0:
					ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidPermission.NotFound", "The specified rule does not exist in this security group."))
					return
				default:
					next[j].Groups = slices.Delete(next[j].Groups, k, k+1)
				}
			}
		}
		g.Ingress = slices.DeleteFunc(next, func(p awsPermission) bool { return len(p.Ranges) == 0 && len(p.Groups) == 0 })
		rederive := func() error {
			if id == api.AWSNodeSecurityGroup {
				return s.nlbRederiveLocked()
			}
			return s.elbRederiveLocked(id)
		}
		if err := rederive(); err != nil {
			ec2Fail(w, awsquery.Errorf(http.StatusInternalServerError, "InternalError", "%v", err))
			return
		}
		if err := s.saveLocked(); err != nil {
			saveFailed(w, err)
			return
		}
		svc.Answer(w, action, struct {
			Return bool `xml:"return"`
		}{true})
	}
}

// ec2CreateTags tags security groups, the one kind of resource the AWS
// CCM tags here.
func (s *Server) ec2CreateTags(svc *awsService) awsHandler {
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsquery.Query) {
		ids := q.List("ResourceId")
		tags := q.Structs("Tag", "Key", "Value")
		if e := q.Done(); e != nil {
			ec2Fail(w, e)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, id := range ids {
			g := s.awsGroupLocked(id)
			if g == nil {
				ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidID", "The ID '%s' is not valid (fakecloud tags security groups only)", id))
				return
			}
			for _, t := range tags {
				g.Tags = slices.DeleteFunc(g.Tags, func(x ec2Tag) bool { return x.Key == t["Key"] })
				g.Tags = append(g.Tags, ec2Tag{Key: t["Key"], Value: t["Value"]})
			}
		}
		if err := s.saveLocked(); err != nil {
			saveFailed(w, err)
			return
		}
		svc.Answer(w, "CreateTags", struct {
			Return bool `xml:"return"`
		}{true})
	}
}
