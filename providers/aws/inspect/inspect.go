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

// Package inspect asks AWS what is true, through AWS's own public API and
// the SDK its users use (aws-sdk-go-v2: EC2, Elastic Load Balancing and
// Elastic Load Balancing v2), with credentials of its own: the instance
// behind a node, the load balancers with their listeners, backends, health
// checks and source ranges, and the routes of the cluster's route tables;
// and it stops, starts and terminates instances. It knows nothing of
// fakecloud: the same code asks fakecloud's emulated AWS here and a real
// account in a provider's CI.
//
// What the CCM makes of an instance is read as the AWS CCM reads it
// (pkg/providers/v1/aws.go of cloud-provider-aws): the provider ID
// aws:///<zone>/<instance ID>, the private addresses of the in-use network
// interfaces, the public address, and the private DNS name, which is also
// the node's name.
package inspect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/smithy-go"
	v1 "k8s.io/api/core/v1"

	"sigs.k8s.io/ccm-harness/providers"
)

// Tags the AWS CCM puts on what it makes, by which a load balancer is
// traced to its Service and a cluster's resources are found.
const (
	TagServiceName   = "kubernetes.io/service-name"
	TagClusterPrefix = "kubernetes.io/cluster/"
	// nlbClientRulePrefix describes the rules of the nodes' security
	// groups that admit a network load balancer's clients.
	nlbClientRulePrefix = "kubernetes.io/rule/nlb/client="
)

// Config says which AWS to ask, and as whom.
type Config struct {
	// Region is the region the cluster runs in.
	Region string
	// EC2, ELB and ELBv2 are the services' endpoints; "" is AWS's own.
	EC2, ELB, ELBv2 string
	// Credentials are the inspector's own, not the CCM's.
	Credentials aws.CredentialsProvider
	// ClusterID, when set, limits routes to the route tables tagged
	// kubernetes.io/cluster/<ClusterID>, as the CCM finds its own.
	ClusterID string
	// Resolver resolves a load balancer's DNS name to its address, as a
	// client of the load balancer would; nil is the system's.
	Resolver *net.Resolver
	// NodeIPFamilies are the families of an instance's node addresses,
	// in order, as the CCM's [Global] NodeIPFamilies names them: "ipv4",
	// "ipv6". Empty is the CCM's default, ipv4 alone.
	NodeIPFamilies []string
}

// Node IP families, as the CCM's NodeIPFamilies names them.
const (
	FamilyIPv4 = "ipv4"
	FamilyIPv6 = "ipv6"
)

// Cloud is AWS as the inspector sees it.
type Cloud struct {
	cfg   Config
	ec2   *ec2.Client
	elb   *elb.Client
	elbv2 *elbv2.Client
}

// New is the inspector of the AWS cfg names.
func New(cfg Config) *Cloud {
	endpoint := func(url string) *string {
		if url == "" {
			return nil
		}
		return aws.String(url)
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	return &Cloud{
		cfg:   cfg,
		ec2:   ec2.New(ec2.Options{Region: cfg.Region, BaseEndpoint: endpoint(cfg.EC2), Credentials: cfg.Credentials}),
		elb:   elb.New(elb.Options{Region: cfg.Region, BaseEndpoint: endpoint(cfg.ELB), Credentials: cfg.Credentials}),
		elbv2: elbv2.New(elbv2.Options{Region: cfg.Region, BaseEndpoint: endpoint(cfg.ELBv2), Credentials: cfg.Credentials}),
	}
}

// FromConfig is the inspector of the AWS an SDK configuration names, as
// config.LoadDefaultConfig reads it from the environment and the shared
// files, the way the AWS CLI does (AWS_PROFILE, AWS_REGION, a service's
// own endpoint from AWS_ENDPOINT_URL_EC2 or a services section, ...):
// a real account, or an emulation someone else runs. clusterID and
// resolver are Config's.
func FromConfig(aws aws.Config, clusterID string, resolver *net.Resolver) *Cloud {
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	return &Cloud{
		cfg:   Config{Region: aws.Region, Credentials: aws.Credentials, ClusterID: clusterID, Resolver: resolver},
		ec2:   ec2.NewFromConfig(aws),
		elb:   elb.NewFromConfig(aws),
		elbv2: elbv2.NewFromConfig(aws),
	}
}

// What the inspector answers, checked at compile time.
var (
	_ providers.Inspector             = (*Cloud)(nil)
	_ providers.LoadBalancerInspector = (*Cloud)(nil)
	_ providers.RouteInspector        = (*Cloud)(nil)
	_ providers.RouteTamperer         = (*Cloud)(nil)
)

// Instance is the live EC2 instance whose private DNS name is the node's.
func (c *Cloud) Instance(ctx context.Context, name string) (providers.Instance, error) {
	insts, err := c.instances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("private-dns-name"), Values: []string{name}},
	}})
	if err != nil {
		return providers.Instance{}, err
	}
	var live []ec2types.Instance
	for _, inst := range insts {
		if inst.State == nil || inst.State.Name != ec2types.InstanceStateNameTerminated {
			live = append(live, inst)
		}
	}
	switch len(live) {
	case 0:
		return providers.Instance{}, fmt.Errorf("EC2 has no live instance with private DNS name %s (the node's name)", name)
	case 1:
		return c.convert(live[0]), nil
	}
	var ids []string
	for _, inst := range live {
		ids = append(ids, aws.ToString(inst.InstanceId))
	}
	return providers.Instance{}, fmt.Errorf("EC2 has %d live instances with private DNS name %s: %s", len(live), name, strings.Join(ids, ", "))
}

func (c *Cloud) convert(inst ec2types.Instance) providers.Instance {
	zone := ""
	if inst.Placement != nil {
		zone = aws.ToString(inst.Placement.AvailabilityZone)
	}
	return providers.Instance{
		Name:         aws.ToString(inst.PrivateDnsName),
		ProviderID:   "aws:///" + zone + "/" + aws.ToString(inst.InstanceId),
		InstanceType: string(inst.InstanceType),
		Zone:         zone,
		Region:       c.cfg.Region,
		Addresses:    Addresses(inst, c.cfg.NodeIPFamilies),
		Running:      inst.State != nil && inst.State.Name == ec2types.InstanceStateNameRunning,
	}
}

// Addresses are an instance's node addresses as the AWS CCM makes them
// (getInstanceNodeAddress), each family's in the order families names
// them (none is ipv4 alone, the CCM's default). ipv4
// (extractIPv4NodeAddresses): the private addresses of each in-use
// network interface, the public address, the private DNS name as
// InternalDNS and Hostname, the public one as ExternalDNS. ipv6
// (extractIPv6NodeAddresses): the first IPv6 address of each in-use
// network interface, as an InternalIP, even if public.
func Addresses(inst ec2types.Instance, families []string) []v1.NodeAddress {
	if len(families) == 0 {
		families = []string{FamilyIPv4}
	}
	nics := slices.Clone(inst.NetworkInterfaces)
	slices.SortStableFunc(nics, func(a, b ec2types.InstanceNetworkInterface) int {
		return int(deviceIndex(a) - deviceIndex(b))
	})
	var out []v1.NodeAddress
	for _, f := range families {
		switch f {
		case FamilyIPv4:
			out = append(out, ipv4Addresses(inst, nics)...)
		case FamilyIPv6:
			for _, nic := range nics {
				if nic.Status == ec2types.NetworkInterfaceStatusInUse && len(nic.Ipv6Addresses) > 0 {
					if a := aws.ToString(nic.Ipv6Addresses[0].Ipv6Address); net.ParseIP(a) != nil {
						out = append(out, v1.NodeAddress{Type: v1.NodeInternalIP, Address: net.ParseIP(a).String()})
					}
				}
			}
		}
	}
	return out
}

// ipv4Addresses are the ipv4 family's addresses of inst, its network
// interfaces nics in device order.
func ipv4Addresses(inst ec2types.Instance, nics []ec2types.InstanceNetworkInterface) []v1.NodeAddress {
	var out []v1.NodeAddress
	for _, nic := range nics {
		if nic.Status != ec2types.NetworkInterfaceStatusInUse {
			continue
		}
		for _, ip := range nic.PrivateIpAddresses {
			if a := aws.ToString(ip.PrivateIpAddress); a != "" {
				if p := net.ParseIP(a); p != nil && p.To4() != nil {
					out = append(out, v1.NodeAddress{Type: v1.NodeInternalIP, Address: a})
				}
			}
		}
	}
	if a := aws.ToString(inst.PublicIpAddress); a != "" {
		out = append(out, v1.NodeAddress{Type: v1.NodeExternalIP, Address: a})
	}
	if dns := aws.ToString(inst.PrivateDnsName); dns != "" {
		out = append(out, v1.NodeAddress{Type: v1.NodeInternalDNS, Address: dns}, v1.NodeAddress{Type: v1.NodeHostName, Address: dns})
	}
	if dns := aws.ToString(inst.PublicDnsName); dns != "" {
		out = append(out, v1.NodeAddress{Type: v1.NodeExternalDNS, Address: dns})
	}
	return out
}

func deviceIndex(nic ec2types.InstanceNetworkInterface) int32 {
	if nic.Attachment == nil {
		return 0
	}
	return aws.ToInt32(nic.Attachment.DeviceIndex)
}

// instances lists every instance in answer to in, page by page.
func (c *Cloud) instances(ctx context.Context, in *ec2.DescribeInstancesInput) ([]ec2types.Instance, error) {
	var out []ec2types.Instance
	p := ec2.NewDescribeInstancesPaginator(c.ec2, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, c.fail("EC2", "DescribeInstances", err)
		}
		for _, r := range page.Reservations {
			out = append(out, r.Instances...)
		}
	}
	return out, nil
}

// names maps instance IDs to their private DNS names, the nodes' names.
func (c *Cloud) names(ctx context.Context) (map[string]string, error) {
	insts, err := c.instances(ctx, &ec2.DescribeInstancesInput{})
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(insts))
	for _, inst := range insts {
		out[aws.ToString(inst.InstanceId)] = aws.ToString(inst.PrivateDnsName)
	}
	return out, nil
}

// nameOf is the node name of instance id, or the ID where it has none (a
// terminated instance, another account's).
func nameOf(names map[string]string, id string) string {
	if n := names[id]; n != "" {
		return n
	}
	return id
}

// idOf is the ID of the live instance called name.
func (c *Cloud) idOf(ctx context.Context, name string) (string, error) {
	inst, err := c.Instance(ctx, name)
	if err != nil {
		return "", err
	}
	_, id, _ := strings.Cut(strings.TrimPrefix(inst.ProviderID, "aws:///"), "/")
	return id, nil
}

// Stop stops the instance of node name with EC2's StopInstances.
func (c *Cloud) Stop(ctx context.Context, name string) error {
	id, err := c.idOf(ctx, name)
	if err != nil {
		return err
	}
	_, err = c.ec2.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{id}})
	return c.fail("EC2", "StopInstances", err)
}

// Start starts it again.
func (c *Cloud) Start(ctx context.Context, name string) error {
	id, err := c.idOf(ctx, name)
	if err != nil {
		return err
	}
	_, err = c.ec2.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{id}})
	return c.fail("EC2", "StartInstances", err)
}

// Terminate terminates it; an instance gone already is no error, so that
// cleanup can always call it.
func (c *Cloud) Terminate(ctx context.Context, name string) error {
	insts, err := c.instances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("private-dns-name"), Values: []string{name}},
	}})
	if err != nil {
		return err
	}
	var ids []string
	for _, inst := range insts {
		ids = append(ids, aws.ToString(inst.InstanceId))
	}
	if len(ids) == 0 {
		return nil
	}
	_, err = c.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids})
	return c.fail("EC2", "TerminateInstances", err)
}

// LoadBalancers are the classic and the network load balancers.
//
// No AWS call lists them whole: a load balancer listed by one call and
// deleted (by the CCM, at once) before the next, which asks about it
// (its tags, its listeners), is not found there. Such a listing is read
// again, up to three times; it says nothing of the CCM.
func (c *Cloud) LoadBalancers(ctx context.Context) ([]providers.LoadBalancer, error) {
	var err error
	for range 3 {
		var lbs []providers.LoadBalancer
		if lbs, err = c.loadBalancers(ctx); err == nil || !goneMeanwhile(err) {
			return lbs, err
		}
	}
	return nil, err
}

// goneMeanwhile reports whether err is AWS's answer about a load balancer,
// target group or listener that is gone.
func goneMeanwhile(err error) bool {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	switch apiErr.ErrorCode() {
	case "LoadBalancerNotFound", "AccessPointNotFound", "TargetGroupNotFound", "ListenerNotFound":
		return true
	}
	return false
}

func (c *Cloud) loadBalancers(ctx context.Context) ([]providers.LoadBalancer, error) {
	names, err := c.names(ctx)
	if err != nil {
		return nil, err
	}
	classic, err := c.classic(ctx, names)
	if err != nil {
		return nil, err
	}
	network, err := c.network(ctx, names)
	if err != nil {
		return nil, err
	}
	return append(classic, network...), nil
}

// resolve is the address a load balancer's DNS name stands for, as a
// client finds it; "" while it resolves to nothing (a real AWS name takes
// a while to appear in DNS).
func (c *Cloud) resolve(ctx context.Context, name string) string {
	if name == "" {
		return ""
	}
	addrs, err := c.cfg.Resolver.LookupHost(ctx, name)
	if err != nil || len(addrs) == 0 {
		return ""
	}
	slices.Sort(addrs)
	return addrs[0]
}

// httpPort is the port of an HTTP or HTTPS health check target, 0 for
// any other.
func httpPort(protocol, port string) int32 {
	if protocol != "HTTP" && protocol != "HTTPS" {
		return 0
	}
	n, err := strconv.ParseInt(port, 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}

// allowsAll reports whether a CIDR admits every client, which a Service
// without source ranges asks for.
func allowsAll(cidr string) bool { return cidr == "0.0.0.0/0" || cidr == "::/0" }

// fail names the service and the call of err.
func (c *Cloud) fail(service, call string, err error) error {
	if err == nil {
		return nil
	}
	var ctxErr interface{ Timeout() bool }
	if errors.As(err, &ctxErr) && ctxErr.Timeout() {
		return fmt.Errorf("%s %s in %s timed out: %w", service, call, c.cfg.Region, err)
	}
	return fmt.Errorf("%s %s in %s: %w", service, call, c.cfg.Region, err)
}

// tagged reports whether tags hold key (with any value).
func tagged(tags []elbv2types.Tag, key string) (string, bool) {
	for _, t := range tags {
		if aws.ToString(t.Key) == key {
			return aws.ToString(t.Value), true
		}
	}
	return "", false
}

// Check asks EC2 for its zones, and, with a cluster ID, for the subnets
// tagged for the cluster, as the CCM's first calls do: a cloud that
// refuses the inspector, or holds no cluster of that ID, is said at once.
func (c *Cloud) Check(ctx context.Context) error {
	if _, err := c.ec2.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{}); err != nil {
		var apiErr smithy.APIError
		switch {
		case errors.As(err, &apiErr) && apiErr.ErrorCode() == "AuthFailure":
			return fmt.Errorf("EC2 in %s refuses the credentials (AuthFailure: %s): fix them", c.cfg.Region, apiErr.ErrorMessage())
		case errors.As(err, &apiErr):
			return c.fail("EC2", "DescribeAvailabilityZones", err)
		}
		return fmt.Errorf("%w (is the endpoint EC2's (AWS_ENDPOINT_URL_EC2, or endpoint_url in the shared config), and does it answer?)", c.fail("EC2", "DescribeAvailabilityZones", err))
	}
	if c.cfg.ClusterID == "" {
		return nil
	}
	tag := TagClusterPrefix + c.cfg.ClusterID
	out, err := c.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{tag}}}})
	if err != nil {
		return c.fail("EC2", "DescribeSubnets", err)
	}
	if len(out.Subnets) == 0 {
		return fmt.Errorf("EC2 in %s has no subnet tagged %s: is %q the cluster's ID (the CCM's KubernetesClusterID)?", c.cfg.Region, tag, c.cfg.ClusterID)
	}
	return nil
}
