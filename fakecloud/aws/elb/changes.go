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
	"strconv"
	"strings"

	"sigs.k8s.io/ccm-harness/fakecloud/aws/awsquery"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

func elbCreateListeners(q *awsquery.Query, ch *model.ClassicChange) (any, *awsquery.Error) {
	next := ch.Next
	listeners, e := elbListeners(q)
	if e != nil {
		return nil, e
	}
	for _, l := range listeners {
		i := slices.IndexFunc(next.Listeners, func(x model.ClassicListener) bool { return x.LoadBalancerPort == l.LoadBalancerPort })
		switch {
		case i >= 0 && next.Listeners[i] != l:
			return nil, awsquery.Errorf(http.StatusBadRequest, "DuplicateListener", "A listener already exists for %s with LoadBalancerPort %d, but with a different InstancePort, Protocol, or SSLCertificateId", ch.Name, l.LoadBalancerPort)
		case i < 0:
			next.Listeners = append(next.Listeners, l)
		}
	}
	return nil, nil
}

func elbDeleteListeners(q *awsquery.Query, ch *model.ClassicChange) (any, *awsquery.Error) {
	next := ch.Next
	for _, p := range q.List("LoadBalancerPorts.member") {
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil {
			return nil, Validation("LoadBalancerPorts %q is not a number", p)
		}
		next.Listeners = slices.DeleteFunc(next.Listeners, func(l model.ClassicListener) bool { return l.LoadBalancerPort == int32(n) })
	}
	return nil, nil
}

func elbConfigureHealthCheck(q *awsquery.Query, ch *model.ClassicChange) (any, *awsquery.Error) {
	next := ch.Next
	hc := model.ClassicHealthCheck{Target: q.Get("HealthCheck.Target")}
	for f, dst := range map[string]*int{"Interval": &hc.Interval, "Timeout": &hc.Timeout, "UnhealthyThreshold": &hc.UnhealthyThreshold, "HealthyThreshold": &hc.HealthyThreshold} {
		n, err := strconv.Atoi(q.Get("HealthCheck." + f))
		if err != nil {
			return nil, Validation("HealthCheck.%s must be a number", f)
		}
		*dst = n
	}
	proto, rest, _ := strings.Cut(hc.Target, ":")
	port, path, _ := strings.Cut(rest, "/")
	n, err := strconv.Atoi(port)
	switch {
	case proto != "TCP" && proto != "SSL" && proto != "HTTP" && proto != "HTTPS":
		return nil, Validation("HealthCheck Target %q must be TCP, SSL, HTTP or HTTPS, a port, and for HTTP(S) a path", hc.Target)
	case err != nil || n < 1 || n > 65535:
		return nil, Validation("HealthCheck Target %q: the port must be 1 to 65535", hc.Target)
	case (proto == "HTTP" || proto == "HTTPS") != (path != "" || strings.HasSuffix(rest, "/")):
		return nil, Validation("HealthCheck Target %q: a path goes with HTTP and HTTPS only, and they need one", hc.Target)
	case hc.Interval < 5 || hc.Timeout < 2 || hc.Timeout >= hc.Interval || hc.HealthyThreshold < 2 || hc.UnhealthyThreshold < 2:
		return nil, Validation("HealthCheck: Interval 5-300, Timeout 2-60 and below Interval, thresholds 2-10")
	}
	next.HealthCheck = hc
	return struct {
		HealthCheck model.ClassicHealthCheck
	}{hc}, nil
}

type elbInstance struct {
	InstanceID string `xml:"InstanceId"`
}

func elbInstanceList(ids []string) any {
	out := struct {
		Instances []elbInstance `xml:"Instances>member"`
	}{}
	for _, id := range ids {
		out.Instances = append(out.Instances, elbInstance{id})
	}
	return out
}

func elbInstances(register bool) classicChange {
	return func(q *awsquery.Query, ch *model.ClassicChange) (any, *awsquery.Error) {
		next := ch.Next
		for _, m := range q.Structs("Instances.member", "InstanceId") {
			id := m["InstanceId"]
			switch {
			case register && !ch.InstanceLive(id):
				return nil, awsquery.Errorf(http.StatusBadRequest, "InvalidInstance", "The requested instance '%s' is not valid for registration", id)
			case register && !slices.Contains(next.Instances, id):
				next.Instances = append(next.Instances, id)
			case !register:
				next.Instances = slices.DeleteFunc(next.Instances, func(x string) bool { return x == id })
			}
		}
		return elbInstanceList(next.Instances), nil
	}
}

func elbModifyAttributes(q *awsquery.Query, ch *model.ClassicChange) (any, *awsquery.Error) {
	next := ch.Next
	a := &next.Attributes
	const p = "LoadBalancerAttributes."
	bools := map[string]*bool{"AccessLog.Enabled": &a.AccessLog.Enabled, "ConnectionDraining.Enabled": &a.ConnectionDraining.Enabled,
		"CrossZoneLoadBalancing.Enabled": &a.CrossZoneLoadBalancing.Enabled}
	ints := map[string]*int{"AccessLog.EmitInterval": &a.AccessLog.EmitInterval, "ConnectionDraining.Timeout": &a.ConnectionDraining.Timeout,
		"ConnectionSettings.IdleTimeout": &a.ConnectionSettings.IdleTimeout}
	for k, dst := range bools {
		if q.Has(p + k) {
			v, err := strconv.ParseBool(q.Get(p + k))
			if err != nil {
				return nil, Validation("%s%s must be true or false", p, k)
			}
			*dst = v
		}
	}
	for k, dst := range ints {
		if q.Has(p + k) {
			v, err := strconv.Atoi(q.Get(p + k))
			if err != nil {
				return nil, Validation("%s%s must be a number", p, k)
			}
			*dst = v
		}
	}
	for k, dst := range map[string]*string{"AccessLog.S3BucketName": &a.AccessLog.S3BucketName, "AccessLog.S3BucketPrefix": &a.AccessLog.S3BucketPrefix} {
		if q.Has(p + k) {
			*dst = q.Get(p + k)
		}
	}
	return struct {
		LoadBalancerName       string
		LoadBalancerAttributes model.ClassicAttributes
	}{ch.Name, next.Attributes}, nil
}

func elbAddTags(q *awsquery.Query, ch *model.ClassicChange) (any, *awsquery.Error) {
	next := ch.Next
	for _, t := range q.Structs("Tags.member", "Key", "Value") {
		next.Tags = slices.DeleteFunc(next.Tags, func(x model.Tag) bool { return x.Key == t["Key"] })
		next.Tags = append(next.Tags, model.Tag{Key: t["Key"], Value: t["Value"]})
	}
	return nil, nil
}

func elbApplySecurityGroups(q *awsquery.Query, ch *model.ClassicChange) (any, *awsquery.Error) {
	next := ch.Next
	groups := q.List("SecurityGroups.member")
	if e := groupsFail(ch.CheckGroups(groups)); e != nil {
		return nil, e
	}
	next.SecurityGroups = groups
	return struct {
		SecurityGroups []string `xml:"SecurityGroups>member"`
	}{groups}, nil
}

func (s *Front) elbSubnets(attach bool) classicChange {
	return func(q *awsquery.Query, ch *model.ClassicChange) (any, *awsquery.Error) {
		next := ch.Next
		subnets := q.List("Subnets.member")
		if e := s.CheckSubnets(subnets); e != nil {
			return nil, e
		}
		for _, id := range subnets {
			next.Subnets = slices.DeleteFunc(next.Subnets, func(x string) bool { return x == id })
			if attach {
				next.Subnets = append(next.Subnets, id)
			}
		}
		return struct {
			Subnets []string `xml:"Subnets>member"`
		}{next.Subnets}, nil
	}
}
