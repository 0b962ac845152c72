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

package server

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
	"sigs.k8s.io/ccm-harness/fakecloud/server/awsquery"
)

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

const elbv2Version = "2015-12-01"

// nlbDefaultAttributes are a network load balancer's attributes as AWS
// makes it.
var nlbDefaultAttributes = map[string]string{
	"load_balancing.cross_zone.enabled": "false", "access_logs.s3.enabled": "false",
	"access_logs.s3.bucket": "", "access_logs.s3.prefix": "", "deletion_protection.enabled": "false",
}

func (s *Server) elbv2Service() *awsService {
	svc := &awsService{Service: awsquery.Service{
		Path:       api.AWSPath + "elbv2/",
		Signing:    "elasticloadbalancing",
		Version:    elbv2Version,
		XMLNS:      "http://elasticloadbalancing.amazonaws.com/doc/" + elbv2Version + "/",
		ErrorShape: awsquery.ELBErrorXML,
	}}
	svc.actions = map[string]awsAction{
		"DescribeLoadBalancers":          {api.OpListLoadBalancers, s.nlbDescribe(svc)},
		"CreateLoadBalancer":             {api.OpEnsureLoadBalancer, s.nlbCreate(svc)},
		"DeleteLoadBalancer":             {api.OpDeleteLoadBalancer, s.nlbDelete(svc)},
		"DescribeLoadBalancerAttributes": {api.OpGetLoadBalancer, s.nlbAttributes(svc, false)},
		"ModifyLoadBalancerAttributes":   {api.OpEnsureLoadBalancer, s.nlbAttributes(svc, true)},
		"DescribeListeners":              {api.OpGetLoadBalancer, s.nlbDescribeListeners(svc)},
		"CreateListener":                 {api.OpEnsureLoadBalancer, s.nlbListenerChange(svc, "CreateListener")},
		"ModifyListener":                 {api.OpEnsureLoadBalancer, s.nlbListenerChange(svc, "ModifyListener")},
		"DeleteListener":                 {api.OpEnsureLoadBalancer, s.nlbListenerChange(svc, "DeleteListener")},
		"DescribeTargetGroups":           {api.OpGetLoadBalancer, s.nlbDescribeTargetGroups(svc)},
		"CreateTargetGroup":              {api.OpEnsureLoadBalancer, s.nlbCreateTargetGroup(svc)},
		"ModifyTargetGroup":              {api.OpEnsureLoadBalancer, s.nlbTargetGroupChange(svc, "ModifyTargetGroup")},
		"DeleteTargetGroup":              {api.OpEnsureLoadBalancer, s.nlbTargetGroupChange(svc, "DeleteTargetGroup")},
		"RegisterTargets":                {api.OpEnsureLoadBalancer, s.nlbTargetGroupChange(svc, "RegisterTargets")},
		"DeregisterTargets":              {api.OpEnsureLoadBalancer, s.nlbTargetGroupChange(svc, "DeregisterTargets")},
		"DescribeTargetHealth":           {api.OpGetLoadBalancer, s.nlbDescribeTargetHealth(svc)},
		"DescribeTags":                   {api.OpGetLoadBalancer, s.nlbDescribeTags(svc)},
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
func (s *Server) nlbArn(kind, name, id string) string {
	return fmt.Sprintf("arn:aws:elasticloadbalancing:%s:%s:%s/%s/%s", s.Region(), api.AWSAccountID, kind, name, id)
}

// nlbLocked is the network load balancer with this ARN or name, or nil.
func (s *Server) nlbLocked(ref string) *model.LBRecord {
	for _, rec := range s.St.LoadBalancers {
		if rec.NLB != nil && (rec.NLB.ARN == ref || rec.Name == ref) {
			return rec
		}
	}
	return nil
}

func (s *Server) targetGroupLocked(arn string) *model.TargetGroup {
	for _, tg := range s.St.TargetGroups {
		if tg.ARN == arn {
			return tg
		}
	}
	return nil
}

// nlbClientRule is how the AWS CCM describes the nodes' group rules that
// admit a network load balancer's clients.
func nlbClientRule(name string) string { return "kubernetes.io/rule/nlb/client=" + name }

// nlbSpecLocked derives the native spec from the ELBv2 view.
func (s *Server) nlbSpecLocked(name string, n *model.NetworkLB) (api.LoadBalancerSpec, error) {
	spec := api.LoadBalancerSpec{Listeners: []api.Listener{}, Backends: []string{}, Tags: map[string]string{}}
	for _, t := range n.Tags {
		if t.Key == "kubernetes.io/service-name" {
			spec.Tags[api.TagService] = t.Value
		}
	}
	for _, l := range n.Listeners {
		tg := s.targetGroupLocked(l.TargetGroup)
		nodePort := int32(0)
		if tg != nil {
			nodePort = tg.Port
			for _, t := range tg.Targets {
				nodePort = t.Port
				if s.InstanceByIDLocked(t.ID) != nil && !slices.Contains(spec.Backends, t.ID) {
					spec.Backends = append(spec.Backends, t.ID)
				}
			}
			if tg.HealthCheck.Protocol == "HTTP" || tg.HealthCheck.Protocol == "HTTPS" {
				if p, err := strconv.ParseInt(tg.HealthCheck.Port, 10, 32); err == nil {
					spec.HealthCheckNodePort = int32(p)
				}
			}
		}
		protocols := []string{l.Protocol}
		if l.Protocol == "TCP_UDP" {
			protocols = []string{"TCP", "UDP"}
		}
		for _, p := range protocols {
			proto := api.ProtocolTCP
			if p == "UDP" {
				proto = api.ProtocolUDP
			}
			spec.Listeners = append(spec.Listeners, api.Listener{Port: l.Port, Protocol: proto, NodePort: nodePort})
		}
	}
	if g := s.awsGroupLocked(api.AWSNodeSecurityGroup); g != nil {
		for _, p := range g.Ingress {
			for _, r := range p.Ranges {
				if r.Description == nlbClientRule(name) && !model.AllowsAll(r.CIDR) && !slices.Contains(spec.SourceRanges, r.CIDR) {
					spec.SourceRanges = append(spec.SourceRanges, r.CIDR)
				}
			}
		}
	}
	return spec, model.ValidateLBSpec(spec)
}

// nlbCommitLocked makes next rec's ELBv2 view, with what an ignore fault
// drops left as it was, and the native spec and listeners to match.
func (s *Server) nlbCommitLocked(f *api.Fault, rec *model.LBRecord, isNew bool, next *model.NetworkLB) *awsquery.Error {
	if f != nil && f.Kind == api.FaultIgnore && f.Field == api.IgnoreListeners {
		next.Listeners = nil
		if !isNew {
			next.Listeners = slices.Clone(rec.NLB.Listeners)
		}
	}
	upd := *rec
	upd.NLB = next
	spec, err := s.nlbSpecLocked(upd.Name, next)
	if err != nil {
		return elbValidation("%v", err)
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

// nlbRederiveLocked derives again the specs of the network load
// balancers, after a change to a target group or the nodes' group.
func (s *Server) nlbRederiveLocked() error {
	for _, rec := range s.St.LoadBalancers {
		if rec.NLB == nil {
			continue
		}
		spec, err := s.nlbSpecLocked(rec.Name, rec.NLB)
		if err != nil {
			return err
		}
		upd := *rec
		upd.LoadBalancerSpec = spec
		if err := s.OpenLocked(&upd, false); err != nil {
			return err
		}
		*rec = upd
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

func (s *Server) nlbWireLocked(rec *model.LBRecord) nlbWire {
	n := rec.NLB
	w := nlbWire{LoadBalancerArn: n.ARN, LoadBalancerName: rec.Name, DNSName: n.DNSName, CanonicalHostedZoneID: "Z26RNL4JYFTOTI",
		CreatedTime: rec.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z"), Scheme: n.Scheme, Type: "network",
		VpcID: api.AWSVPCID, IPAddressType: "ipv4", SecurityGroups: n.SecurityGroups}
	w.State.Code = "active"
	for _, sn := range s.ec2Subnets() {
		if slices.Contains(n.Subnets, sn.ID) {
			w.AvailabilityZones = append(w.AvailabilityZones, struct {
				ZoneName string
				SubnetID string `xml:"SubnetId"`
			}{sn.Zone, sn.ID})
		}
	}
	return w
}

func (s *Server) nlbCreate(svc *awsService) awsHandler {
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
		case !elbName(name):
			e = elbValidation("Name %q must be 1 to 32 letters, digits and hyphens, not starting with a hyphen", name)
		case typ != "network":
			e = elbValidation("fakecloud emulates load balancers of Type network only, not %q", typ)
		case len(subnets) == 0:
			e = elbValidation("At least one subnet must be specified")
		case scheme != "" && scheme != "internal" && scheme != "internet-facing":
			e = elbValidation("Invalid scheme '%s'", scheme)
		}
		if e != nil {
			elbFail(w, e)
			return
		}
		if scheme == "" {
			scheme = "internet-facing"
		}
		f, ok := s.elbFault(w, r, c, name)
		if !ok {
			return
		}
		s.Mu.Lock()
		defer s.Mu.Unlock()
		if e := s.elbCheckRefsLocked(subnets, groups); e != nil {
			elbFail(w, e)
			return
		}
		rec := s.LBByNameLocked(name)
		if rec != nil && rec.NLB == nil {
			elbFail(w, awsquery.Errorf(http.StatusBadRequest, "DuplicateLoadBalancerName", "A load balancer with the same name '%s' exists, but with different settings", name))
			return
		}
		if rec == nil {
			ip, err := s.AllocateLBIPLocked()
			if err != nil {
				elbFail(w, awsquery.Errorf(http.StatusBadRequest, "TooManyLoadBalancers", "%v", err))
				return
			}
			rec = &model.LBRecord{Name: name, ID: s.NewLBIDLocked(), IP: ip.String(), CreatedAt: time.Now().UTC()}
			hash := awsHash(16, rec.ID)
			next := &model.NetworkLB{ARN: s.nlbArn("loadbalancer/net", name, hash), Scheme: scheme, Subnets: subnets, SecurityGroups: groups,
				DNSName: fmt.Sprintf("%s-%s.elb.%s.amazonaws.com", name, hash, s.Region()), Attributes: map[string]string{}}
			for k, v := range nlbDefaultAttributes {
				next.Attributes[k] = v
			}
			for _, t := range tags {
				next.Tags = append(next.Tags, model.Tag{Key: t["Key"], Value: t["Value"]})
			}
			if e := s.nlbCommitLocked(f, rec, true, next); e != nil {
				elbFail(w, e)
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

func (s *Server) nlbDescribe(svc *awsService) awsHandler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		refs := append(q.List("Names.member"), q.List("LoadBalancerArns.member")...)
		_, _ = q.Get("Marker"), q.Get("PageSize")
		if e := q.Done(); e != nil {
			elbFail(w, e)
			return
		}
		name := ""
		if len(refs) == 1 {
			c.Op, name = api.OpGetLoadBalancer, refs[0]
		}
		if _, ok := s.elbFault(w, r, c, name); !ok {
			return
		}
		s.Mu.Lock()
		defer s.Mu.Unlock()
		body := struct {
			LoadBalancers []nlbWire `xml:"LoadBalancers>member"`
		}{}
		for _, ref := range refs {
			if s.nlbLocked(ref) == nil {
				elbFail(w, nlbNotFound("'"+ref+"'"))
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
func (s *Server) nlbDelete(svc *awsService) awsHandler {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		arn := q.Get("LoadBalancerArn")
		s.elbRead(w, r, c, q, arn, func(*model.LBRecord) {
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

func (s *Server) nlbAttributes(svc *awsService, modify bool) awsHandler {
	action := "DescribeLoadBalancerAttributes"
	if modify {
		action = "ModifyLoadBalancerAttributes"
	}
	return func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query) {
		arn := q.Get("LoadBalancerArn")
		changes := q.Structs("Attributes.member", "Key", "Value")
		s.elbRead(w, r, c, q, arn, func(*model.LBRecord) {
			rec := s.nlbLocked(arn)
			if rec == nil {
				elbFail(w, nlbNotFound("'"+arn+"'"))
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
			for _, k := range sortedKeys(rec.NLB.Attributes) {
				body.Attributes = append(body.Attributes, nlbAttribute{k, rec.NLB.Attributes[k]})
			}
			svc.Answer(w, action, body)
		})
	}
}
