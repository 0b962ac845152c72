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

package model

import (
	"fmt"
	"slices"
	"strings"
)

// SecurityGroup is a security group as stored.
type SecurityGroup struct {
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Tags        []Tag        `json:"tags"`
	Ingress     []Permission `json:"ingress"`
}

// Permission is one ingress rule: a protocol and port range, from CIDR
// ranges and other groups. Ports are absent for protocol -1.
type Permission struct {
	Protocol string    `json:"protocol"`
	FromPort *int32    `json:"fromPort,omitempty"`
	ToPort   *int32    `json:"toPort,omitempty"`
	Ranges   []IPRange `json:"ranges,omitempty"`
	Groups   []string  `json:"groups,omitempty"`
}

// IPRange is a permission's CIDR peer, with its description.
type IPRange struct {
	CIDR        string `json:"cidr"`
	Description string `json:"description,omitempty"`
}

// SameRule reports whether p and q are one rule as EC2 tells rules apart:
// the same protocol, ports and peers, whatever their descriptions.
func (p Permission) SameRule(q Permission) bool {
	eq := func(a, b *int32) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	return p.Protocol == q.Protocol && eq(p.FromPort, q.FromPort) && eq(p.ToPort, q.ToPort)
}

// Describe names a rule as EC2's errors do.
func (p Permission) Describe(peer string) string {
	ports := ""
	if p.FromPort != nil {
		ports = fmt.Sprintf(", from port: %d, to port: %d", *p.FromPort, *p.ToPort)
	}
	return fmt.Sprintf("peer: %s, %s%s, ALLOW", peer, strings.ToUpper(p.Protocol), ports)
}

// ClassicLB is a classic load balancer's ELB view, as stored.
type ClassicLB struct {
	DNSName        string             `json:"dnsName"`
	Scheme         string             `json:"scheme"`
	Subnets        []string           `json:"subnets"`
	SecurityGroups []string           `json:"securityGroups"`
	Listeners      []ClassicListener  `json:"listeners"`
	HealthCheck    ClassicHealthCheck `json:"healthCheck"`
	Instances      []string           `json:"instances"`
	Attributes     ClassicAttributes  `json:"attributes"`
	Tags           []Tag              `json:"tags"`
}

// ClassicListener is a classic load balancer's listener.
type ClassicListener struct {
	Protocol         string `json:"protocol" xml:"Protocol"`
	LoadBalancerPort int32  `json:"loadBalancerPort" xml:"LoadBalancerPort"`
	InstanceProtocol string `json:"instanceProtocol" xml:"InstanceProtocol"`
	InstancePort     int32  `json:"instancePort" xml:"InstancePort"`
	SSLCertificateID string `json:"sslCertificateId,omitempty" xml:"SSLCertificateId,omitempty"`
}

// ClassicHealthCheck is a classic load balancer's health check.
type ClassicHealthCheck struct {
	Target             string `json:"target" xml:"Target"`
	Interval           int    `json:"interval" xml:"Interval"`
	Timeout            int    `json:"timeout" xml:"Timeout"`
	UnhealthyThreshold int    `json:"unhealthyThreshold" xml:"UnhealthyThreshold"`
	HealthyThreshold   int    `json:"healthyThreshold" xml:"HealthyThreshold"`
}

// ClassicAttributes are a classic load balancer's attributes.
type ClassicAttributes struct {
	AccessLog struct {
		Enabled        bool   `json:"enabled" xml:"Enabled"`
		EmitInterval   int    `json:"emitInterval,omitempty" xml:"EmitInterval,omitempty"`
		S3BucketName   string `json:"s3BucketName,omitempty" xml:"S3BucketName,omitempty"`
		S3BucketPrefix string `json:"s3BucketPrefix,omitempty" xml:"S3BucketPrefix,omitempty"`
	} `json:"accessLog" xml:"AccessLog"`
	ConnectionDraining struct {
		Enabled bool `json:"enabled" xml:"Enabled"`
		Timeout int  `json:"timeout" xml:"Timeout"`
	} `json:"connectionDraining" xml:"ConnectionDraining"`
	ConnectionSettings struct {
		IdleTimeout int `json:"idleTimeout" xml:"IdleTimeout"`
	} `json:"connectionSettings" xml:"ConnectionSettings"`
	CrossZoneLoadBalancing struct {
		Enabled bool `json:"enabled" xml:"Enabled"`
	} `json:"crossZoneLoadBalancing" xml:"CrossZoneLoadBalancing"`
}

// Clone deep-copies e, so a change can be made to a copy and dropped.
func (e *ClassicLB) Clone() *ClassicLB {
	out := *e
	out.Subnets, out.SecurityGroups = slices.Clone(e.Subnets), slices.Clone(e.SecurityGroups)
	out.Listeners, out.Instances, out.Tags = slices.Clone(e.Listeners), slices.Clone(e.Instances), slices.Clone(e.Tags)
	return &out
}

// NetworkLB is a network load balancer's ELBv2 view, as stored.
type NetworkLB struct {
	ARN            string            `json:"arn"`
	DNSName        string            `json:"dnsName"`
	Scheme         string            `json:"scheme"`
	Subnets        []string          `json:"subnets"`
	SecurityGroups []string          `json:"securityGroups"`
	Listeners      []NetworkListener `json:"listeners"`
	Attributes     map[string]string `json:"attributes"`
	Tags           []Tag             `json:"tags"`
}

// NetworkListener is a network load balancer's listener.
type NetworkListener struct {
	ARN         string `json:"arn"`
	Port        int32  `json:"port"`
	Protocol    string `json:"protocol"`
	TargetGroup string `json:"targetGroup"`
}

// TargetGroup is a target group as stored.
type TargetGroup struct {
	ARN         string            `json:"arn"`
	Name        string            `json:"name"`
	Protocol    string            `json:"protocol"`
	Port        int32             `json:"port"`
	TargetType  string            `json:"targetType"`
	HealthCheck TargetHealthCheck `json:"healthCheck"`
	Targets     []Target          `json:"targets"`
	Tags        []Tag             `json:"tags"`
}

// TargetHealthCheck is a target group's health check.
type TargetHealthCheck struct {
	Protocol  string `json:"protocol"`
	Port      string `json:"port"`
	Path      string `json:"path,omitempty"`
	Interval  int    `json:"interval"`
	Timeout   int    `json:"timeout"`
	Healthy   int    `json:"healthy"`
	Unhealthy int    `json:"unhealthy"`
}

// Target is a target group's registered instance and port.
type Target struct {
	ID   string `json:"id"`
	Port int32  `json:"port"`
}

// Tag is an AWS resource tag, kept on the objects stored in State.
type Tag struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}
