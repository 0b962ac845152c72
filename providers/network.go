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

package providers

import (
	"context"

	v1 "k8s.io/api/core/v1"
)

// LoadBalancer is what a cloud says about a Service's load balancer.
type LoadBalancer struct {
	Name string
	// Service is "namespace/name" of the Service the cloud's records tie
	// the load balancer to; "" when the cloud cannot say.
	Service string
	// ServiceUID is the UID the cloud's records name, if any.
	ServiceUID string
	IP         string
	// IPv6 is its IPv6 address where it serves both families (a
	// dual-stack Service's); "" otherwise, or where the cloud cannot say.
	IPv6 string
	// Hostname is the DNS name the cloud gives the load balancer, which
	// stands for IP, if it names it so (AWS's); a Service's ingress then
	// carries the hostname rather than the IP.
	Hostname  string
	Listeners []Listener
	// Backends are the names of the nodes traffic may go to.
	Backends            []string
	HealthCheckNodePort int32
	SourceRanges        []string
	// ClientAffinity is how the load balancer keeps a client on one
	// backend (a Service's sessionAffinity ClientIP); nil when it does not.
	ClientAffinity *ClientAffinity
	// ProxyProtocol is the version of the PROXY protocol (1 or 2) the load
	// balancer speaks to its backends, each connection starting with the
	// client's address; 0 when it speaks none.
	ProxyProtocol int32
}

// ClientAffinity is a load balancer's session affinity by client address.
type ClientAffinity struct {
	// TimeoutSeconds is how long a client keeps its backend after its
	// last connection; 0 when the cloud's API does not say (Octavia's
	// SOURCE_IP persistence has no timeout of its own).
	TimeoutSeconds int32
}

// Listener is one frontend port of a load balancer.
type Listener struct {
	Port     int32
	Protocol v1.Protocol
	// NodePort is where traffic goes on the backends; 0 when the Service
	// allocates none.
	NodePort int32
}

// LoadBalancerInspector is an Inspector that can list load balancers.
type LoadBalancerInspector interface {
	LoadBalancers(ctx context.Context) ([]LoadBalancer, error)
}

// Route is a pod CIDR route in the cloud's network.
type Route struct {
	Name            string
	DestinationCIDR string
	// TargetNode is the name of the node the route sends traffic to.
	TargetNode string
	// Blackhole is true when the target no longer exists.
	Blackhole bool
}

// RouteInspector is an Inspector that can list routes.
type RouteInspector interface {
	Routes(ctx context.Context) ([]Route, error)
}

// RouteTamperer removes a route behind the CCM's back, to see it repaired.
type RouteTamperer interface {
	DeleteRoute(ctx context.Context, name string) error
}

// Operation is a cloud call a FaultInjector can make fail.
type Operation string

// OpEnsureLoadBalancer is the creation or update of a load balancer.
const OpEnsureLoadBalancer Operation = "EnsureLoadBalancer"

// IPv6LoadBalancerCloud is a cloud that can tell whether it gives load
// balancers IPv6 addresses here (an emulated one needs root to route its
// IPv6 range). A cloud that cannot tell is taken at its profile's word.
type IPv6LoadBalancerCloud interface {
	IPv6LoadBalancers() bool
}

// FaultInjector makes a cloud fail on purpose, for specs about how a CCM
// copes. Clouds that cannot are not FaultInjectors, and those specs skip.
type FaultInjector interface {
	// Fail makes every call of op fail until clear is called.
	Fail(ctx context.Context, op Operation, message string) (clear func(context.Context) error, err error)
}
