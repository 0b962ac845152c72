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
	"time"

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

func (s *Front) tgWireLocked(tg *model.TargetGroup) tgWire {
	out := tgWire{TargetGroupArn: tg.ARN, TargetGroupName: tg.Name, Protocol: tg.Protocol, Port: tg.Port, VpcID: api.AWSVPCID,
		TargetType: tg.TargetType, HealthCheckEnabled: true, HealthCheckProtocol: tg.HealthCheck.Protocol, HealthCheckPort: tg.HealthCheck.Port,
		HealthCheckPath: tg.HealthCheck.Path, HealthCheckIntervalSeconds: tg.HealthCheck.Interval, HealthCheckTimeoutSeconds: tg.HealthCheck.Timeout,
		HealthyThresholdCount: tg.HealthCheck.Healthy, UnhealthyThresholdCount: tg.HealthCheck.Unhealthy}
	out.LoadBalancerArns = s.tgUsersLocked(tg.ARN)
	return out
}

// tgUsersLocked are the load balancers whose listeners forward to a
// target group.
func (s *Front) tgUsersLocked(arn string) []string {
	var out []string
	for _, rec := range s.St.LoadBalancers {
		if rec.NLB != nil && slices.ContainsFunc(rec.NLB.Listeners, func(l model.NetworkListener) bool { return l.TargetGroup == arn }) {
			out = append(out, rec.NLB.ARN)
		}
	}
	return out
}

func (s *Front) nlbDescribeTargetGroups(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		lbArn := q.Get("LoadBalancerArn")
		arns, names := q.List("TargetGroupArns.member"), q.List("Names.member")
		_, _ = q.Get("Marker"), q.Get("PageSize")
		s.elb.Read(w, r, c, q, lbArn, func(*model.LBRecord) {
			if lbArn != "" && s.nlbLocked(lbArn) == nil {
				elb.Fail(w, nlbNotFound("'"+lbArn+"'"))
				return
			}
			for _, arn := range arns {
				if s.TargetGroupLocked(arn) == nil {
					elb.Fail(w, tgNotFound(arn))
					return
				}
			}
			body := struct {
				TargetGroups []tgWire `xml:"TargetGroups>member"`
			}{}
			for _, tg := range s.St.TargetGroups {
				if (lbArn != "" && !slices.Contains(s.tgUsersLocked(tg.ARN), lbArn)) || (len(arns) > 0 && !slices.Contains(arns, tg.ARN)) ||
					(len(names) > 0 && !slices.Contains(names, tg.Name)) {
					continue
				}
				body.TargetGroups = append(body.TargetGroups, s.tgWireLocked(tg))
			}
			svc.Answer(w, "DescribeTargetGroups", body)
		})
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
		s.Mu.Lock()
		defer s.Mu.Unlock()
		if i := slices.IndexFunc(s.St.TargetGroups, func(x *model.TargetGroup) bool { return x.Name == tg.Name }); i >= 0 {
			old := s.St.TargetGroups[i]
			if old.Protocol != tg.Protocol || old.Port != tg.Port || old.HealthCheck != tg.HealthCheck {
				elb.Fail(w, awsquery.Errorf(http.StatusBadRequest, "DuplicateTargetGroupName", "A target group with the same name '%s' exists, but with different settings", tg.Name))
				return
			}
			tg = old
		} else {
			tg.ARN = s.nlbArn("targetgroup", tg.Name, awsquery.Hash(16, tg.Name, time.Now().String()))
			s.St.TargetGroups = append(s.St.TargetGroups, tg)
			if err := s.SaveLocked(); err != nil {
				model.SaveFailed(w, err)
				return
			}
		}
		svc.Answer(w, "CreateTargetGroup", struct {
			TargetGroups []tgWire `xml:"TargetGroups>member"`
		}{[]tgWire{s.tgWireLocked(tg)}})
	}
}

// nlbTargetGroupChange modifies, deletes, or (de)registers the targets
// of, a target group.
func (s *Front) nlbTargetGroupChange(svc *awsquery.Endpoint, action string) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		arn := q.Get("TargetGroupArn")
		targets := q.Structs("Targets.member", "Id", "Port")
		s.Mu.Lock()
		tg := s.TargetGroupLocked(arn)
		var hc model.TargetHealthCheck
		if tg != nil {
			hc = tg.HealthCheck
		}
		s.Mu.Unlock()
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
		users := func() []string { s.Mu.Lock(); defer s.Mu.Unlock(); return s.tgUsersLocked(arn) }()
		ref := ""
		if len(users) > 0 {
			ref = users[0]
		}
		f, ok := s.elb.Fault(w, r, c, ref)
		if !ok {
			return
		}
		s.Mu.Lock()
		defer s.Mu.Unlock()
		tg = s.TargetGroupLocked(arn)
		if tg == nil {
			elb.Fail(w, tgNotFound(arn))
			return
		}
		ignored := f != nil && f.Kind == api.FaultIgnore && f.Field == api.IgnoreBackends && (action == "RegisterTargets" || action == "DeregisterTargets")
		var body any
		switch action {
		case "ModifyTargetGroup":
			tg.HealthCheck = hc
			body = struct {
				TargetGroups []tgWire `xml:"TargetGroups>member"`
			}{[]tgWire{s.tgWireLocked(tg)}}
		case "DeleteTargetGroup":
			if len(s.tgUsersLocked(arn)) > 0 {
				elb.Fail(w, awsquery.Errorf(http.StatusBadRequest, "ResourceInUse", "Target group '%s' is currently in use by a listener or a rule", arn))
				return
			}
			s.St.TargetGroups = slices.DeleteFunc(s.St.TargetGroups, func(x *model.TargetGroup) bool { return x == tg })
		default:
			for _, t := range targets {
				port := tg.Port
				if t["Port"] != "" {
					n, err := strconv.ParseInt(t["Port"], 10, 32)
					if err != nil {
						elb.Fail(w, elb.Validation("Target port %q is not a number", t["Port"]))
						return
					}
					port = int32(n)
				}
				inst := s.InstanceByIDLocked(t["Id"])
				if action == "RegisterTargets" && (inst == nil || inst.State == api.StateTerminated) {
					elb.Fail(w, awsquery.Errorf(http.StatusBadRequest, "InvalidTarget", "The following targets are not in a running state and cannot be registered: '%s'", t["Id"]))
					return
				}
				if ignored {
					continue
				}
				target := model.Target{ID: t["Id"], Port: port}
				tg.Targets = slices.DeleteFunc(tg.Targets, func(x model.Target) bool { return x == target })
				if action == "RegisterTargets" {
					tg.Targets = append(tg.Targets, target)
				}
			}
		}
		if err := s.NetworkRederiveLocked(); err != nil {
			elb.Fail(w, elb.Validation("%v", err))
			return
		}
		if err := s.SaveLocked(); err != nil {
			model.SaveFailed(w, err)
			return
		}
		svc.Answer(w, action, body)
	}
}

func (s *Front) nlbDescribeTargetHealth(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		arn := q.Get("TargetGroupArn")
		_ = q.Structs("Targets.member", "Id", "Port")
		s.elb.Read(w, r, c, q, "", func(*model.LBRecord) {
			tg := s.TargetGroupLocked(arn)
			if tg == nil {
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
			for _, t := range tg.Targets {
				h := health{HealthCheckPort: tg.HealthCheck.Port}
				h.Target.ID, h.Target.Port = t.ID, t.Port
				h.TargetHealth.State = "healthy"
				if inst := s.InstanceByIDLocked(t.ID); inst == nil || inst.State != api.StateRunning {
					h.TargetHealth.State = "unhealthy"
				} else if len(s.tgUsersLocked(arn)) == 0 {
					h.TargetHealth.State = "unused"
				}
				body.Descriptions = append(body.Descriptions, h)
			}
			svc.Answer(w, "DescribeTargetHealth", body)
		})
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
		s.elb.Read(w, r, c, q, "", func(*model.LBRecord) {
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
				switch rec := s.nlbLocked(arn); {
				case rec != nil && rec.NLB.ARN == arn:
					for _, t := range rec.NLB.Tags {
						d.Tags = append(d.Tags, tag{t.Key, t.Value})
					}
				case s.TargetGroupLocked(arn) != nil:
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
		})
	}
}
