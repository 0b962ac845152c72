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
// FailModel, Front.Fault, Front.Admit, Front.CheckSubnets).
package elb

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

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
	change := func(action string, apply classicChange) awsquery.Action {
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
		"RegisterInstancesWithLoadBalancer":   change("RegisterInstancesWithLoadBalancer", elbInstances(true)),
		"DeregisterInstancesFromLoadBalancer": change("DeregisterInstancesFromLoadBalancer", elbInstances(false)),
		"ModifyLoadBalancerAttributes":        change("ModifyLoadBalancerAttributes", elbModifyAttributes),
		"AddTags":                             change("AddTags", elbAddTags),
		"ApplySecurityGroupsToLoadBalancer":   change("ApplySecurityGroupsToLoadBalancer", elbApplySecurityGroups),
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

// FailModel answers err, a model operation's failure or a change's own
// error, as Elastic Load Balancing does, v1 and v2 alike.
func FailModel(w http.ResponseWriter, err error) {
	var e *awsquery.Error
	switch {
	case errors.As(err, &e):
		Fail(w, e)
	case model.KindOf(err) == model.KindSave:
		model.SaveFailed(w, err)
	default:
		Fail(w, modelError(err))
	}
}

// modelCodes are Elastic Load Balancing's codes for the model's failures.
var modelCodes = []struct {
	cause  error
	status int
	code   string
}{
	{model.ErrNoSuchLB, http.StatusBadRequest, "LoadBalancerNotFound"},
	{model.ErrNoSuchGroup, http.StatusBadRequest, "InvalidSecurityGroup"},
	{model.ErrNameTaken, http.StatusBadRequest, "DuplicateLoadBalancerName"},
	{model.ErrPoolExhausted, http.StatusConflict, "TooManyLoadBalancers"},
	{model.ErrNoSuchTargetGroup, http.StatusBadRequest, "TargetGroupNotFound"},
	{model.ErrTargetGroupTaken, http.StatusBadRequest, "DuplicateTargetGroupName"},
	{model.ErrTargetGroupInUse, http.StatusBadRequest, "ResourceInUse"},
	{model.ErrNoSuchListener, http.StatusBadRequest, "ListenerNotFound"},
	{model.ErrListenerTaken, http.StatusBadRequest, "DuplicateListener"},
	{model.ErrNoSuchInstance, http.StatusBadRequest, "InvalidTarget"},
}

func modelError(err error) *awsquery.Error {
	for _, c := range modelCodes {
		if errors.Is(err, c.cause) {
			return awsquery.Errorf(c.status, c.code, "%s", err)
		}
	}
	if model.KindOf(err) == model.KindInvalid {
		return Validation("%v", err)
	}
	// What is left is the data plane's: the listeners did not open.
	return awsquery.Errorf(http.StatusInternalServerError, "InternalFailure", "fakecloud could not open the listeners: %v", err)
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
	// Any port, as in a VPC, where every load balancer here is: the list
	// of 25, 80, 443, 465, 587 and 1024-65535 was EC2-Classic's (retired
	// in 2022; the API reference's Listener names both).
	if p := l.LoadBalancerPort; p < 1 || p > 65535 {
		return Validation("LoadBalancerPort must be between 1 and 65535 (was %d)", p)
	}
	if l.InstancePort < 1 || l.InstancePort > 65535 {
		return Validation("InstancePort must be between 1 and 65535 (was %d)", l.InstancePort)
	}
	return nil
}

// Fault applies the faults of the call's operation about the load
// balancer called name.
func (s *Front) Fault(w http.ResponseWriter, r *http.Request, c *model.Call, name string) (*api.Fault, bool) {
	c.Instance = name
	return s.ApplyFault(w, r, c, c.Op, s.AboutELB(name))
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
		if e := s.CheckSubnets(subnets); e != nil {
			Fail(w, e)
			return
		}
		next := model.ClassicLB{Scheme: scheme, Subnets: subnets, SecurityGroups: groups, Listeners: listeners,
			HealthCheck: model.ClassicHealthCheck{Target: fmt.Sprintf("TCP:%d", listeners[0].InstancePort), Interval: 30, Timeout: 5, UnhealthyThreshold: 2, HealthyThreshold: 10}}
		next.Attributes.ConnectionDraining.Timeout, next.Attributes.ConnectionSettings.IdleTimeout = 300, 60
		for _, t := range tags {
			next.Tags = append(next.Tags, model.Tag{Key: t["Key"], Value: t["Value"]})
		}
		// CreateLoadBalancer of one that exists with the same listeners
		// answers it; with others, AWS refuses.
		dnsName, err := s.CreateClassicLB(name, next, f)
		if err != nil {
			FailModel(w, err)
			return
		}
		svc.Answer(w, "CreateLoadBalancer", struct {
			DNSName string `xml:"DNSName"`
		}{dnsName})
	}
}

// ValidName reports whether name is a load balancer's name as Elastic Load
// Balancing allows: 1 to 32 letters, digits and hyphens, not starting with
// a hyphen.
func ValidName(name string) bool {
	return name != "" && len(name) <= 32 && !strings.HasPrefix(name, "-") &&
		strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == ""
}

// CheckSubnets refuses subnets that do not exist, as AWS does.
func (s *Front) CheckSubnets(subnets []string) *awsquery.Error {
	known := ec2.New(s.Cloud).Subnets()
	for _, id := range subnets {
		if !slices.ContainsFunc(known, func(sn ec2.Subnet) bool { return sn.ID == id }) {
			return awsquery.Errorf(http.StatusBadRequest, "SubnetNotFound", "One or more subnets ('%s') were not found", id)
		}
	}
	return nil
}

// groupsFail is Elastic Load Balancing's error for security groups that
// do not exist.
func groupsFail(err error) *awsquery.Error {
	if err == nil {
		return nil
	}
	return modelError(err)
}

// classicChange reads the rest of an action that changes one classic load
// balancer and makes the change to ch.Next, a copy; it answers the body of
// the action's answer.
type classicChange func(q *awsquery.Query, ch *model.ClassicChange) (any, *awsquery.Error)

// elbChange is an action that changes one classic load balancer, named by
// LoadBalancerName: apply reads the rest and changes a copy.
func (s *Front) elbChange(svc *awsquery.Endpoint, action string, apply classicChange) awsquery.Handler {
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
		var body any
		err := s.ChangeClassicLB(name, f, func(ch *model.ClassicChange) error {
			b, e := apply(q, ch)
			if e == nil {
				e = q.Done()
			}
			if e != nil {
				return e
			}
			body = b
			return nil
		})
		if err != nil {
			FailModel(w, err)
			return
		}
		svc.Answer(w, action, body)
	}
}

// Front is classic Elastic Load Balancing over the cloud.
type Front struct{ *model.Cloud }

// New is classic Elastic Load Balancing over cloud.
func New(cloud *model.Cloud) *Front { return &Front{cloud} }
