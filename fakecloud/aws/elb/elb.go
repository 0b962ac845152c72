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

// Package elb is fakecloud's classic Elastic Load Balancing, a front over
// package model speaking the AWS query protocol (package awsquery).
//
// Elastic Load Balancing, classic load balancers, API version 2012-06-01:
// a classic load balancer is one of fakecloud's, with its real listeners on
// its address, whose DNS name (what the AWS CCM puts in a Service's
// ingress) stands for that address. Its classic view (listeners, health
// check, registered instances, subnets, security groups, attributes,
// tags) is kept beside the native spec, which is derived from it on every
// change, and from its security groups' rules when those change: a
// listener's node port is its instance port, the backends its registered
// instances, the health check node port the port of an HTTP health
// check's target, the source ranges its groups' CIDR rules. So the
// inspector, the data plane and the faults work on classic load balancers
// as on native ones.
//
// Its files: elb.go (the service, creation and changes), changes.go (each
// change action) and describe.go (reads and deletion). Its errors, names,
// fault handling and reads are Elastic Load Balancing's whichever version,
// so package elbv2 takes them from here (Fail, Validation, ValidName,
// Front.Fault, Front.Read, Front.CheckRefsLocked).
package elb

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/awsquery"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/ec2"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

const elbVersion = "2012-06-01"

// Endpoint is the service's endpoint, with its actions.
func (s *Front) Endpoint() *awsquery.Endpoint {
	svc := &awsquery.Endpoint{Service: awsquery.Service{
		Path:       api.AWSPath + "elb/",
		Signing:    "elasticloadbalancing",
		Version:    elbVersion,
		XMLNS:      "http://elasticloadbalancing.amazonaws.com/doc/" + elbVersion + "/",
		ErrorShape: awsquery.ELBErrorXML,
	}}
	change := func(action string, apply func(q *awsquery.Query, rec *model.LBRecord, next *model.ClassicLB) (any, *awsquery.Error)) awsquery.Action {
		return awsquery.Action{Op: api.OpEnsureLoadBalancer, H: s.elbChange(svc, action, apply)}
	}
	svc.Actions = map[string]awsquery.Action{
		"DescribeLoadBalancers":               {Op: api.OpListLoadBalancers, H: s.elbDescribe(svc)},
		"CreateLoadBalancer":                  {Op: api.OpEnsureLoadBalancer, H: s.elbCreate(svc)},
		"DeleteLoadBalancer":                  {Op: api.OpDeleteLoadBalancer, H: s.elbDelete(svc)},
		"DescribeLoadBalancerAttributes":      {Op: api.OpGetLoadBalancer, H: s.elbDescribeAttributes(svc)},
		"DescribeTags":                        {Op: api.OpGetLoadBalancer, H: s.elbDescribeTags(svc)},
		"CreateLoadBalancerListeners":         change("CreateLoadBalancerListeners", elbCreateListeners),
		"DeleteLoadBalancerListeners":         change("DeleteLoadBalancerListeners", elbDeleteListeners),
		"ConfigureHealthCheck":                change("ConfigureHealthCheck", elbConfigureHealthCheck),
		"RegisterInstancesWithLoadBalancer":   change("RegisterInstancesWithLoadBalancer", s.elbInstances(true)),
		"DeregisterInstancesFromLoadBalancer": change("DeregisterInstancesFromLoadBalancer", s.elbInstances(false)),
		"ModifyLoadBalancerAttributes":        change("ModifyLoadBalancerAttributes", elbModifyAttributes),
		"AddTags":                             change("AddTags", elbAddTags),
		"ApplySecurityGroupsToLoadBalancer":   change("ApplySecurityGroupsToLoadBalancer", s.elbApplySecurityGroups),
		"AttachLoadBalancerToSubnets":         change("AttachLoadBalancerToSubnets", s.elbSubnets(true)),
		"DetachLoadBalancerFromSubnets":       change("DetachLoadBalancerFromSubnets", s.elbSubnets(false)),
	}
	return svc
}

// Fail writes e in Elastic Load Balancing's error shape, v1's and v2's alike.
func Fail(w http.ResponseWriter, e *awsquery.Error) {
	awsquery.ELBErrorXML(w, e.Status, e.Code, e.Msg, awsquery.RequestID())
}

func elbNotFound(name string) *awsquery.Error {
	return awsquery.Errorf(http.StatusBadRequest, "LoadBalancerNotFound", "There is no ACTIVE Load Balancer named '%s'", name)
}

// Validation is Elastic Load Balancing's error for a bad parameter.
func Validation(format string, args ...any) *awsquery.Error {
	return awsquery.Errorf(http.StatusBadRequest, "ValidationError", format, args...)
}

// elbLocked is the classic load balancer called name, or nil.
func (s *Front) elbLocked(name string) *model.LBRecord {
	rec := s.LBByNameLocked(name)
	if rec == nil || rec.ELB == nil {
		return nil
	}
	return rec
}

// elbDNSName is a classic load balancer's DNS name, as AWS forms it: an
// internal one's starts with "internal-".
func (s *Front) elbDNSName(name, id, scheme string) string {
	n := 0
	for _, b := range []byte(awsquery.Hash(8, id)) {
		n = n*16 + strings.IndexByte("0123456789abcdef", b)
	}
	prefix := ""
	if scheme == "internal" {
		prefix = "internal-"
	}
	return fmt.Sprintf("%s%s-%d.%s.elb.amazonaws.com", prefix, name, n%2000000000, s.Region())
}

// elbListeners reads Listeners.member.N.
func elbListeners(q *awsquery.Query) ([]model.ClassicListener, *awsquery.Error) {
	_ = q.Get("Listeners") // an empty list is sent as "Listeners="
	var out []model.ClassicListener
	for i, m := range q.Structs("Listeners.member", "Protocol", "LoadBalancerPort", "InstanceProtocol", "InstancePort", "SSLCertificateId") {
		l := model.ClassicListener{Protocol: strings.ToUpper(m["Protocol"]), InstanceProtocol: strings.ToUpper(m["InstanceProtocol"]), SSLCertificateID: m["SSLCertificateId"]}
		if l.InstanceProtocol == "" {
			l.InstanceProtocol = l.Protocol
		}
		for f, dst := range map[string]*int32{"LoadBalancerPort": &l.LoadBalancerPort, "InstancePort": &l.InstancePort} {
			n, err := strconv.ParseInt(m[f], 10, 32)
			if err != nil {
				return nil, Validation("Listeners.member.%d.%s %q is not a number", i+1, f, m[f])
			}
			*dst = int32(n)
		}
		if e := validateELBListener(l); e != nil {
			return nil, e
		}
		out = append(out, l)
	}
	return out, nil
}

// validateELBListener refuses what classic load balancers refuse.
func validateELBListener(l model.ClassicListener) *awsquery.Error {
	switch l.Protocol {
	case "TCP", "SSL", "HTTP", "HTTPS":
	default:
		return Validation("Invalid protocol '%s': a classic load balancer's listener is TCP, SSL, HTTP or HTTPS", l.Protocol)
	}
	p := l.LoadBalancerPort
	if !(p == 25 || p == 80 || p == 443 || p == 465 || p == 587 || (p >= 1024 && p <= 65535)) {
		return Validation("LoadBalancerPort must be either 25, 80, 443, 465, 587, or 1024 to 65535 inclusive (was %d)", p)
	}
	if l.InstancePort < 1 || l.InstancePort > 65535 {
		return Validation("InstancePort must be between 1 and 65535 (was %d)", l.InstancePort)
	}
	return nil
}

// elbIgnore undoes, in next, the part of a change an ignore fault drops.
func elbIgnore(f *api.Fault, before, next *model.ClassicLB) {
	if f == nil || f.Kind != api.FaultIgnore {
		return
	}
	if before == nil {
		before = &model.ClassicLB{}
	}
	switch f.Field {
	case api.IgnoreListeners:
		next.Listeners = slices.Clone(before.Listeners)
	case api.IgnoreBackends:
		next.Instances = slices.Clone(before.Instances)
	case api.IgnoreHealthCheck:
		next.HealthCheck = before.HealthCheck
	}
}

// elbCommitLocked makes next rec's classic view, with what an ignore
// fault drops left as it was, and the native spec and listeners to match.
func (s *Front) elbCommitLocked(f *api.Fault, rec *model.LBRecord, isNew bool, next *model.ClassicLB) *awsquery.Error {
	var before *model.ClassicLB
	if !isNew {
		before = rec.ELB
	}
	elbIgnore(f, before, next)
	upd := *rec
	upd.ELB = next
	spec, err := s.ClassicSpecLocked(next)
	if err != nil {
		return Validation("%v", err)
	}
	upd.LoadBalancerSpec = spec
	if err := s.OpenLocked(&upd, isNew); err != nil {
		return awsquery.Errorf(http.StatusInternalServerError, "InternalFailure", "fakecloud could not open the listeners: %v", err)
	}
	if isNew {
		upd.ELB.DNSName = s.elbDNSName(upd.Name, upd.ID, upd.ELB.Scheme)
	}
	*rec = upd
	if isNew {
		s.St.LoadBalancers = append(s.St.LoadBalancers, rec)
		s.St.LastLBIP = rec.IP
	}
	return nil
}

// Fault applies the faults of the call's operation about the load
// balancer called name.
func (s *Front) Fault(w http.ResponseWriter, r *http.Request, c *model.Call, name string) (*api.Fault, bool) {
	c.Instance = name
	return s.ApplyFault(w, r, c, c.Op, func(ref string) bool {
		lb := s.LBByRefLocked(ref)
		return ref == name || (lb != nil && lb.Name == name)
	})
}

func (s *Front) elbCreate(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		name, scheme := q.Get("LoadBalancerName"), q.Get("Scheme")
		listeners, e := elbListeners(q)
		subnets, groups, zones := q.List("Subnets.member"), q.List("SecurityGroups.member"), q.List("AvailabilityZones.member")
		_, _, _ = q.Get("Subnets"), q.Get("SecurityGroups"), q.Get("AvailabilityZones")
		tags := q.Structs("Tags.member", "Key", "Value")
		if e == nil {
			e = q.Done()
		}
		switch {
		case e != nil:
		case !ValidName(name):
			e = Validation("LoadBalancerName %q must be 1 to 32 letters, digits and hyphens, not starting with a hyphen", name)
		case len(listeners) == 0:
			// What AWS answers an empty Listeners=, as the AWS CCM sends for
			// a Service without node ports.
			e = Validation("1 validation error detected: Value null at 'listeners' failed to satisfy constraint: Member must not be null")
		case len(zones) > 0:
			e = Validation("fakecloud's load balancers are in a VPC: give Subnets, not AvailabilityZones")
		case len(subnets) == 0:
			e = Validation("Subnets must be given for a load balancer in a VPC")
		case scheme != "" && scheme != "internal" && scheme != "internet-facing":
			e = Validation("Invalid scheme '%s'", scheme)
		}
		if e != nil {
			Fail(w, e)
			return
		}
		if scheme == "" {
			scheme = "internet-facing"
		}
		f, ok := s.Fault(w, r, c, name)
		if !ok {
			return
		}
		s.Mu.Lock()
		defer s.Mu.Unlock()
		if e := s.CheckRefsLocked(subnets, groups); e != nil {
			Fail(w, e)
			return
		}
		next := &model.ClassicLB{Scheme: scheme, Subnets: subnets, SecurityGroups: groups, Listeners: listeners,
			HealthCheck: model.ClassicHealthCheck{Target: fmt.Sprintf("TCP:%d", listeners[0].InstancePort), Interval: 30, Timeout: 5, UnhealthyThreshold: 2, HealthyThreshold: 10}}
		next.Attributes.ConnectionDraining.Timeout, next.Attributes.ConnectionSettings.IdleTimeout = 300, 60
		for _, t := range tags {
			next.Tags = append(next.Tags, model.Tag{Key: t["Key"], Value: t["Value"]})
		}
		rec := s.LBByNameLocked(name)
		switch {
		case rec != nil && rec.ELB == nil:
			Fail(w, awsquery.Errorf(http.StatusBadRequest, "DuplicateLoadBalancerName", "A load balancer of another kind is named '%s'", name))
			return
		case rec != nil:
			// CreateLoadBalancer of one that exists with the same
			// listeners answers it; with others, AWS refuses.
			if !slices.Equal(rec.ELB.Listeners, listeners) {
				Fail(w, awsquery.Errorf(http.StatusBadRequest, "DuplicateLoadBalancerName", "Load balancer %s already exists with different listeners", name))
				return
			}
		default:
			ip, err := s.AllocateLBIPLocked()
			if err != nil {
				Fail(w, awsquery.Errorf(http.StatusConflict, "TooManyLoadBalancers", "%v", err))
				return
			}
			rec = &model.LBRecord{Name: name, ID: s.NewLBIDLocked(), IP: ip.String(), CreatedAt: time.Now().UTC()}
			if e := s.elbCommitLocked(f, rec, true, next); e != nil {
				Fail(w, e)
				return
			}
			if err := s.SaveLocked(); err != nil {
				model.SaveFailed(w, err)
				return
			}
		}
		svc.Answer(w, "CreateLoadBalancer", struct {
			DNSName string `xml:"DNSName"`
		}{rec.ELB.DNSName})
	}
}

// ValidName reports whether name is a load balancer's name as Elastic Load
// Balancing allows: 1 to 32 letters, digits and hyphens, not starting with
// a hyphen.
func ValidName(name string) bool {
	return name != "" && len(name) <= 32 && !strings.HasPrefix(name, "-") &&
		strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == ""
}

// CheckRefsLocked refuses subnets and security groups that do not
// exist, as AWS does.
func (s *Front) CheckRefsLocked(subnets, groups []string) *awsquery.Error {
	known := ec2.New(s.Cloud).Subnets()
	for _, id := range subnets {
		if !slices.ContainsFunc(known, func(sn ec2.Subnet) bool { return sn.ID == id }) {
			return awsquery.Errorf(http.StatusBadRequest, "SubnetNotFound", "One or more subnets ('%s') were not found", id)
		}
	}
	for _, id := range groups {
		if s.SecurityGroupLocked(id) == nil {
			return awsquery.Errorf(http.StatusBadRequest, "InvalidSecurityGroup", "One or more security groups ('%s') are invalid", id)
		}
	}
	return nil
}

// elbChange is an action that changes one classic load balancer, named by
// LoadBalancerName: apply reads the rest and changes next, a copy.
func (s *Front) elbChange(svc *awsquery.Endpoint, action string, apply func(q *awsquery.Query, rec *model.LBRecord, next *model.ClassicLB) (any, *awsquery.Error)) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		name := q.Get("LoadBalancerName")
		if name == "" {
			names := q.List("LoadBalancerNames.member")
			if len(names) == 1 {
				name = names[0]
			}
		}
		f, ok := s.Fault(w, r, c, name)
		if !ok {
			return
		}
		s.Mu.Lock()
		defer s.Mu.Unlock()
		rec := s.elbLocked(name)
		if rec == nil {
			// The rest is read for the unknown-parameter check only.
			_, _ = apply(q, &model.LBRecord{}, &model.ClassicLB{})
			Fail(w, elbNotFound(name))
			return
		}
		next := rec.ELB.Clone()
		body, e := apply(q, rec, next)
		if e == nil {
			e = q.Done()
		}
		if e == nil {
			e = s.elbCommitLocked(f, rec, false, next)
		}
		if e != nil {
			Fail(w, e)
			return
		}
		if err := s.SaveLocked(); err != nil {
			model.SaveFailed(w, err)
			return
		}
		svc.Answer(w, action, body)
	}
}

// Front is classic Elastic Load Balancing over the cloud.
type Front struct{ *model.Cloud }

// New is classic Elastic Load Balancing over cloud.
func New(cloud *model.Cloud) *Front { return &Front{cloud} }
