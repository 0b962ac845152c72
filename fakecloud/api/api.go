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

// Package api holds the wire types of the fakecloud HTTP/JSON API, shared by
// the server, its Go client and the harness.
//
// Two APIs share one listener:
//   - the cloud API under /v1, what a CCM calls, authenticated with the cloud
//     token; faults apply here;
//   - the admin API under /admin/v1, what tests and the harness call to shape
//     the cloud and to read the truth about it, authenticated with the admin
//     token; faults never apply here.
//
// Every request carries "Authorization: Bearer <token>". Errors are JSON
// bodies of the form {"error": {"code": "...", "message": "..."}}.
package api

import (
	"fmt"
	"strings"
	"time"
)

// Paths of the cloud API (token: cloud).
const (
	// PathInstances: GET lists instances, terminated ones included, optionally
	// filtered by ?name=. Operation ListInstances.
	PathInstances = "/v1/instances"
	// PathInstance: GET /v1/instances/{id}. Operation GetInstance.
	PathInstance = "/v1/instances/"
	// PathLoadBalancers: GET lists load balancers. Operation
	// ListLoadBalancers.
	PathLoadBalancers = "/v1/loadbalancers"
	// PathLoadBalancer: /v1/loadbalancers/{name}. GET returns one
	// (GetLoadBalancer). PUT with a LoadBalancerSpec creates it (201) or
	// updates it in place (200) (EnsureLoadBalancer); with If-Match: * it
	// only updates (412, code NotFound, when there is none). DELETE removes it (204;
	// 404 when there is none, which a caller may take as done)
	// (DeleteLoadBalancer).
	PathLoadBalancer = "/v1/loadbalancers/"
	// PathRoutes: GET lists routes, only those of ?cluster= when given.
	// Operation ListRoutes.
	PathRoutes = "/v1/routes"
	// PathRoute: /v1/routes/{name}. PUT with a RouteSpec creates it (201; 200
	// when an identical one exists; 409 when the name holds a different one)
	// (CreateRoute). DELETE removes it (204 or 404) (DeleteRoute).
	PathRoute = "/v1/routes/"
)

// Paths of the admin API (token: admin).
const (
	// AdminPathInstances: GET lists every instance as it truly is; POST
	// creates one from a CreateInstanceRequest.
	AdminPathInstances = "/admin/v1/instances"
	// AdminPathInstance: GET /admin/v1/instances/{id or name}; POST
	// .../{id or name}/stop, /start and /terminate change its state.
	AdminPathInstance = "/admin/v1/instances/"
	// AdminPathFaults: GET lists, POST adds one Fault, DELETE clears all;
	// DELETE /admin/v1/faults/{id} removes one.
	AdminPathFaults = "/admin/v1/faults"
	// AdminPathLoadBalancers: GET lists every load balancer as it truly is.
	AdminPathLoadBalancers = "/admin/v1/loadbalancers"
	// AdminPathLoadBalancer: GET /admin/v1/loadbalancers/{name or id}.
	AdminPathLoadBalancer = "/admin/v1/loadbalancers/"
	// AdminPathRoutes: GET lists every route.
	AdminPathRoutes = "/admin/v1/routes"
	// AdminPathRoute: DELETE /admin/v1/routes/{name} removes a route behind
	// the CCM's back.
	AdminPathRoute = "/admin/v1/routes/"
	// AdminPathAudit: GET returns AuditLog entries with Seq > ?since=.
	AdminPathAudit = "/admin/v1/audit"
	// PathHealthz answers "ok" without authentication.
	PathHealthz = "/healthz"
)

// TagService is the load balancer tag that names the Service it serves,
// as namespace/name: fakecloud's own CCM writes it, fakecloud sets it on a
// load balancer made through another dialect from what that dialect's CCM
// names it, and the inspector reads it.
const TagService = "kubernetes-service"

// OpenStackSubnetID is the tenant subnet of fakecloud's OpenStack
// dialect, where its servers' ports and its load balancers' VIPs are.
const OpenStackSubnetID = "subnet-private"

// OpenStackRouterID is the router of fakecloud's OpenStack dialect, whose
// extra routes are its routes.
const OpenStackRouterID = "router-ccm-harness"

// OpenStackInspectorUser is the Keystone user of the harness's inspector,
// in the same domain and project as the CCM's; its password is the
// inspector token.
const OpenStackInspectorUser = "ccm-harness-inspector"

// What fakecloud's AWS dialect (EC2 and Elastic Load Balancing over the
// AWS query protocol) is: one account, one VPC with a subnet per zone and
// one route table, all tagged for one cluster. Requests are signed (SigV4)
// with the access key AWSAccessKeyID, whose secret is the cloud token, or
// by the harness's inspector with AWSInspectorAccessKeyID, whose secret is
// the inspector token.
const (
	AWSAccessKeyID          = "AKIAFAKECLOUD0000001"
	AWSInspectorAccessKeyID = "AKIAFAKECLOUDINSPECT"
	AWSAccountID            = "123456789012"
	AWSVPCID                = "vpc-0fa4ec10d00000001"
	AWSRouteTable           = "rtb-0fa4ec10d00000001"
	// AWSNodeSecurityGroup is the security group every instance is in.
	AWSNodeSecurityGroup = "sg-0fa4ec10d00000001"
	// AWSClusterID is the cluster whose tag, kubernetes.io/cluster/<id>,
	// the VPC's subnets, route table and instances carry.
	AWSClusterID = "ccm-harness"
	// AWSPath, under which EC2 answers at ec2/, Elastic Load Balancing at
	// elb/ and Elastic Load Balancing v2 at elbv2/.
	AWSPath = "/aws/"
)

// AWSSubnetID is the VPC's subnet in the i-th zone (from 0) of the region.
func AWSSubnetID(i int) string { return fmt.Sprintf("subnet-0fa4ec10d%08x", i+1) }

// Operation names, as used in faults and the audit log.
const (
	OpListInstances      = "ListInstances"
	OpGetInstance        = "GetInstance"
	OpListLoadBalancers  = "ListLoadBalancers"
	OpGetLoadBalancer    = "GetLoadBalancer"
	OpEnsureLoadBalancer = "EnsureLoadBalancer"
	OpDeleteLoadBalancer = "DeleteLoadBalancer"
	OpListRoutes         = "ListRoutes"
	OpCreateRoute        = "CreateRoute"
	OpDeleteRoute        = "DeleteRoute"
	// OpAuthenticate is a login to the OpenStack dialect's Keystone.
	OpAuthenticate = "Authenticate"
	// OpAny matches every cloud API operation in a Fault.
	OpAny = "*"
)

// operations are the cloud API operations a Fault can name besides OpAny.
var operations = []string{
	OpListInstances, OpGetInstance,
	OpListLoadBalancers, OpGetLoadBalancer, OpEnsureLoadBalancer, OpDeleteLoadBalancer,
	OpListRoutes, OpCreateRoute, OpDeleteRoute,
	OpAuthenticate,
}

// InstanceState is the power state of an instance.
type InstanceState string

const (
	StateRunning    InstanceState = "running"
	StateStopped    InstanceState = "stopped"
	StateTerminated InstanceState = "terminated"
)

// Address types are Kubernetes' NodeAddressType names, so a CCM can hand them
// through unchanged.
const (
	AddressInternalIP  = "InternalIP"
	AddressExternalIP  = "ExternalIP"
	AddressHostname    = "Hostname"
	AddressInternalDNS = "InternalDNS"
	AddressExternalDNS = "ExternalDNS"
)

// Address is one address of an instance.
type Address struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// Instance is a virtual machine in the fake cloud.
type Instance struct {
	ID           string        `json:"id"`
	Name         string        `json:"name"`
	Hostname     string        `json:"hostname"`
	InstanceType string        `json:"instanceType"`
	Zone         string        `json:"zone"`
	Region       string        `json:"region"`
	State        InstanceState `json:"state"`
	Addresses    []Address     `json:"addresses"`
	CreatedAt    time.Time     `json:"createdAt"`
}

// InstanceList is the body of a list response.
type InstanceList struct {
	Instances []Instance `json:"instances"`
}

// CreateInstanceRequest asks for a new running instance. Empty fields get the
// server's defaults: Hostname = Name, InstanceType "fake.medium", Zone in
// turn from the region's zones, Region the server's, and Addresses two
// InternalIPs, one ExternalIP and a Hostname allocated by the server.
type CreateInstanceRequest struct {
	Name         string    `json:"name"`
	Hostname     string    `json:"hostname,omitempty"`
	InstanceType string    `json:"instanceType,omitempty"`
	Zone         string    `json:"zone,omitempty"`
	Region       string    `json:"region,omitempty"`
	Addresses    []Address `json:"addresses,omitempty"`
}

// Protocol is the transport protocol of a load balancer listener.
type Protocol string

const (
	ProtocolTCP Protocol = "TCP"
	ProtocolUDP Protocol = "UDP"
)

// Listener is one frontend port of a load balancer. TCP and UDP listeners
// may share a port number.
type Listener struct {
	Port     int32    `json:"port"`
	Protocol Protocol `json:"protocol"`
	// NodePort is the backend port traffic goes to. 0 means Port itself, as
	// for a Service with allocateLoadBalancerNodePorts=false.
	NodePort int32 `json:"nodePort"`
}

// LoadBalancerSpec is what a caller wants a load balancer to be. A PUT sends
// all of it and replaces the previous spec.
type LoadBalancerSpec struct {
	Listeners []Listener `json:"listeners"`
	// Backends are instance IDs; traffic goes to each one's first
	// InternalIP.
	Backends []string `json:"backends"`
	// HealthCheckNodePort, when not 0, is probed on every backend at
	// http://<address>:<port>/healthz; only backends answering 200 get new
	// connections.
	HealthCheckNodePort int32 `json:"healthCheckNodePort,omitempty"`
	// SourceRanges are the CIDRs clients may come from; empty allows all.
	SourceRanges []string `json:"sourceRanges,omitempty"`
	// ClientAffinitySeconds, when not 0, keeps a client (by its address)
	// on the backend it last reached for as long as it comes back within
	// that many seconds, as a Service's sessionAffinity ClientIP asks;
	// 0 balances every connection afresh.
	ClientAffinitySeconds int32 `json:"clientAffinitySeconds,omitempty"`
	// ProxyProtocol, when not 0, makes the load balancer open each TCP
	// connection to a backend with a PROXY protocol header naming the
	// client and the listener, as HAProxy's send-proxy (1, the text
	// header) or send-proxy-v2 (2, the binary one) does, so a backend
	// behind a proxying load balancer still learns who its client is.
	// 0 sends none. UDP listeners are unaffected: the header is TCP's.
	ProxyProtocol int32 `json:"proxyProtocol,omitempty"`
	// IPFamilies are the address families the load balancer serves, as a
	// Service's spec.ipFamilies: IPv4, or IPv4 and IPv6 in either order
	// (dual-stack: it gets an IPv6 address too, from the cloud's IPv6
	// range, and listens on both). Empty is IPv4 alone.
	IPFamilies []string `json:"ipFamilies,omitempty"`
	// Tags are kept as given. A CCM records there whose load balancer it is,
	// so a leaked one can be traced back to its Service.
	Tags map[string]string `json:"tags,omitempty"`
}

// The address families of LoadBalancerSpec.IPFamilies, as Kubernetes
// names them.
const (
	FamilyIPv4 = "IPv4"
	FamilyIPv6 = "IPv6"
)

// LoadBalancer is a load balancer in the fake cloud. Its listeners are real
// sockets on IP, forwarding to the backends.
type LoadBalancer struct {
	// Name is the caller's. ID and IP are the server's and survive updates.
	Name string `json:"name"`
	ID   string `json:"id"`
	IP   string `json:"ip"`
	// IPv6 is its IPv6 address, for one whose IPFamilies have IPv6; it
	// too survives updates that keep IPv6.
	IPv6 string `json:"ipv6,omitempty"`
	// Hostname is the DNS name a dialect gives the load balancer (AWS's
	// Elastic Load Balancing), which stands for IP; empty in the others.
	Hostname string `json:"hostname,omitempty"`
	LoadBalancerSpec
	// BackendStatus is read-only: how the data plane sees each backend,
	// in the order of Backends.
	BackendStatus []BackendStatus `json:"backendStatus"`
	CreatedAt     time.Time       `json:"createdAt"`
}

// BackendStatus is the data plane's view of one backend.
type BackendStatus struct {
	Instance string `json:"instance"`
	// Address is the instance's first InternalIP, empty if it has none.
	Address string `json:"address,omitempty"`
	// Healthy backends get new connections.
	Healthy bool `json:"healthy"`
	// LastError says why a backend is not healthy.
	LastError string `json:"lastError,omitempty"`
}

// LoadBalancerList is the body of a list response.
type LoadBalancerList struct {
	LoadBalancers []LoadBalancer `json:"loadBalancers"`
}

// RouteSpec is the body of a CreateRoute call.
type RouteSpec struct {
	Cluster         string `json:"cluster"`
	DestinationCIDR string `json:"destinationCIDR"`
	// TargetInstance is an instance ID.
	TargetInstance string `json:"targetInstance"`
}

// Route sends DestinationCIDR to TargetInstance.
type Route struct {
	Name string `json:"name"`
	RouteSpec
	// Blackhole is read-only: the target instance is terminated or gone.
	Blackhole bool      `json:"blackhole"`
	CreatedAt time.Time `json:"createdAt"`
}

// RouteList is the body of a list response.
type RouteList struct {
	Routes []Route `json:"routes"`
}

// AuditEntry records one API call, admin calls included.
type AuditEntry struct {
	Seq       int64     `json:"seq"`
	Time      time.Time `json:"time"`
	Caller    string    `json:"caller"` // "cloud", "inspector", "admin" or "anonymous"
	Method    string    `json:"method"`
	Path      string    `json:"path"`
	Operation string    `json:"operation,omitempty"`
	// Action is the AWS dialect's name for the call (DescribeInstances).
	Action   string   `json:"action,omitempty"`
	Instance string   `json:"instance,omitempty"`
	Status   int      `json:"status"`
	Fault    string   `json:"fault,omitempty"` // ID of the fault that fired
	Duration Duration `json:"duration"`
}

// AuditLog is the body of GET /admin/v1/audit.
type AuditLog struct {
	Entries []AuditEntry `json:"entries"`
}

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail names what went wrong.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error codes.
const (
	CodeUnauthorized = "Unauthorized"
	CodeNotFound     = "NotFound"
	CodeConflict     = "Conflict"
	CodeInvalid      = "Invalid"
	CodeThrottled    = "Throttled"
	CodeInjected     = "InjectedFault"
	CodeInternal     = "Internal"
)

// ParseAddresses parses the "Type=address,Type=address" form a corrupt fault
// uses for addresses. The empty string is no addresses at all. Neither types
// nor addresses are checked: a lying cloud may lie about anything.
func ParseAddresses(s string) ([]Address, error) {
	addrs := []Address{}
	if strings.TrimSpace(s) == "" {
		return addrs, nil
	}
	for _, pair := range strings.Split(s, ",") {
		typ, addr, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || typ == "" {
			return nil, fmt.Errorf("%q is not of the form Type=address (e.g. InternalIP=127.1.0.9)", pair)
		}
		addrs = append(addrs, Address{Type: typ, Address: addr})
	}
	return addrs, nil
}

// FormatAddresses is the inverse of ParseAddresses.
func FormatAddresses(addrs []Address) string {
	parts := make([]string, len(addrs))
	for i, a := range addrs {
		parts[i] = a.Type + "=" + a.Address
	}
	return strings.Join(parts, ",")
}
