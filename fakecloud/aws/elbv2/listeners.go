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
	"strings"

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
		if !s.elb.Admit(w, r, c, q, arn) {
			return
		}
		v := s.ELBv2()
		body := struct {
			Listeners []nlbListenerWire `xml:"Listeners>member"`
		}{}
		if _, ok := v.LB(arn); arn != "" && !ok {
			elb.Fail(w, nlbNotFound("'"+arn+"'"))
			return
		}
		for _, rec := range v.LBs {
			if arn != "" && rec.NLB.ARN != arn {
				continue
			}
			for _, l := range rec.NLB.Listeners {
				if len(arns) == 0 || slices.Contains(arns, l.ARN) {
					body.Listeners = append(body.Listeners, listenerWire(rec.NLB.ARN, l))
				}
			}
		}
		svc.Answer(w, "DescribeListeners", body)
	}
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
		req := model.ListenerRequest{Create: action == "CreateListener", Delete: action == "DeleteListener",
			LB: lbArn, Listener: listenerArn, Port: port, Protocol: proto}
		if len(actions) > 0 {
			req.Forward = &[2]string{actions[0]["Type"], actions[0]["TargetGroupArn"]}
		}
		lb, l, err := s.ChangeListener(req, f)
		if err != nil {
			elb.FailModel(w, err)
			return
		}
		body := struct {
			Listeners []nlbListenerWire `xml:"Listeners>member"`
		}{}
		if l != nil {
			body.Listeners = append(body.Listeners, listenerWire(lb, *l))
		}
		svc.Answer(w, action, body)
	}
}
