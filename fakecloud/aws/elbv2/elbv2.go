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

// Package elbv2 is fakecloud's Elastic Load Balancing v2, a front over
// package model speaking the AWS query protocol (package awsquery).
//
// Elastic Load Balancing v2, API version 2015-12-01, for Network Load
// Balancers: a network load balancer is one of fakecloud's, with real
// TCP and UDP listeners on its address. Target groups are resources of
// their own, as in ELBv2; a listener forwards to one. The native spec is
// derived from the load balancer, its listeners' target groups and the
// nodes' security group on every change: a listener's node port is its
// target group's targets' port, the backends the targets, the health
// check node port an HTTP health check's port, the source ranges the
// nodes' group's rules the AWS CCM describes as the load balancer's
// clients (kubernetes.io/rule/nlb/client=<name>).
//
// Its files: elbv2.go (load balancers), listeners.go and targets.go
// (target groups and their targets). What it shares with the classic API
// it takes from package elb, and the VPC's subnets from package ec2.
package elbv2

import (
	"errors"
	"net/http"
	"slices"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/awsquery"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/ec2"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/elb"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

const elbv2Version = "2015-12-01"

// Endpoint is the service's endpoint, with its actions.
func (s *Front) Endpoint() *awsquery.Endpoint {
	svc := &awsquery.Endpoint{Service: awsquery.Service{
		Path:       api.AWSPath + "elbv2/",
		Signing:    "elasticloadbalancing",
		Version:    elbv2Version,
		XMLNS:      "http://elasticloadbalancing.amazonaws.com/doc/" + elbv2Version + "/",
		ErrorShape: awsquery.ELBErrorXML,
	}}
	svc.Actions = map[string]awsquery.Action{
		"DescribeLoadBalancers":          {Op: api.OpListLoadBalancers, H: s.nlbDescribe(svc)},
		"CreateLoadBalancer":             {Op: api.OpEnsureLoadBalancer, H: s.nlbCreate(svc)},
		"DeleteLoadBalancer":             {Op: api.OpDeleteLoadBalancer, H: s.nlbDelete(svc)},
		"DescribeLoadBalancerAttributes": {Op: api.OpGetLoadBalancer, H: s.nlbAttributes(svc, false)},
		"ModifyLoadBalancerAttributes":   {Op: api.OpEnsureLoadBalancer, H: s.nlbAttributes(svc, true)},
		"DescribeListeners":              {Op: api.OpGetLoadBalancer, H: s.nlbDescribeListeners(svc)},
		"CreateListener":                 {Op: api.OpEnsureLoadBalancer, H: s.nlbListenerChange(svc, "CreateListener")},
		"ModifyListener":                 {Op: api.OpEnsureLoadBalancer, H: s.nlbListenerChange(svc, "ModifyListener")},
		"DeleteListener":                 {Op: api.OpEnsureLoadBalancer, H: s.nlbListenerChange(svc, "DeleteListener")},
		"DescribeTargetGroups":           {Op: api.OpGetLoadBalancer, H: s.nlbDescribeTargetGroups(svc)},
		"CreateTargetGroup":              {Op: api.OpEnsureLoadBalancer, H: s.nlbCreateTargetGroup(svc)},
		"ModifyTargetGroup":              {Op: api.OpEnsureLoadBalancer, H: s.nlbTargetGroupChange(svc, "ModifyTargetGroup")},
		"DeleteTargetGroup":              {Op: api.OpEnsureLoadBalancer, H: s.nlbTargetGroupChange(svc, "DeleteTargetGroup")},
		"RegisterTargets":                {Op: api.OpEnsureLoadBalancer, H: s.nlbTargetGroupChange(svc, "RegisterTargets")},
		"DeregisterTargets":              {Op: api.OpEnsureLoadBalancer, H: s.nlbTargetGroupChange(svc, "DeregisterTargets")},
		"DescribeTargetHealth":           {Op: api.OpGetLoadBalancer, H: s.nlbDescribeTargetHealth(svc)},
		"DescribeTags":                   {Op: api.OpGetLoadBalancer, H: s.nlbDescribeTags(svc)},
	}
	return svc
}

func nlbNotFound(what string) *awsquery.Error {
	return awsquery.Errorf(http.StatusBadRequest, "LoadBalancerNotFound", "One or more load balancers not found: %s", what)
}

func tgNotFound(arn string) *awsquery.Error {
	return awsquery.Errorf(http.StatusBadRequest, "TargetGroupNotFound", "One or more target groups not found: '%s'", arn)
}

// nlbWire is a network load balancer as DescribeLoadBalancers and
// CreateLoadBalancer answer it.
type nlbWire struct {
	LoadBalancerArn       string
	LoadBalancerName      string
	DNSName               string
	CanonicalHostedZoneID string `xml:"CanonicalHostedZoneId"`
	CreatedTime           string
	Scheme                string
	Type                  string
	State                 struct{ Code string }
	VpcID                 string `xml:"VpcId"`
	IPAddressType         string `xml:"IpAddressType"`
	AvailabilityZones     []struct {
		ZoneName string
		SubnetID string `xml:"SubnetId"`
	} `xml:"AvailabilityZones>member"`
	SecurityGroups []string `xml:"SecurityGroups>member"`
}

func (s *Front) nlbWire(rec model.NetworkLBView) nlbWire {
	n := rec.NLB
	w := nlbWire{LoadBalancerArn: n.ARN, LoadBalancerName: rec.Name, DNSName: n.DNSName, CanonicalHostedZoneID: "Z26RNL4JYFTOTI",
		CreatedTime: rec.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z"), Scheme: n.Scheme, Type: "network",
		VpcID: api.AWSVPCID, IPAddressType: "ipv4", SecurityGroups: n.SecurityGroups}
	w.State.Code = "active"
	for _, sn := range ec2.New(s.Cloud).Subnets() {
		if slices.Contains(n.Subnets, sn.ID) {
			w.AvailabilityZones = append(w.AvailabilityZones, struct {
				ZoneName string
				SubnetID string `xml:"SubnetId"`
			}{sn.Zone, sn.ID})
		}
	}
	return w
}

func (s *Front) nlbCreate(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		name, typ, scheme := q.Get("Name"), q.Get("Type"), q.Get("Scheme")
		_, _ = q.Get("IpAddressType"), q.Get("SecurityGroups")
		subnets := q.List("Subnets.member")
		for _, m := range q.Structs("SubnetMappings.member", "SubnetId") {
			subnets = append(subnets, m["SubnetId"])
		}
		groups := q.List("SecurityGroups.member")
		tags := q.Structs("Tags.member", "Key", "Value")
		e := q.Done()
		switch {
		case e != nil:
		case !elb.ValidName(name):
			e = elb.Validation("Name %q must be 1 to 32 letters, digits and hyphens, not starting with a hyphen", name)
		case typ != "network":
			e = elb.Validation("fakecloud emulates load balancers of Type network only, not %q", typ)
		case len(subnets) == 0:
			e = elb.Validation("At least one subnet must be specified")
		case scheme != "" && scheme != "internal" && scheme != "internet-facing":
			e = elb.Validation("Invalid scheme '%s'", scheme)
		}
		if e != nil {
			elb.Fail(w, e)
			return
		}
		if scheme == "" {
			scheme = "internet-facing"
		}
		f, ok := s.elb.Fault(w, r, c, name)
		if !ok {
			return
		}
		if e := s.elb.CheckSubnets(subnets); e != nil {
			elb.Fail(w, e)
			return
		}
		req := model.NetworkLBRequest{Name: name, Scheme: scheme, Subnets: subnets, SecurityGroups: groups}
		for _, t := range tags {
			req.Tags = append(req.Tags, model.Tag{Key: t["Key"], Value: t["Value"]})
		}
		rec, err := s.CreateNetworkLB(req, f)
		if errors.Is(err, model.ErrPoolExhausted) {
			elb.Fail(w, awsquery.Errorf(http.StatusBadRequest, "TooManyLoadBalancers", "%s", err))
			return
		}
		if err != nil {
			elb.FailModel(w, err)
			return
		}
		svc.Answer(w, "CreateLoadBalancer", struct {
			LoadBalancers []nlbWire `xml:"LoadBalancers>member"`
		}{[]nlbWire{s.nlbWire(rec)}})
	}
}

func (s *Front) nlbDescribe(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		refs := append(q.List("Names.member"), q.List("LoadBalancerArns.member")...)
		_, _ = q.Get("Marker"), q.Get("PageSize")
		if e := q.Done(); e != nil {
			elb.Fail(w, e)
			return
		}
		name := ""
		if len(refs) == 1 {
			c.Op, name = api.OpGetLoadBalancer, refs[0]
		}
		if _, ok := s.elb.Fault(w, r, c, name); !ok {
			return
		}
		v := s.ELBv2()
		body := struct {
			LoadBalancers []nlbWire `xml:"LoadBalancers>member"`
		}{}
		for _, ref := range refs {
			if _, ok := v.LB(ref); !ok {
				elb.Fail(w, nlbNotFound("'"+ref+"'"))
				return
			}
		}
		for _, rec := range v.LBs {
			if len(refs) == 0 || slices.Contains(refs, rec.Name) || slices.Contains(refs, rec.NLB.ARN) {
				body.LoadBalancers = append(body.LoadBalancers, s.nlbWire(rec))
			}
		}
		svc.Answer(w, "DescribeLoadBalancers", body)
	}
}

// nlbDelete deletes a network load balancer and its listeners; its
// target groups stay, as in ELBv2. One that does not exist is deleted
// already.
func (s *Front) nlbDelete(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		arn := q.Get("LoadBalancerArn")
		if !s.elb.Admit(w, r, c, q, arn) {
			return
		}
		if err := s.DeleteNetworkLB(arn); err != nil {
			elb.FailModel(w, err)
			return
		}
		svc.Answer(w, "DeleteLoadBalancer", struct{}{})
	}
}

type nlbAttribute struct{ Key, Value string }

func (s *Front) nlbAttributes(svc *awsquery.Endpoint, modify bool) awsquery.Handler {
	action := "DescribeLoadBalancerAttributes"
	if modify {
		action = "ModifyLoadBalancerAttributes"
	}
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		arn := q.Get("LoadBalancerArn")
		var changes []model.NetworkAttribute
		for _, a := range q.Structs("Attributes.member", "Key", "Value") {
			changes = append(changes, model.NetworkAttribute{Key: a["Key"], Value: a["Value"]})
		}
		if !s.elb.Admit(w, r, c, q, arn) {
			return
		}
		attrs, err := s.SetNetworkLBAttributes(arn, changes, modify)
		if err != nil {
			elb.FailModel(w, err)
			return
		}
		body := struct {
			Attributes []nlbAttribute `xml:"Attributes>member"`
		}{}
		for _, k := range awsquery.SortedKeys(attrs) {
			body.Attributes = append(body.Attributes, nlbAttribute{k, attrs[k]})
		}
		svc.Answer(w, action, body)
	}
}

// Front is Elastic Load Balancing v2 over the cloud.
type Front struct {
	*model.Cloud
	// elb is the classic API, whose errors, names, fault handling and
	// reads v2 shares.
	elb *elb.Front
}

// New is Elastic Load Balancing v2 over cloud.
func New(cloud *model.Cloud) *Front { return &Front{Cloud: cloud, elb: elb.New(cloud)} }
