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

package elbv2

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/awsquery"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/elb"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

// tgWire is a target group as ELBv2 answers it.
type tgWire struct {
	TargetGroupArn             string
	TargetGroupName            string
	Protocol                   string
	Port                       int32
	VpcID                      string `xml:"VpcId"`
	TargetType                 string
	HealthCheckEnabled         bool
	HealthCheckProtocol        string
	HealthCheckPort            string
	HealthCheckPath            string `xml:",omitempty"`
	HealthCheckIntervalSeconds int
	HealthCheckTimeoutSeconds  int
	HealthyThresholdCount      int
	UnhealthyThresholdCount    int
	LoadBalancerArns           []string `xml:"LoadBalancerArns>member"`
}

func tgWireOf(tg model.TargetGroupView) tgWire {
	return tgWire{TargetGroupArn: tg.ARN, TargetGroupName: tg.Name, Protocol: tg.Protocol, Port: tg.Port, VpcID: api.AWSVPCID,
		TargetType: tg.TargetType, HealthCheckEnabled: true, HealthCheckProtocol: tg.HealthCheck.Protocol, HealthCheckPort: tg.HealthCheck.Port,
		HealthCheckPath: tg.HealthCheck.Path, HealthCheckIntervalSeconds: tg.HealthCheck.Interval, HealthCheckTimeoutSeconds: tg.HealthCheck.Timeout,
		HealthyThresholdCount: tg.HealthCheck.Healthy, UnhealthyThresholdCount: tg.HealthCheck.Unhealthy, LoadBalancerArns: tg.Users}
}

// tgAnswer is the answer of an action that answers one target group.
func tgAnswer(tg model.TargetGroupView) any {
	return struct {
		TargetGroups []tgWire `xml:"TargetGroups>member"`
	}{[]tgWire{tgWireOf(tg)}}
}

func (s *Front) nlbDescribeTargetGroups(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		lbArn := q.Get("LoadBalancerArn")
		arns, names := q.List("TargetGroupArns.member"), q.List("Names.member")
		_, _ = q.Get("Marker"), q.Get("PageSize")
		if !s.elb.Admit(w, r, c, q, lbArn) {
			return
		}
		v := s.ELBv2()
		if _, ok := v.LB(lbArn); lbArn != "" && !ok {
			elb.Fail(w, nlbNotFound("'"+lbArn+"'"))
			return
		}
		for _, arn := range arns {
			if _, ok := v.TargetGroup(arn); !ok {
				elb.Fail(w, tgNotFound(arn))
				return
			}
		}
		body := struct {
			TargetGroups []tgWire `xml:"TargetGroups>member"`
		}{}
		for _, tg := range v.TargetGroups {
			if (lbArn != "" && !slices.Contains(tg.Users, lbArn)) || (len(arns) > 0 && !slices.Contains(arns, tg.ARN)) ||
				(len(names) > 0 && !slices.Contains(names, tg.Name)) {
				continue
			}
			body.TargetGroups = append(body.TargetGroups, tgWireOf(tg))
		}
		svc.Answer(w, "DescribeTargetGroups", body)
	}
}

// healthCheckArgs reads a target group's health check settings into hc.
func healthCheckArgs(q *awsquery.Query, hc *model.TargetHealthCheck) *awsquery.Error {
	for k, dst := range map[string]*string{"HealthCheckProtocol": &hc.Protocol, "HealthCheckPort": &hc.Port, "HealthCheckPath": &hc.Path} {
		if q.Has(k) {
			*dst = q.Get(k)
		}
	}
	for k, dst := range map[string]*int{"HealthCheckIntervalSeconds": &hc.Interval, "HealthCheckTimeoutSeconds": &hc.Timeout,
		"HealthyThresholdCount": &hc.Healthy, "UnhealthyThresholdCount": &hc.Unhealthy} {
		if q.Has(k) {
			n, err := strconv.Atoi(q.Get(k))
			if err != nil {
				return elb.Validation("%s must be a number", k)
			}
			*dst = n
		}
	}
	_ = q.Get("HealthCheckEnabled")
	switch hc.Protocol {
	case "TCP", "HTTP", "HTTPS":
	default:
		return elb.Validation("Health check protocol '%s' is not TCP, HTTP or HTTPS", hc.Protocol)
	}
	if hc.Port != "traffic-port" {
		if n, err := strconv.Atoi(hc.Port); err != nil || n < 1 || n > 65535 {
			return elb.Validation("Health check port '%s' is not traffic-port or 1 to 65535", hc.Port)
		}
	}
	return nil
}

func (s *Front) nlbCreateTargetGroup(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		tg := &model.TargetGroup{Name: q.Get("Name"), Protocol: strings.ToUpper(q.Get("Protocol")), TargetType: q.Get("TargetType"),
			HealthCheck: model.TargetHealthCheck{Protocol: "TCP", Port: "traffic-port", Interval: 30, Timeout: 10, Healthy: 5, Unhealthy: 2}}
		port, vpc := q.Get("Port"), q.Get("VpcId")
		for _, t := range q.Structs("Tags.member", "Key", "Value") {
			tg.Tags = append(tg.Tags, model.Tag{Key: t["Key"], Value: t["Value"]})
		}
		e := healthCheckArgs(q, &tg.HealthCheck)
		if e == nil {
			e = q.Done()
		}
		n, err := strconv.ParseInt(port, 10, 32)
		switch {
		case e != nil:
		case tg.Name == "" || len(tg.Name) > 32:
			e = elb.Validation("Target group name %q must be 1 to 32 characters", tg.Name)
		case err != nil || n < 1 || n > 65535:
			e = elb.Validation("Port %q must be 1 to 65535", port)
		case vpc != api.AWSVPCID:
			e = awsquery.Errorf(http.StatusBadRequest, "ValidationError", "The VPC ID '%s' is not found", vpc)
		case tg.TargetType != "" && tg.TargetType != "instance":
			e = elb.Validation("fakecloud emulates target type instance only, not %q", tg.TargetType)
		}
		if e != nil {
			elb.Fail(w, e)
			return
		}
		tg.Port, tg.TargetType = int32(n), "instance"
		made, err := s.CreateTargetGroup(*tg)
		if err != nil {
			elb.FailModel(w, err)
			return
		}
		svc.Answer(w, "CreateTargetGroup", tgAnswer(made))
	}
}

// nlbTargetGroupChange modifies, deletes, or (de)registers the targets
// of, a target group.
func (s *Front) nlbTargetGroupChange(svc *awsquery.Endpoint, action string) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		arn := q.Get("TargetGroupArn")
		targets := q.Structs("Targets.member", "Id", "Port")
		// The group as it is: its health check, for a modify to change,
		// and its users, the first of which faults are about.
		tg, users, _ := s.TargetGroupOf(arn)
		hc := tg.HealthCheck
		var e *awsquery.Error
		if action == "ModifyTargetGroup" {
			e = healthCheckArgs(q, &hc)
		}
		if e == nil {
			e = q.Done()
		}
		if e != nil {
			elb.Fail(w, e)
			return
		}
		ref := ""
		if len(users) > 0 {
			ref = users[0]
		}
		f, ok := s.elb.Fault(w, r, c, ref)
		if !ok {
			return
		}
		body, err := s.changeTargetGroup(action, arn, hc, targets, f)
		if err != nil {
			elb.FailModel(w, err)
			return
		}
		svc.Answer(w, action, body)
	}
}

// changeTargetGroup makes a target group change action, and returns its
// answer's body.
func (s *Front) changeTargetGroup(action, arn string, hc model.TargetHealthCheck, targets []map[string]string, f *api.Fault) (any, error) {
	switch action {
	case "ModifyTargetGroup":
		tg, err := s.ModifyTargetGroup(arn, hc)
		if err != nil {
			return nil, err
		}
		return tgAnswer(tg), nil
	case "DeleteTargetGroup":
		return nil, s.DeleteTargetGroup(arn)
	}
	refs := make([]model.TargetRef, 0, len(targets))
	for _, t := range targets {
		refs = append(refs, model.TargetRef{ID: t["Id"], Port: t["Port"]})
	}
	ignored := f != nil && f.Kind == api.FaultIgnore && f.Field == api.IgnoreBackends
	return nil, s.RegisterTargets(arn, action == "RegisterTargets", refs, ignored)
}

func (s *Front) nlbDescribeTargetHealth(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		arn := q.Get("TargetGroupArn")
		_ = q.Structs("Targets.member", "Id", "Port")
		if !s.elb.Admit(w, r, c, q, "") {
			return
		}
		tg, _, ok := s.TargetGroupOf(arn)
		if !ok {
			elb.Fail(w, tgNotFound(arn))
			return
		}
		type health struct {
			Target struct {
				ID   string `xml:"Id"`
				Port int32
			}
			HealthCheckPort string
			TargetHealth    struct{ State string }
		}
		body := struct {
			Descriptions []health `xml:"TargetHealthDescriptions>member"`
		}{}
		for i, t := range tg.Targets {
			h := health{HealthCheckPort: tg.HealthCheck.Port}
			h.Target.ID, h.Target.Port = t.ID, t.Port
			h.TargetHealth.State = tg.Health[i]
			body.Descriptions = append(body.Descriptions, h)
		}
		svc.Answer(w, "DescribeTargetHealth", body)
	}
}

// nlbDescribeTags answers the tags of load balancers and target groups by
// ARN (a target group's are none here: the CCM tags only its load
// balancers), up to 20 at once as ELBv2 takes them.
func (s *Front) nlbDescribeTags(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		arns := q.List("ResourceArns.member")
		if len(arns) == 0 || len(arns) > 20 {
			elb.Fail(w, awsquery.Errorf(http.StatusBadRequest, "ValidationError", "1 validation error detected: Value at 'resourceArns' failed to satisfy constraint: Member must have length less than or equal to 20 and greater than or equal to 1"))
			return
		}
		if !s.elb.Admit(w, r, c, q, "") {
			return
		}
		v := s.ELBv2()
		type tag struct{ Key, Value string }
		type described struct {
			ResourceArn string
			Tags        []tag `xml:"Tags>member"`
		}
		body := struct {
			Descriptions []described `xml:"TagDescriptions>member"`
		}{}
		for _, arn := range arns {
			d := described{ResourceArn: arn, Tags: []tag{}}
			rec, isLB := v.LB(arn)
			_, isTG := v.TargetGroup(arn)
			switch {
			case isLB && rec.NLB.ARN == arn:
				for _, t := range rec.NLB.Tags {
					d.Tags = append(d.Tags, tag{t.Key, t.Value})
				}
			case isTG:
			case strings.Contains(arn, ":targetgroup/"):
				elb.Fail(w, tgNotFound(arn))
				return
			default:
				elb.Fail(w, nlbNotFound(arn))
				return
			}
			body.Descriptions = append(body.Descriptions, d)
		}
		svc.Answer(w, "DescribeTags", body)
	}
}
