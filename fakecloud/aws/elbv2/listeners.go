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

	"sigs.k8s.io/ccm-harness/fakecloud/aws/awsquery"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/elb"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

// nlbListenerWire is a listener as ELBv2 answers it.
type nlbListenerWire struct {
	ListenerArn     string
	LoadBalancerArn string
	Port            int32
	Protocol        string
	DefaultActions  []struct {
		Type           string
		TargetGroupArn string
	} `xml:"DefaultActions>member"`
}

func listenerWire(lb string, l model.NetworkListener) nlbListenerWire {
	out := nlbListenerWire{ListenerArn: l.ARN, LoadBalancerArn: lb, Port: l.Port, Protocol: l.Protocol}
	out.DefaultActions = append(out.DefaultActions, struct {
		Type           string
		TargetGroupArn string
	}{"forward", l.TargetGroup})
	return out
}

func (s *Front) nlbDescribeListeners(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		arn := q.Get("LoadBalancerArn")
		arns := q.List("ListenerArns.member")
		_, _ = q.Get("Marker"), q.Get("PageSize")
		s.elb.Read(w, r, c, q, arn, func(*model.LBRecord) {
			body := struct {
				Listeners []nlbListenerWire `xml:"Listeners>member"`
			}{}
			if arn != "" && s.nlbLocked(arn) == nil {
				elb.Fail(w, nlbNotFound("'"+arn+"'"))
				return
			}
			for _, rec := range s.St.LoadBalancers {
				if rec.NLB == nil || (arn != "" && rec.NLB.ARN != arn) {
					continue
				}
				for _, l := range rec.NLB.Listeners {
					if len(arns) == 0 || slices.Contains(arns, l.ARN) {
						body.Listeners = append(body.Listeners, listenerWire(rec.NLB.ARN, l))
					}
				}
			}
			svc.Answer(w, "DescribeListeners", body)
		})
	}
}

// nlbListenerOf is the load balancer holding the listener with this ARN.
func (s *Front) nlbListenerOf(arn string) (*model.LBRecord, int) {
	for _, rec := range s.St.LoadBalancers {
		if rec.NLB == nil {
			continue
		}
		if i := slices.IndexFunc(rec.NLB.Listeners, func(l model.NetworkListener) bool { return l.ARN == arn }); i >= 0 {
			return rec, i
		}
	}
	return nil, -1
}

// nlbListenerChange creates, modifies or deletes a listener.
func (s *Front) nlbListenerChange(svc *awsquery.Endpoint, action string) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		lbArn, listenerArn := q.Get("LoadBalancerArn"), q.Get("ListenerArn")
		port, proto := q.Get("Port"), strings.ToUpper(q.Get("Protocol"))
		actions := q.Structs("DefaultActions.member", "Type", "TargetGroupArn")
		_ = q.Structs("Tags.member", "Key", "Value")
		_, _ = q.Get("SslPolicy"), q.Get("AlpnPolicy")
		if e := q.Done(); e != nil {
			elb.Fail(w, e)
			return
		}
		f, ok := s.elb.Fault(w, r, c, lbArn)
		if !ok {
			return
		}
		s.Mu.Lock()
		defer s.Mu.Unlock()
		var rec *model.LBRecord
		i := -1
		if action == "CreateListener" {
			rec = s.nlbLocked(lbArn)
			if rec == nil {
				elb.Fail(w, nlbNotFound("'"+lbArn+"'"))
				return
			}
		} else if rec, i = s.nlbListenerOf(listenerArn); rec == nil {
			elb.Fail(w, awsquery.Errorf(http.StatusBadRequest, "ListenerNotFound", "One or more listeners not found"))
			return
		}
		next := *rec.NLB
		next.Listeners = slices.Clone(rec.NLB.Listeners)
		if action == "DeleteListener" {
			next.Listeners = slices.Delete(next.Listeners, i, i+1)
		} else {
			l := model.NetworkListener{ARN: listenerArn}
			if i >= 0 {
				l = next.Listeners[i]
			}
			if port != "" {
				n, err := strconv.ParseInt(port, 10, 32)
				if err != nil || n < 1 || n > 65535 {
					elb.Fail(w, elb.Validation("Port %q must be 1 to 65535", port))
					return
				}
				l.Port = int32(n)
			}
			if proto != "" {
				l.Protocol = proto
			}
			if len(actions) > 0 {
				if actions[0]["Type"] != "forward" || s.TargetGroupLocked(actions[0]["TargetGroupArn"]) == nil {
					elb.Fail(w, tgNotFound(actions[0]["TargetGroupArn"]))
					return
				}
				l.TargetGroup = actions[0]["TargetGroupArn"]
			}
			switch l.Protocol {
			case "TCP", "UDP", "TCP_UDP", "TLS":
			default:
				elb.Fail(w, elb.Validation("Protocol '%s' is not valid for a network load balancer's listener", l.Protocol))
				return
			}
			if l.TargetGroup == "" {
				elb.Fail(w, elb.Validation("A listener needs a default action that forwards to a target group"))
				return
			}
			if slices.ContainsFunc(next.Listeners, func(x model.NetworkListener) bool { return x.Port == l.Port && x.ARN != l.ARN }) {
				elb.Fail(w, awsquery.Errorf(http.StatusBadRequest, "DuplicateListener", "A listener already exists on this port for this load balancer"))
				return
			}
			if i >= 0 {
				next.Listeners[i] = l
			} else {
				l.ARN = s.nlbArn("listener/net", rec.Name, awsquery.Hash(16, rec.ID)+"/"+awsquery.Hash(16, rec.ID, strconv.Itoa(int(l.Port)), l.Protocol, time.Now().String()))
				next.Listeners = append(next.Listeners, l)
				i = len(next.Listeners) - 1
			}
		}
		if e := s.nlbCommitLocked(f, rec, false, &next); e != nil {
			elb.Fail(w, e)
			return
		}
		if err := s.SaveLocked(); err != nil {
			model.SaveFailed(w, err)
			return
		}
		body := struct {
			Listeners []nlbListenerWire `xml:"Listeners>member"`
		}{}
		if action != "DeleteListener" && i < len(rec.NLB.Listeners) {
			body.Listeners = append(body.Listeners, listenerWire(rec.NLB.ARN, rec.NLB.Listeners[i]))
		}
		svc.Answer(w, action, body)
	}
}
