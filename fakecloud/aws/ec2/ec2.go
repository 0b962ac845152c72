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

// Package ec2 is fakecloud's EC2, a front over package model speaking the
// AWS query protocol (package awsquery).
//
// EC2, API version 2016-11-15: an instance is an EC2 instance in the one
// VPC, in its zone's subnet, tagged for the cluster. Its InternalIPs are
// its network interface's private addresses, its first ExternalIP its
// public address, its Hostname address its private DNS name (the node
// name the AWS CCM looks it up by). Terminated instances stay visible,
// without addresses, as EC2 shows them for a while. Routes of the one
// route table are fakecloud's routes of cluster api.AWSRouteTable.
//
// Its files: ec2.go (instances, their state changes and EC2's filters),
// network.go (zones, the VPC and its subnets, which Elastic Load Balancing
// takes from here as the real service does), routes.go (the route
// table) and securitygroups.go (security groups; a change re-derives the
// load balancers that use them, through the model).
package ec2

import (
	"errors"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/awsquery"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

const (
	ec2Version    = "2016-11-15"
	awsTagELBRole = "kubernetes.io/role/elb"
)

// Endpoint is the service's endpoint, with its actions.
func (s *Front) Endpoint() *awsquery.Endpoint {
	svc := &awsquery.Endpoint{Service: awsquery.Service{
		Path:       api.AWSPath + "ec2/",
		Signing:    "ec2",
		Version:    ec2Version,
		XMLNS:      "http://ec2.amazonaws.com/doc/" + ec2Version + "/",
		ErrorShape: awsquery.EC2ErrorXML,
	}}
	svc.Actions = map[string]awsquery.Action{
		"DescribeInstances":             {Op: api.OpListInstances, H: s.ec2DescribeInstances(svc)},
		"DescribeAvailabilityZones":     {Op: "", H: s.ec2DescribeAvailabilityZones(svc)},
		"DescribeInstanceTopology":      {Op: "", H: ec2DescribeInstanceTopology},
		"DescribeVpcs":                  {Op: "", H: s.ec2DescribeVpcs(svc)},
		"DescribeSubnets":               {Op: "", H: s.ec2DescribeSubnets(svc)},
		"DescribeRouteTables":           {Op: api.OpListRoutes, H: s.ec2DescribeRouteTables(svc)},
		"CreateRoute":                   {Op: api.OpCreateRoute, H: s.ec2CreateRoute(svc)},
		"DeleteRoute":                   {Op: api.OpDeleteRoute, H: s.ec2DeleteRoute(svc)},
		"ModifyInstanceAttribute":       {Op: "", H: s.ec2ModifyInstanceAttribute(svc)},
		"DescribeSecurityGroups":        {Op: "", H: s.ec2DescribeSecurityGroups(svc)},
		"CreateSecurityGroup":           {Op: "", H: s.ec2CreateSecurityGroup(svc)},
		"DeleteSecurityGroup":           {Op: "", H: s.ec2DeleteSecurityGroup(svc)},
		"AuthorizeSecurityGroupIngress": {Op: "", H: s.ec2ChangeIngress(svc, true)},
		"RevokeSecurityGroupIngress":    {Op: "", H: s.ec2ChangeIngress(svc, false)},
		"CreateTags":                    {Op: "", H: s.ec2CreateTags(svc)},
		"StopInstances":                 {Op: "", H: s.ec2ChangeState(svc, "StopInstances", api.StateStopped)},
		"StartInstances":                {Op: "", H: s.ec2ChangeState(svc, "StartInstances", api.StateRunning)},
		"TerminateInstances":            {Op: "", H: s.ec2ChangeState(svc, "TerminateInstances", api.StateTerminated)},
	}
	return svc
}

// ec2Fail answers an error in EC2's shape.
func ec2Fail(w http.ResponseWriter, e *awsquery.Error) {
	awsquery.EC2ErrorXML(w, e.Status, e.Code, e.Msg, awsquery.RequestID())
}

type ec2InstanceState struct {
	Code int    `xml:"code"`
	Name string `xml:"name"`
}

type ec2PrivateIP struct {
	PrivateIPAddress string `xml:"privateIpAddress"`
	PrivateDNSName   string `xml:"privateDnsName,omitempty"`
	Primary          bool   `xml:"primary"`
}

type ec2Association struct {
	PublicIP      string `xml:"publicIp"`
	PublicDNSName string `xml:"publicDnsName,omitempty"`
	IPOwnerID     string `xml:"ipOwnerId"`
}

type ec2NetworkInterface struct {
	ID               string `xml:"networkInterfaceId"`
	SubnetID         string `xml:"subnetId"`
	VpcID            string `xml:"vpcId"`
	OwnerID          string `xml:"ownerId"`
	Status           string `xml:"status"`
	MacAddress       string `xml:"macAddress"`
	PrivateIPAddress string `xml:"privateIpAddress"`
	PrivateDNSName   string `xml:"privateDnsName,omitempty"`
	SourceDestCheck  bool   `xml:"sourceDestCheck"`
	Attachment       struct {
		AttachmentID string `xml:"attachmentId"`
		DeviceIndex  int    `xml:"deviceIndex"`
		Status       string `xml:"status"`
	} `xml:"attachment"`
	Association *ec2Association `xml:"association,omitempty"`
	PrivateIPs  []ec2PrivateIP  `xml:"privateIpAddressesSet>item"`
	IPv6        []string        `xml:"ipv6AddressesSet>item>ipv6Address"`
}

type ec2Instance struct {
	InstanceID     string           `xml:"instanceId"`
	ImageID        string           `xml:"imageId"`
	State          ec2InstanceState `xml:"instanceState"`
	PrivateDNSName string           `xml:"privateDnsName"`
	DNSName        string           `xml:"dnsName"`
	InstanceType   string           `xml:"instanceType"`
	LaunchTime     string           `xml:"launchTime"`
	Placement      struct {
		AvailabilityZone string `xml:"availabilityZone"`
		Tenancy          string `xml:"tenancy"`
	} `xml:"placement"`
	SubnetID          string                `xml:"subnetId,omitempty"`
	VpcID             string                `xml:"vpcId,omitempty"`
	PrivateIPAddress  string                `xml:"privateIpAddress,omitempty"`
	IPAddress         string                `xml:"ipAddress,omitempty"`
	SourceDestCheck   bool                  `xml:"sourceDestCheck"`
	Architecture      string                `xml:"architecture"`
	Groups            []ec2GroupRef         `xml:"groupSet>item"`
	NetworkInterfaces []ec2NetworkInterface `xml:"networkInterfaceSet>item"`
	Tags              []model.Tag           `xml:"tagSet>item"`
}

type ec2GroupRef struct {
	ID   string `xml:"groupId"`
	Name string `xml:"groupName"`
}

// ec2States are EC2's instance states with their codes.
var ec2States = map[api.InstanceState]ec2InstanceState{
	api.StateRunning:    {16, "running"},
	api.StateStopped:    {80, "stopped"},
	api.StateTerminated: {48, "terminated"},
}

// zoneIndex is the position of zone among the region's zones, or -1.
func (s *Front) zoneIndex(zone string) int { return slices.Index(s.Zones(), zone) }

// ec2InstanceOf shows inst as EC2 does. sourceDestCheck is the instance's
// attribute, true unless the caller turned it off.
func (s *Front) ec2InstanceOf(inst api.Instance, sourceDestCheck bool) ec2Instance {
	state, ok := ec2States[inst.State]
	if !ok {
		// A corrupt fault may set any state; EC2 has a code for its own only.
		state = ec2InstanceState{Code: 0, Name: string(inst.State)}
	}
	out := ec2Instance{
		InstanceID: inst.ID, ImageID: "ami-0fa4ec10d00000001", State: state,
		InstanceType: inst.InstanceType, LaunchTime: inst.CreatedAt.UTC().Format(time.RFC3339),
		SourceDestCheck: sourceDestCheck, Architecture: "x86_64",
		Tags: []model.Tag{{Key: "Name", Value: inst.Name}, {Key: model.ClusterTag, Value: "owned"}},
	}
	out.Placement.AvailabilityZone, out.Placement.Tenancy = inst.Zone, "default"
	if inst.State == api.StateTerminated {
		// EC2 keeps a terminated instance a while, with no network.
		return out
	}
	out.VpcID = api.AWSVPCID
	out.Groups = []ec2GroupRef{{api.AWSNodeSecurityGroup, model.NodeGroupName}}
	if i := s.zoneIndex(inst.Zone); i >= 0 {
		out.SubnetID = api.AWSSubnetID(i)
	}
	nic := ec2NetworkInterface{
		ID: "eni-" + awsquery.Hash(17, inst.ID), SubnetID: out.SubnetID, VpcID: api.AWSVPCID, OwnerID: api.AWSAccountID,
		Status: "in-use", MacAddress: model.MAC(inst.ID), SourceDestCheck: sourceDestCheck,
	}
	nic.Attachment.AttachmentID, nic.Attachment.Status = "eni-attach-"+awsquery.Hash(17, inst.ID, "attach"), "attached"
	var public, publicDNS string
	for _, a := range inst.Addresses {
		switch a.Type {
		case api.AddressHostname:
			out.PrivateDNSName = a.Address
		case api.AddressInternalDNS:
			if out.PrivateDNSName == "" {
				out.PrivateDNSName = a.Address
			}
		case api.AddressExternalDNS:
			if publicDNS == "" {
				publicDNS = a.Address
			}
		case api.AddressExternalIP:
			// One public address per instance; EC2 releases it when the
			// instance stops.
			if public == "" && inst.State == api.StateRunning {
				public = a.Address
			}
		case api.AddressInternalIP:
			ip, err := netip.ParseAddr(a.Address)
			if err != nil {
				continue
			}
			if ip.Is6() {
				nic.IPv6 = append(nic.IPv6, a.Address)
				continue
			}
			nic.PrivateIPs = append(nic.PrivateIPs, ec2PrivateIP{PrivateIPAddress: a.Address, Primary: len(nic.PrivateIPs) == 0})
		}
	}
	if len(nic.PrivateIPs) > 0 {
		out.PrivateIPAddress = nic.PrivateIPs[0].PrivateIPAddress
		nic.PrivateIPAddress = out.PrivateIPAddress
	}
	nic.PrivateDNSName = out.PrivateDNSName
	if public != "" {
		out.IPAddress, out.DNSName = public, publicDNS
		nic.Association = &ec2Association{PublicIP: public, PublicDNSName: publicDNS, IPOwnerID: "amazon"}
	}
	out.NetworkInterfaces = []ec2NetworkInterface{nic}
	return out
}

// ec2Filters are a Describe call's filters, each matched against a value
// of the resource. A filter the resource type has not is refused, as EC2
// refuses it.
type ec2Filters map[string][]string

// describeFilters reads a Describe call's filters, last: it refuses any
// parameter not read before it, and any filter not known for the resource.
func describeFilters(q *awsquery.Query, known ...string) (ec2Filters, *awsquery.Error) {
	fs := ec2Filters(q.Filters())
	if e := q.Done(); e != nil {
		return nil, e
	}
	return fs, fs.check(known...)
}

func (fs ec2Filters) check(known ...string) *awsquery.Error {
	for name := range fs {
		if !slices.Contains(known, name) && name != "tag-key" && !strings.HasPrefix(name, "tag:") {
			return awsquery.Errorf(http.StatusBadRequest, "InvalidParameterValue", "The filter '%s' is invalid", name)
		}
	}
	return nil
}

// match reports whether a resource with these values (filter name →
// values) and tags passes every filter.
func (fs ec2Filters) match(values map[string][]string, tags []model.Tag) bool {
	for name, want := range fs {
		var have []string
		switch {
		case name == "tag-key":
			for _, t := range tags {
				have = append(have, t.Key)
			}
		case strings.HasPrefix(name, "tag:"):
			for _, t := range tags {
				if t.Key == strings.TrimPrefix(name, "tag:") {
					have = append(have, t.Value)
				}
			}
		default:
			have = values[name]
		}
		if !slices.ContainsFunc(want, func(w string) bool {
			return slices.ContainsFunc(have, func(h string) bool { return ec2Wildcard(w, h) })
		}) {
			return false
		}
	}
	return true
}

// ec2Wildcard matches EC2's filter values, where * is any run of
// characters and ? any one.
func ec2Wildcard(pattern, s string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == s
	}
	if pattern == "" {
		return s == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if ec2Wildcard(pattern[1:], s[i:]) {
				return true
			}
		}
		return false
	case '?':
		return s != "" && ec2Wildcard(pattern[1:], s[1:])
	default:
		return s != "" && s[0] == pattern[0] && ec2Wildcard(pattern[1:], s[1:])
	}
}

// ec2InstanceIDFormat is the instance IDs EC2 accepts as well-formed.
func ec2InstanceIDFormat(id string) bool {
	if !strings.HasPrefix(id, "i-") || len(id) < 3 {
		return false
	}
	for _, r := range id[2:] {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

func (s *Front) ec2DescribeInstances(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		ids := q.List("InstanceId")
		maxResults, nextToken := q.Get("MaxResults"), q.Get("NextToken")
		filters, e := describeFilters(q, "private-dns-name", "instance-state-name", "instance-id", "vpc-id", "subnet-id", "availability-zone", "instance-type", "private-ip-address")
		if e != nil {
			ec2Fail(w, e)
			return
		}
		limit, offset := 0, 0
		if maxResults != "" {
			if len(ids) > 0 {
				ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidParameterCombination", "The parameter instancesSet cannot be used with the parameter maxResults"))
				return
			}
			n, err := strconv.Atoi(maxResults)
			if err != nil || n < 5 || n > 1000 {
				ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidParameterValue", "Value ( %s ) for parameter maxResults is invalid. Expecting a value between 5 and 1000.", maxResults))
				return
			}
			limit = n
		}
		if nextToken != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(nextToken, "fakecloud-"))
			if err != nil || !strings.HasPrefix(nextToken, "fakecloud-") || n < 0 {
				ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidParameterValue", "Invalid value '%s' for nextToken", nextToken))
				return
			}
			offset = n
		}
		for _, id := range ids {
			if !ec2InstanceIDFormat(id) {
				ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidInstanceID.Malformed", "Invalid id: \"%s\"", id))
				return
			}
		}
		// One instance asked for by ID is a get; anything else a list.
		if len(ids) == 1 && len(filters) == 0 {
			c.Op = api.OpGetInstance
			c.Instance = ids[0]
		}
		if names := filters["private-dns-name"]; len(names) == 1 {
			c.Instance = names[0]
		}
		// asked is the instance as EC2 shows it, and whether the call's
		// filters ask for it.
		asked := func(inst api.Instance, sourceDestCheck bool) (ec2Instance, bool) {
			e := s.ec2InstanceOf(inst, sourceDestCheck)
			values := map[string][]string{
				"private-dns-name": {e.PrivateDNSName}, "instance-state-name": {e.State.Name},
				"instance-id": {e.InstanceID}, "vpc-id": {e.VpcID}, "subnet-id": {e.SubnetID},
				"availability-zone": {e.Placement.AvailabilityZone}, "instance-type": {e.InstanceType},
				"private-ip-address": {e.PrivateIPAddress},
			}
			return e, filters.match(values, e.Tags)
		}
		// A fault about an instance fires on the calls that answer it, not
		// on a lookup of another node by name.
		shown := s.AboutEC2Instances(func(inst api.Instance, sourceDestCheck bool) bool {
			_, ok := asked(inst, sourceDestCheck)
			return ok && (len(ids) == 0 || slices.Contains(ids, inst.ID))
		})
		f, ok := s.ApplyFault(w, r, c, c.Op, func(ref string) bool {
			return slices.Contains(ids, ref) || slices.Contains(filters["private-dns-name"], ref) || shown(ref)
		})
		if !ok {
			return
		}
		out, missing := describedInstances(s.EC2Instances(), ids, f, asked)
		if len(missing) > 0 {
			ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidInstanceID.NotFound", "The instance IDs '%s' do not exist", strings.Join(missing, ", ")))
			return
		}
		next := ""
		if offset > len(out) {
			offset = len(out)
		}
		out = out[offset:]
		if limit > 0 && len(out) > limit {
			out, next = out[:limit], "fakecloud-"+strconv.Itoa(offset+limit)
		}
		// EC2 answers each instance in a reservation of its own here, as
		// instances launched one at a time are.
		type reservation struct {
			ID        string        `xml:"reservationId"`
			OwnerID   string        `xml:"ownerId"`
			Instances []ec2Instance `xml:"instancesSet>item"`
		}
		body := struct {
			Reservations []reservation `xml:"reservationSet>item"`
			NextToken    string        `xml:"nextToken,omitempty"`
		}{Reservations: []reservation{}, NextToken: next}
		for _, e := range out {
			body.Reservations = append(body.Reservations, reservation{ID: "r-" + awsquery.Hash(17, e.InstanceID), OwnerID: api.AWSAccountID, Instances: []ec2Instance{e}})
		}
		svc.Answer(w, "DescribeInstances", body)
	}
}

// describedInstances are the instances of v a DescribeInstances call
// answers, those of ids if given, as corrupt fault f falsifies them, and
// the ids EC2 does not know.
func describedInstances(v model.EC2Instances, ids []string, f *api.Fault, asked func(api.Instance, bool) (ec2Instance, bool)) (out []ec2Instance, missing []string) {
	for _, id := range ids {
		if !slices.ContainsFunc(v.All, func(inst api.Instance) bool { return inst.ID == id }) {
			missing = append(missing, id)
		}
	}
	for _, inst := range v.All {
		if len(ids) > 0 && !slices.Contains(ids, inst.ID) {
			continue
		}
		model.CorruptInstance(f, &inst)
		if e, ok := asked(inst, v.SourceDestCheck(inst.ID)); ok {
			out = append(out, e)
		}
	}
	return out, missing
}

// instanceFail answers a change refused for an instance as EC2 does: one
// it does not know, or one terminated.
func instanceFail(w http.ResponseWriter, err error) {
	switch {
	case model.KindOf(err) == model.KindSave:
		model.SaveFailed(w, err)
	case errors.Is(err, model.ErrTerminated):
		ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "IncorrectInstanceState", "%s", err))
	case model.KindOf(err) == model.KindNotFound:
		ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidInstanceID.NotFound", "%s", err))
	case model.KindOf(err) == model.KindInvalid:
		ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidInstanceID.Malformed", "%s", err))
	default:
		ec2Fail(w, awsquery.Errorf(http.StatusInternalServerError, "InternalError", "%s", err))
	}
}

// ec2ModifyInstanceAttribute changes an instance's source/destination
// check, the one attribute the AWS CCM changes (before it routes a pod
// CIDR to the instance).
func (s *Front) ec2ModifyInstanceAttribute(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		id, check := q.Get("InstanceId"), q.Get("SourceDestCheck.Value")
		if e := q.Done(); e != nil {
			ec2Fail(w, e)
			return
		}
		on, err := strconv.ParseBool(check)
		if err != nil {
			ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidParameterCombination", "fakecloud emulates ModifyInstanceAttribute of SourceDestCheck.Value only, as true or false"))
			return
		}
		c.Instance = id
		if err := s.SetSourceDestCheck(id, on); err != nil {
			instanceFail(w, err)
			return
		}
		svc.Answer(w, "ModifyInstanceAttribute", struct {
			Return bool `xml:"return"`
		}{true})
	}
}

// ec2ChangeState answers StopInstances, StartInstances and
// TerminateInstances: every instance named changes, or none does (an
// unknown ID, or a terminated instance asked to stop or start, refuses
// the call as EC2 does). fakecloud's instances change state at once, so
// the current state answered is the one reached, not "stopping".
func (s *Front) ec2ChangeState(svc *awsquery.Endpoint, action string, to api.InstanceState) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		ids := q.List("InstanceId")
		// Flags of the real call that change nothing here.
		for _, p := range []string{"Force", "Hibernate", "SkipOsShutdown", "AdditionalInfo"} {
			_ = q.Get(p)
		}
		if q.Get("DryRun") == "true" {
			ec2Fail(w, awsquery.Errorf(http.StatusPreconditionFailed, "DryRunOperation", "Request would have succeeded, but DryRun flag is set."))
			return
		}
		if e := q.Done(); e != nil {
			ec2Fail(w, e)
			return
		}
		if len(ids) == 0 {
			ec2Fail(w, awsquery.Errorf(http.StatusBadRequest, "MissingParameter", "The request must contain the parameter InstanceId"))
			return
		}
		if len(ids) == 1 {
			c.Instance = ids[0]
		}
		type change struct {
			ID       string           `xml:"instanceId"`
			Current  ec2InstanceState `xml:"currentState"`
			Previous ec2InstanceState `xml:"previousState"`
		}
		changes, err := s.SetEC2InstanceStates(ids, to, ec2InstanceIDFormat)
		if err != nil {
			instanceFail(w, err)
			return
		}
		body := struct {
			Changes []change `xml:"instancesSet>item"`
		}{}
		for _, ch := range changes {
			body.Changes = append(body.Changes, change{ID: ch.ID, Current: ec2States[ch.Next], Previous: ec2States[ch.Previous]})
		}
		svc.Answer(w, action, body)
	}
}

// Front is EC2 over the cloud.
type Front struct{ *model.Cloud }

// New is EC2 over cloud.
func New(cloud *model.Cloud) *Front { return &Front{cloud} }
