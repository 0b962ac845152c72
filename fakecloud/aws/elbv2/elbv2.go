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
	"fmt"
	"net/http"
	"slices"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/awsquery"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/ec2"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/elb"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

const elbv2Version = "2015-12-01"

// nlbDefaultAttributes are a network load balancer's attributes as AWS
// makes it.
var nlbDefaultAttributes = map[string]string{
	"load_balancing.cross_zone.enabled": "false", "access_logs.s3.enabled": "false",
	"access_logs.s3.bucket": "", "access_logs.s3.prefix": "", "deletion_protection.enabled": "false",
}

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

// nlbArn is an ELBv2 resource's ARN.
func (s *Front) nlbArn(kind, name, id string) string {
	return fmt.Sprintf("arn:aws:elasticloadbalancing:%s:%s:%s/%s/%s", s.Region(), api.AWSAccountID, kind, name, id)
}

// nlbLocked is the network load balancer with this ARN or name, or nil.
func (s *Front) nlbLocked(ref string) *model.LBRecord {
	for _, rec := range s.St.LoadBalancers {
		if rec.NLB != nil && (rec.NLB.ARN == ref || rec.Name == ref) {
			return rec
		}
	}
	return nil
}

// nlbCommitLocked makes next rec's ELBv2 view, with what an ignore fault
// drops left as it was, and the native spec and listeners to match.
func (s *Front) nlbCommitLocked(f *api.Fault, rec *model.LBRecord, isNew bool, next *model.NetworkLB) *awsquery.Error {
	if f != nil && f.Kind == api.FaultIgnore && f.Field == api.IgnoreListeners {
		next.Listeners = nil
		if !isNew {
			next.Listeners = slices.Clone(rec.NLB.Listeners)
		}
	}
	upd := *rec
	upd.NLB = next
	spec, err := s.NetworkSpecLocked(upd.Name, next)
	if err != nil {
		return elb.Validation("%v", err)
	}
	upd.LoadBalancerSpec = spec
	if err := s.OpenLocked(&upd, isNew); err != nil {
		return awsquery.Errorf(http.StatusInternalServerError, "InternalFailure", "fakecloud could not open the listeners: %v", err)
	}
	*rec = upd
	if isNew {
		s.St.LoadBalancers = append(s.St.LoadBalancers, rec)
		s.St.LastLBIP = rec.IP
	}
	return nil
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

func (s *Front) nlbWireLocked(rec *model.LBRecord) nlbWire {
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
		s.Mu.Lock()
		defer s.Mu.Unlock()
		if e := s.elb.CheckRefsLocked(subnets, groups); e != nil {
			elb.Fail(w, e)
			return
		}
		rec := s.LBByNameLocked(name)
		if rec != nil && rec.NLB == nil {
			elb.Fail(w, awsquery.Errorf(http.StatusBadRequest, "DuplicateLoadBalancerName", "A load balancer with the same name '%s' exists, but with different settings", name))
			return
		}
		if rec == nil {
			ip, err := s.AllocateLBIPLocked()
			if err != nil {
				elb.Fail(w, awsquery.Errorf(http.StatusBadRequest, "TooManyLoadBalancers", "%v", err))
				return
			}
			rec = &model.LBRecord{Name: name, ID: s.NewLBIDLocked(), IP: ip.String(), CreatedAt: time.Now().UTC()}
			hash := awsquery.Hash(16, rec.ID)
			next := &model.NetworkLB{ARN: s.nlbArn("loadbalancer/net", name, hash), Scheme: scheme, Subnets: subnets, SecurityGroups: groups,
				DNSName: fmt.Sprintf("%s-%s.elb.%s.amazonaws.com", name, hash, s.Region()), Attributes: map[string]string{}}
			for k, v := range nlbDefaultAttributes {
				next.Attributes[k] = v
			}
			for _, t := range tags {
				next.Tags = append(next.Tags, model.Tag{Key: t["Key"], Value: t["Value"]})
			}
			if e := s.nlbCommitLocked(f, rec, true, next); e != nil {
				elb.Fail(w, e)
				return
			}
			if err := s.SaveLocked(); err != nil {
				model.SaveFailed(w, err)
				return
			}
		}
		svc.Answer(w, "CreateLoadBalancer", struct {
			LoadBalancers []nlbWire `xml:"LoadBalancers>member"`
		}{[]nlbWire{s.nlbWireLocked(rec)}})
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
		s.Mu.Lock()
		defer s.Mu.Unlock()
		body := struct {
			LoadBalancers []nlbWire `xml:"LoadBalancers>member"`
		}{}
		for _, ref := range refs {
			if s.nlbLocked(ref) == nil {
				elb.Fail(w, nlbNotFound("'"+ref+"'"))
				return
			}
		}
		for _, rec := range s.St.LoadBalancers {
			if rec.NLB != nil && (len(refs) == 0 || slices.Contains(refs, rec.Name) || slices.Contains(refs, rec.NLB.ARN)) {
				body.LoadBalancers = append(body.LoadBalancers, s.nlbWireLocked(rec))
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
		s.elb.Read(w, r, c, q, arn, func(*model.LBRecord) {
			if rec := s.nlbLocked(arn); rec != nil {
				s.CloseLBLocked(rec.ID)
				s.St.LoadBalancers = slices.DeleteFunc(s.St.LoadBalancers, func(l *model.LBRecord) bool { return l == rec })
				if err := s.SaveLocked(); err != nil {
					model.SaveFailed(w, err)
					return
				}
			}
			svc.Answer(w, "DeleteLoadBalancer", struct{}{})
		})
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
		changes := q.Structs("Attributes.member", "Key", "Value")
		s.elb.Read(w, r, c, q, arn, func(*model.LBRecord) {
			rec := s.nlbLocked(arn)
			if rec == nil {
				elb.Fail(w, nlbNotFound("'"+arn+"'"))
				return
			}
			for _, a := range changes {
				rec.NLB.Attributes[a["Key"]] = a["Value"]
			}
			if modify {
				if err := s.SaveLocked(); err != nil {
					model.SaveFailed(w, err)
					return
				}
			}
			body := struct {
				Attributes []nlbAttribute `xml:"Attributes>member"`
			}{}
			for _, k := range awsquery.SortedKeys(rec.NLB.Attributes) {
				body.Attributes = append(body.Attributes, nlbAttribute{k, rec.NLB.Attributes[k]})
			}
			svc.Answer(w, action, body)
		})
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
