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

package elb

import (
	"net/http"
	"slices"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/awsquery"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/ec2"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

// elbDescription is a classic load balancer as DescribeLoadBalancers
// answers it.
type elbDescription struct {
	LoadBalancerName          string
	DNSName                   string
	CanonicalHostedZoneName   string
	CanonicalHostedZoneNameID string
	ListenerDescriptions      []struct {
		Listener    model.ClassicListener
		PolicyNames struct{}
	} `xml:"ListenerDescriptions>member"`
	Policies struct {
		AppCookieStickinessPolicies struct{}
		LBCookieStickinessPolicies  struct{}
		OtherPolicies               struct{}
	}
	BackendServerDescriptions struct{}
	AvailabilityZones         []string      `xml:"AvailabilityZones>member"`
	Subnets                   []string      `xml:"Subnets>member"`
	VPCId                     string        `xml:"VPCId"`
	Instances                 []elbInstance `xml:"Instances>member"`
	HealthCheck               model.ClassicHealthCheck
	SourceSecurityGroup       struct {
		OwnerAlias string
		GroupName  string
	}
	SecurityGroups []string `xml:"SecurityGroups>member"`
	CreatedTime    string
	Scheme         string
}

func (s *Front) elbDescription(rec model.ClassicLBView) elbDescription {
	e := rec.ELB
	d := elbDescription{LoadBalancerName: rec.Name, DNSName: e.DNSName, CanonicalHostedZoneName: e.DNSName,
		CanonicalHostedZoneNameID: "Z35SXDOTRQ7X7K", Subnets: e.Subnets, VPCId: api.AWSVPCID, HealthCheck: e.HealthCheck,
		SecurityGroups: e.SecurityGroups, CreatedTime: rec.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z"), Scheme: e.Scheme}
	for _, l := range e.Listeners {
		d.ListenerDescriptions = append(d.ListenerDescriptions, struct {
			Listener    model.ClassicListener
			PolicyNames struct{}
		}{Listener: l})
	}
	for _, sn := range ec2.New(s.Cloud).Subnets() {
		if slices.Contains(e.Subnets, sn.ID) {
			d.AvailabilityZones = append(d.AvailabilityZones, sn.Zone)
		}
	}
	for _, id := range e.Instances {
		d.Instances = append(d.Instances, elbInstance{id})
	}
	if rec.HasSourceGroup {
		d.SourceSecurityGroup.OwnerAlias, d.SourceSecurityGroup.GroupName = api.AWSAccountID, rec.SourceGroup
	}
	return d
}

func (s *Front) elbDescribe(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		names := q.List("LoadBalancerNames.member")
		_, _ = q.Get("Marker"), q.Get("PageSize")
		if e := q.Done(); e != nil {
			Fail(w, e)
			return
		}
		name := ""
		if len(names) == 1 {
			c.Op, name = api.OpGetLoadBalancer, names[0]
		}
		if _, ok := s.Fault(w, r, c, name); !ok {
			return
		}
		all := s.ClassicLBs()
		body := struct {
			Descriptions []elbDescription `xml:"LoadBalancerDescriptions>member"`
		}{}
		for _, n := range names {
			if _, ok := classicNamed(all, n); !ok {
				Fail(w, elbNotFound(n))
				return
			}
		}
		for _, rec := range all {
			if len(names) == 0 || slices.Contains(names, rec.Name) {
				body.Descriptions = append(body.Descriptions, s.elbDescription(rec))
			}
		}
		svc.Answer(w, "DescribeLoadBalancers", body)
	}
}

func (s *Front) elbDescribeAttributes(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		name := q.Get("LoadBalancerName")
		if !s.Admit(w, r, c, q, name) {
			return
		}
		rec, err := s.ClassicLB(name)
		if err != nil {
			FailModel(w, err)
			return
		}
		svc.Answer(w, "DescribeLoadBalancerAttributes", struct {
			LoadBalancerAttributes model.ClassicAttributes
		}{rec.ELB.Attributes})
	}
}

// Admit checks the parameters of a call about the load balancer called
// name (or of that ARN) and applies the faults of its operation; false
// when it has answered. The caller then asks the model and answers.
func (s *Front) Admit(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query, name string) bool {
	if e := q.Done(); e != nil {
		Fail(w, e)
		return false
	}
	_, ok := s.Fault(w, r, c, name)
	return ok
}

// classicNamed is the load balancer of all called name.
func classicNamed(all []model.ClassicLBView, name string) (model.ClassicLBView, bool) {
	i := slices.IndexFunc(all, func(rec model.ClassicLBView) bool { return rec.Name == name })
	if i < 0 {
		return model.ClassicLBView{}, false
	}
	return all[i], true
}

func (s *Front) elbDescribeTags(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		names := q.List("LoadBalancerNames.member")
		if e := q.Done(); e != nil {
			Fail(w, e)
			return
		}
		if _, ok := s.Fault(w, r, c, ""); !ok {
			return
		}
		all := s.ClassicLBs()
		type tag struct{ Key, Value string }
		type described struct {
			LoadBalancerName string
			Tags             []tag `xml:"Tags>member"`
		}
		body := struct {
			Descriptions []described `xml:"TagDescriptions>member"`
		}{}
		for _, n := range names {
			rec, ok := classicNamed(all, n)
			if !ok {
				Fail(w, elbNotFound(n))
				return
			}
			d := described{LoadBalancerName: n}
			for _, t := range rec.ELB.Tags {
				d.Tags = append(d.Tags, tag{t.Key, t.Value})
			}
			body.Descriptions = append(body.Descriptions, d)
		}
		svc.Answer(w, "DescribeTags", body)
	}
}

// elbDelete deletes a classic load balancer; one that does not exist is
// deleted already, as AWS answers.
func (s *Front) elbDelete(svc *awsquery.Endpoint) awsquery.Handler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		name := q.Get("LoadBalancerName")
		if !s.Admit(w, r, c, q, name) {
			return
		}
		if err := s.DeleteClassicLB(name); err != nil {
			FailModel(w, err)
			return
		}
		svc.Answer(w, "DeleteLoadBalancer", struct{}{})
	}
}
