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

// Package aws is the provider profile of the real AWS CCM
// (k8s.io/cloud-provider-aws) against fakecloud speaking AWS's APIs: EC2
// shows fakecloud's instances in one VPC, tagged for the cluster, with a
// subnet per zone and one route table, over the AWS query protocol with
// Signature Version 4.
//
// The CCM is configured as AWS documents for a custom endpoint: [Global]
// with the region, VPC, subnet and cluster ID (with all four set the CCM
// never asks the instance metadata service who it is), and a
// [ServiceOverride] per service pointing at fakecloud; credentials come
// from the SDK's environment variables, and the metadata client is turned
// off (AWS_EC2_METADATA_DISABLED), so nothing reaches the network. A node
// is named as its instance's private DNS name, by which the CCM looks it
// up. Load balancers are classic Elastic Load Balancing ones, whose DNS
// name is the Service's ingress hostname and stands for fakecloud's real
// listeners. The profile claims every capability, and the extended
// features its load balancers have (classicFeatures, nlbFeatures).
package aws

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/manifests"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/providers/aws/inspect"
	"sigs.k8s.io/ccm-harness/providers/emulated"
	"sigs.k8s.io/ccm-harness/specs"
)

// Name selects this profile.
const Name = "aws"

// Manifests are cloud-provider-aws's own (examples/existing-cluster/base
// of v1.37.1, the same files as v1.36.2's, unchanged): its ServiceAccount,
// RBAC and DaemonSet.
var Manifests = manifests.Embedded(manifestDir, "manifests")

//go:embed manifests/*.yaml
var manifestDir embed.FS

// Profile returns the AWS provider's profile.
func Profile() providers.Profile {
	return providers.Profile{
		Name:             Name,
		CloudProvider:    "aws",
		ProviderIDScheme: "aws",
		CCM:              CCM,
		CloudBinaries:    []binaries.Component{emulated.FakeCloud},
		Manifests:        Manifests,
		Capabilities:     providers.NewCapabilities(providers.Instances, providers.Zones, providers.NodeLifecycle, providers.LoadBalancers, providers.Routes),
		Features:         classicFeatures,
		CloudFeatures:    featuresOf,
		Config:           Config{},
		NewCloud: func(config []byte) (providers.Cloud, error) {
			var c Config
			if len(config) > 0 {
				if err := yaml.UnmarshalStrict(config, &c); err != nil {
					return nil, fmt.Errorf("aws provider config: %w", err)
				}
			}
			switch c.LoadBalancerType {
			case "":
				c.LoadBalancerType = Classic
			case Classic, NLB:
			default:
				return nil, fmt.Errorf("aws provider config: loadBalancerType %q is neither %q nor %q", c.LoadBalancerType, Classic, NLB)
			}
			if c.Reach != nil {
				// What shapes fakecloud or the CCM's config means nothing to
				// a cloud the harness does not run.
				if !reflect.ValueOf(c.Config).IsZero() || c.WrongSecretKey || c.EndpointURL != "" || c.ClusterID != "" || c.IPv6 || c.NodeIPFamilies != nil {
					return nil, fmt.Errorf("aws provider config: with reach, give only reach and loadBalancerType: the rest shapes the cloud the harness runs")
				}
				r, err := newReached(*c.Reach, c.LoadBalancerType)
				if err != nil {
					return nil, err
				}
				return r, nil
			}
			if err := checkFamilies(c.NodeIPFamilies); err != nil {
				return nil, fmt.Errorf("aws provider config: %w", err)
			}
			return &Cloud{Cloud: emulated.NewCloud(c.Config, emulated.Dialect{DualStack: c.IPv6}), config: c}, nil
		},
	}
}

func init() { providers.Register(Profile()) }

// classicFeatures are the extended load-balancer features the AWS CCM
// claims with classic load balancers. It does not claim, each seen failing
// against fakecloud's Elastic Load Balancing:
//   - load-balancer-udp: a classic load balancer carries TCP only, and the
//     CCM refuses any other protocol for one ("Protocol UDP not supported
//     by LoadBalancer": checkProtocol in pkg/providers/v1/aws.go of v1.37.1
//     and v1.36.2); UDP needs a Network Load Balancer;
//   - load-balancer-mixed-protocol: the CCM refuses a Service that mixes
//     protocols for every kind of load balancer ("mixed protocol is not
//     supported for LoadBalancer": checkMixedProtocol, same file), though a
//     network load balancer could carry both on one port (TCP_UDP);
//   - load-balancer-no-node-ports: the CCM skips every port without a node
//     port ("Ignoring port without NodePort defined") and asks for a load
//     balancer with no listeners, which AWS refuses ("Member must not be
//     null"); the Service never gets an ingress;
//   - load-balancer-source-ip: a classic load balancer proxies;
//   - load-balancer-session-affinity: EnsureLoadBalancer refuses every
//     sessionAffinity but None, for either kind of load balancer
//     ("unsupported load balancer affinity: ClientIP", aws.go:2378-2381 of
//     v1.37.1); the Service never gets an ingress.
var classicFeatures = providers.NewFeatures(specs.LoadBalancerSourceRanges, specs.LoadBalancerHealthChecks)

// nlbFeatures are those with Network Load Balancers: UDP too. Not
// mixed-protocol or session affinity (above), nor no-node-ports: the CCM makes a network load
// balancer with no listeners, whose hostname then serves nothing; nor
// load-balancer-source-ip: the harness's runs with network load balancers
// are on simulated nodes, with no data path, so the claim was never seen
// to hold.
var nlbFeatures = providers.NewFeatures(specs.LoadBalancerUDP, specs.LoadBalancerSourceRanges, specs.LoadBalancerHealthChecks)

// featuresOf are the CCM's features with the load balancers its cloud's
// config asks for, and node-dual-stack in a cloud with IPv6, whose CCM
// is told NodeIPFamilies ipv4 and ipv6: it then reports an instance's
// IPv6 address beside its IPv4 ones (getInstanceNodeAddress, aws.go:862-882
// of v1.37.1). Not load-balancer-dual-stack: the CCM asks for no IPv6 of
// a load balancer (no IpAddressType in v1.37.1 or v1.36.2).
func featuresOf(cloud providers.Cloud) providers.Features {
	f := classicFeatures
	if c, ok := cloud.(interface{ loadBalancerType() string }); ok && c.loadBalancerType() == NLB {
		f = nlbFeatures
	}
	if c, ok := cloud.(*Cloud); ok && c.config.IPv6 {
		f = providers.NewFeatures(append(f.List(), specs.NodeDualStack)...)
	}
	return f
}

func (c *Cloud) loadBalancerType() string   { return c.config.LoadBalancerType }
func (r *reached) loadBalancerType() string { return r.lbType }

// ServiceAnnotations ask the CCM for a Network Load Balancer when the
// config says so.
func (c *Cloud) ServiceAnnotations() map[string]string {
	return annotationsFor(c.config.LoadBalancerType)
}

// ServiceAnnotations: as the emulated cloud's.
func (r *reached) ServiceAnnotations() map[string]string { return annotationsFor(r.lbType) }

func annotationsFor(lbType string) map[string]string {
	if lbType == NLB {
		return map[string]string{AnnotationLoadBalancerType: NLB}
	}
	return nil
}

// Config is the AWS provider's --provider-config file: fakecloud's own
// settings, and what the CCM is told, for a user's mistakes to be tried.
type Config struct {
	emulated.Config
	// WrongSecretKey gives the CCM a secret access key EC2 refuses.
	WrongSecretKey bool `json:"wrongSecretKey,omitempty"`
	// EndpointURL replaces fakecloud's EC2 URL in the CCM's
	// [ServiceOverride], as a user who mistyped it would.
	EndpointURL string `json:"endpointURL,omitempty"`
	// ClusterID replaces the CCM's [Global] KubernetesClusterID, as a user
	// whose resources carry another cluster's tag would.
	ClusterID string `json:"clusterID,omitempty"`
	// Reach, when set, is an AWS the harness does not start but reaches
	// with the environment's configuration (a real account, or fakecloud
	// run by someone else), for a cluster it did not make either
	// (--cluster=existing). With it, only LoadBalancerType may be given.
	Reach *Reach `json:"reach,omitempty"`
	// LoadBalancerType is the kind of load balancer the specs' Services
	// ask the CCM for: "classic" (default, Elastic Load Balancing) or
	// "nlb" (Network Load Balancers of Elastic Load Balancing v2, by the
	// Service annotation service.beta.kubernetes.io/aws-load-balancer-type).
	LoadBalancerType string `json:"loadBalancerType,omitempty"`
	// IPv6 gives the cluster's VPC and subnets IPv6, as a dual-stack
	// cluster's owner does: each instance's network interface gets an IPv6
	// address beside its IPv4 one (fakecloud --internal-cidr-v6), and the
	// CCM is told [Global] NodeIPFamilies ipv4 and ipv6. The provider then
	// claims node-dual-stack.
	IPv6 bool `json:"ipv6,omitempty"`
	// NodeIPFamilies replaces the families the CCM's [Global]
	// NodeIPFamilies names ("ipv4", "ipv6"), as a user who left one out
	// would; the harness still expects the cluster's (ipv4, and ipv6 with
	// IPv6).
	NodeIPFamilies []string `json:"nodeIPFamilies,omitempty"`
}

// checkFamilies refuses a NodeIPFamilies the CCM would not take: empty
// once given, or a family that is not ipv4 or ipv6, or named twice.
func checkFamilies(families []string) error {
	if families != nil && len(families) == 0 {
		return fmt.Errorf("nodeIPFamilies is empty: name %q, %q or both, or leave it out", inspect.FamilyIPv4, inspect.FamilyIPv6)
	}
	for i, f := range families {
		if (f != inspect.FamilyIPv4 && f != inspect.FamilyIPv6) || slices.Contains(families[:i], f) {
			return fmt.Errorf("nodeIPFamilies: %q is not %q or %q, or is named twice", f, inspect.FamilyIPv4, inspect.FamilyIPv6)
		}
	}
	return nil
}

// families are the node IP families of the cluster's instances, as the
// CCM is told them by default and the inspector reports them.
func (c Config) families() []string {
	if c.IPv6 {
		return []string{inspect.FamilyIPv4, inspect.FamilyIPv6}
	}
	return []string{inspect.FamilyIPv4}
}

// Load balancer types a Config may choose.
const (
	Classic = "classic"
	NLB     = "nlb"
)

// AnnotationLoadBalancerType is the Service annotation by which the AWS
// CCM makes a Network Load Balancer rather than a classic one.
const AnnotationLoadBalancerType = "service.beta.kubernetes.io/aws-load-balancer-type"

// Cloud is fakecloud with the AWS CCM's cloud config and credentials.
// The harness asks it what is true only through AWS's own API (package
// inspect, with the inspector's own access key), and shapes it through
// fakecloud's admin API only where AWS has no call to (a machine that
// appears, with the node's name).
type Cloud struct {
	*emulated.Cloud
	config Config

	mu        sync.Mutex
	inspector *inspect.Cloud
	// inspected is the endpoint inspector was made for: a cloud asked
	// before it started gets none that would stay wrong.
	inspected string
}

// aws is the inspector of the started cloud: EC2, Elastic Load Balancing
// and v2 at fakecloud's endpoints (never the CCM's possibly mistyped
// one), signed with the inspector's own key, load balancers' names
// resolved through fakecloud's DNS.
func (c *Cloud) aws() *inspect.Cloud {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inspector == nil || c.inspected != c.Endpoint() {
		dns := c.DNS()
		c.inspected = c.Endpoint()
		c.inspector = inspect.New(inspect.Config{
			Region:         c.Region(),
			EC2:            c.Endpoint() + api.AWSPath + "ec2/",
			ELB:            c.Endpoint() + api.AWSPath + "elb/",
			ELBv2:          c.Endpoint() + api.AWSPath + "elbv2/",
			Credentials:    credentials.NewStaticCredentialsProvider(api.AWSInspectorAccessKeyID, c.InspectorToken(), ""),
			ClusterID:      api.AWSClusterID,
			Resolver:       resolverAt(dns),
			NodeIPFamilies: c.config.families(),
		})
	}
	return c.inspector
}

// LookupHost resolves a load balancer's DNS name through fakecloud's DNS,
// as the inspector does.
func (c *Cloud) LookupHost(ctx context.Context, name string) ([]string, error) {
	return resolverAt(c.DNS()).LookupHost(ctx, name)
}

// NameServer is fakecloud's DNS, which answers the load balancers' names
// (*.elb.amazonaws.com for classic ones, *.elb.<region>.amazonaws.com for
// Network Load Balancers) as the cloud's DNS does.
func (c *Cloud) NameServer() (addr, zone string) { return c.DNS(), dnsZone }

// dnsZone holds every load balancer name of AWS's, classic or v2.
const dnsZone = "amazonaws.com"

// resolverAt asks the DNS server at addr (host:port) alone.
func resolverAt(addr string) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", addr)
	}}
}

// ToolEnv is the environment the AWS CLI needs to reach the cloud as the
// inspector: its own access key, the region, each service's endpoint in
// the variables the AWS SDKs and CLI v2.13+ read (AWS_ENDPOINT_URL_<ID>;
// an older CLI takes them as --endpoint-url), and no configuration or
// credentials of the user's, nor the metadata service.
func (c *Cloud) ToolEnv() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + api.AWSInspectorAccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + c.InspectorToken(),
		"AWS_DEFAULT_REGION=" + c.Region(),
		"AWS_REGION=" + c.Region(),
		"AWS_ENDPOINT_URL_EC2=" + c.Endpoint() + api.AWSPath + "ec2/",
		"AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING=" + c.Endpoint() + api.AWSPath + "elb/",
		"AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING_V2=" + c.Endpoint() + api.AWSPath + "elbv2/",
		"AWS_CONFIG_FILE=/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_EC2_METADATA_DISABLED=true",
		"KUBERNETES_CLUSTER_ID=" + api.AWSClusterID,
	}
}

// Inspector asks AWS's API, as the inspector.
func (c *Cloud) Inspector() providers.Inspector { return c.aws() }

// Instances makes machines through fakecloud's admin API (AWS makes no
// instance with a name of the caller's choosing) and stops, starts and
// terminates them through EC2.
func (c *Cloud) Instances() providers.InstanceControl { return c.Cloud.Machines(c.aws()) }

func (c *Cloud) endpoint(service string) string {
	if c.config.EndpointURL != "" && service == "ec2" {
		return c.config.EndpointURL
	}
	return c.Endpoint() + api.AWSPath + service + "/"
}

func (c *Cloud) secretKey() string {
	if c.config.WrongSecretKey {
		return "not-" + c.CloudToken()
	}
	return c.CloudToken()
}

func (c *Cloud) clusterID() string {
	if c.config.ClusterID != "" {
		return c.config.ClusterID
	}
	return api.AWSClusterID
}

// CCMConfig is the CCM's cloud config, in the gcfg form it reads.
func (c *Cloud) CCMConfig() ([]byte, error) {
	var b strings.Builder
	// The first zone's subnet; with VPC, SubnetID and the cluster ID set,
	// the CCM takes itself to run outside AWS and asks no metadata.
	fmt.Fprintf(&b, "[Global]\nRegion = %s\nVPC = %s\nSubnetID = %s\nKubernetesClusterID = %s\n", c.Region(), api.AWSVPCID, api.AWSSubnetID(0), c.clusterID())
	families := c.config.NodeIPFamilies
	if families == nil && c.config.IPv6 {
		families = c.config.families()
	}
	for _, f := range families {
		fmt.Fprintf(&b, "NodeIPFamilies = %s\n", f)
	}
	for _, s := range []struct{ name, id, path string }{
		{"ec2", "EC2", "ec2"},
		{"elb", "Elastic Load Balancing", "elb"},
		{"elbv2", "Elastic Load Balancing v2", "elbv2"},
	} {
		fmt.Fprintf(&b, "\n[ServiceOverride %q]\nService = %s\nRegion = %s\nURL = %s\nSigningRegion = %s\n", s.name, s.id, c.Region(), c.endpoint(s.path), c.Region())
	}
	return []byte(b.String()), nil
}

// CCMEnv are the SDK's credentials, and the instance metadata client
// turned off: nothing the CCM does may reach the network.
func (c *Cloud) CCMEnv() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + api.AWSAccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + c.secretKey(),
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// Secrets are fakecloud's tokens and the secret key given to the CCM.
func (c *Cloud) Secrets() []string { return append(c.Cloud.Secrets(), c.secretKey()) }

// Diagnose asks EC2 for the zones as the CCM's config and credentials
// say, with the SDK the CCM uses, and checks that the cluster's subnets
// carry the CCM's cluster tag, and says what failed.
func (c *Cloud) Diagnose(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cl := ec2.New(ec2.Options{
		Region:           c.Region(),
		BaseEndpoint:     awssdk.String(c.endpoint("ec2")),
		Credentials:      credentials.NewStaticCredentialsProvider(api.AWSAccessKeyID, c.secretKey(), ""),
		RetryMaxAttempts: 1,
	})
	_, err := cl.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{})
	var apiErr smithy.APIError
	var netErr net.Error
	switch {
	case err == nil:
	case errors.As(err, &apiErr) && apiErr.ErrorCode() == "AuthFailure":
		return fmt.Errorf("EC2 at %s refuses the CCM's credentials (AuthFailure: %s): fix AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in its environment", c.endpoint("ec2"), apiErr.ErrorMessage())
	case errors.As(err, &netErr):
		return fmt.Errorf("the CCM cannot reach EC2 at %s: %w; fix URL in its [ServiceOverride] for EC2", c.endpoint("ec2"), err)
	default:
		return fmt.Errorf("EC2 at %s answers the CCM's first call with: %w; is URL in its [ServiceOverride] for EC2 the EC2 endpoint?", c.endpoint("ec2"), err)
	}
	tag := "kubernetes.io/cluster/" + c.clusterID()
	out, err := cl.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{
		{Name: awssdk.String("vpc-id"), Values: []string{api.AWSVPCID}},
		{Name: awssdk.String("tag-key"), Values: []string{tag}},
	}})
	if err != nil {
		return fmt.Errorf("listing the subnets of %s in EC2: %w", api.AWSVPCID, err)
	}
	if len(out.Subnets) == 0 {
		return fmt.Errorf("no subnet of %s carries the tag %s of the CCM's KubernetesClusterID %q: tag the cluster's subnets, or fix KubernetesClusterID in [Global] of its cloud config (fakecloud's is %q)", api.AWSVPCID, tag, c.clusterID(), api.AWSClusterID)
	}
	return nil
}

// What the AWS provider implements, checked at compile time.
var (
	_ providers.Cloud            = (*Cloud)(nil)
	_ providers.SecretKeeper     = (*Cloud)(nil)
	_ providers.CCMEnvironment   = (*Cloud)(nil)
	_ providers.Diagnoser        = (*Cloud)(nil)
	_ providers.ServiceAnnotator = (*Cloud)(nil)
	_ providers.Attacher         = (*Cloud)(nil)
	_ providers.ToolEnvironment  = (*Cloud)(nil)
	_ providers.NameResolver     = (*Cloud)(nil)
	_ providers.NameServer       = (*Cloud)(nil)
	_ providers.ServiceAnnotator = (*reached)(nil)
	_ providers.NameResolver     = (*reached)(nil)
)
