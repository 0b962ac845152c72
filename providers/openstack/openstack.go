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

// Package openstack is the provider profile of the real OpenStack CCM
// (k8s.io/cloud-provider-openstack) against fakecloud speaking OpenStack's
// APIs: Keystone v3 hands the CCM a token and a catalog that points at
// fakecloud for Nova and Neutron, which show fakecloud's instances as
// servers, flavors, ports and floating IPs, and for Octavia, whose load
// balancers are fakecloud's with real listeners.
//
// The CCM is configured as its README says to: [Global] with auth-url,
// credentials and region; [LoadBalancer] with the tenant subnet for VIPs
// and members, health monitors on, and internal-lb, since fakecloud's VIPs
// are reachable where the specs run and it emulates no floating IPs for
// load balancers. A node is named as its server, as the CCM looks servers
// up by name; [Route] with the router whose extra routes carry the pod
// CIDRs. The profile claims every capability: instances, zones, node
// lifecycle, load balancers and routes.
package openstack

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/manifests"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/providers/emulated"
	"sigs.k8s.io/ccm-harness/providers/openstack/inspect"
	"sigs.k8s.io/ccm-harness/specs"
)

// Name selects this profile.
const Name = "openstack"

// Manifests are cloud-provider-openstack's own
// (manifests/controller-manager of v1.36.0, unchanged): its RBAC, and its
// DaemonSet, whose container a CCM from an image runs as, reading its
// cloud config from the Secret cloud-config.
var Manifests = manifests.Embedded(manifestDir, "manifests")

//go:embed manifests/*.yaml
var manifestDir embed.FS

// What fakecloud's Keystone knows (fakecloud/server/openstack.go): one
// user and project in the Default domain, and the user's one application
// credential. Their secret is the cloud token. The inspector's user
// (api.OpenStackInspectorUser) is in the same project and domain; its
// password is the inspector token.
const (
	user      = "ccm-harness"
	project   = "ccm-harness"
	domain    = "Default"
	appCredID = "ac-ccm-harness"
)

// Auth methods a Config may choose.
const (
	AuthPassword              = "password"
	AuthApplicationCredential = "application-credential"
)

// Profile returns the OpenStack provider's profile.
func Profile() providers.Profile {
	return providers.Profile{
		Name:             Name,
		CloudProvider:    "openstack",
		ProviderIDScheme: "openstack",
		CCM:              CCM,
		CloudBinaries:    []binaries.Component{emulated.FakeCloud},
		Manifests:        Manifests,
		Differences:      differences,
		Capabilities:     providers.NewCapabilities(providers.Instances, providers.Zones, providers.NodeLifecycle, providers.LoadBalancers, providers.Routes),
		Features:         features,
		// getProxyProtocolFromServiceAnnotation (pkg/openstack/
		// loadbalancer.go:481-492, v1.36.0): "true" or "v1" makes the
		// pool's protocol PROXY, "v2" PROXYV2; createLoadBalancerStatus
		// (:1637-1666) then writes ipMode Proxy.
		ProxyProtocolAnnotations: map[string]string{"loadbalancer.openstack.org/proxy-protocol": "true"},
		Config:                   Config{},
		NewCloud: func(config []byte) (providers.Cloud, error) {
			var c Config
			if len(config) > 0 {
				if err := yaml.UnmarshalStrict(config, &c); err != nil {
					return nil, fmt.Errorf("openstack provider config: %w", err)
				}
			}
			switch c.Auth {
			case "":
				c.Auth = AuthPassword
			case AuthPassword, AuthApplicationCredential:
			default:
				return nil, fmt.Errorf("openstack provider config: auth %q is neither %q nor %q", c.Auth, AuthPassword, AuthApplicationCredential)
			}
			if c.Reach != nil {
				// What shapes fakecloud or the CCM's config means nothing to
				// a cloud the harness does not run.
				if !reflect.ValueOf(c.Config).IsZero() || c.WrongPassword || c.AuthURL != "" || c.SubnetID != "" || c.Auth != AuthPassword {
					return nil, fmt.Errorf("openstack provider config: with reach, give only reach: the rest shapes the cloud the harness runs")
				}
				return reached(*c.Reach), nil
			}
			return &Cloud{Cloud: emulated.NewCloud(c.Config, emulated.Dialect{DualStack: true}), config: c}, nil
		},
	}
}

func init() { providers.Register(Profile()) }

// differences are the steps of load-balancer specs the OpenStack CCM
// fails by its own design, each seen failing against fakecloud's Octavia
// (docs/providers/openstack.md, "Known difference").
var differences = []providers.Difference{
	{Spec: specs.LBBackends, Step: providers.StepJoin,
		Shows: "(every eligible node), actual [",
		Evidence: "it makes a node a pool member by the node's InternalIP (nodeAddressForLB) and skips a node with none " +
			"(\"Failed to get the address of node ... for creating member: no address found for host\", " +
			"pkg/openstack/loadbalancer.go of v1.36.0); the service controller syncs a joining node when it registers and when " +
			"its providerID is set (shouldSyncUpdatedNode in k8s.io/cloud-provider controllers/service), both before the cloud " +
			"node controller writes its addresses, so a node that registers without addresses, as a kubelet with " +
			"--cloud-provider=external and no --node-ip does, stays out of the pools until the next node change",
		Race: "the service controller's sync for the node's providerID against the cloud node controller's write of its addresses, " +
			"a few milliseconds after (seen in the CCM's log: \"Updating backends ... [lb-mpzf8 ...]\" at 16.595, \"Successfully initialized " +
			"node lb-mpzf8\" at 16.603, \"no address found for host\" at 16.609); on a loaded machine the sync can come after, and " +
			"the node joins (a CI run of 39e59aa: the step passed in 7 s)"},
	{Spec: specs.LBSessionAffinity, Step: providers.StepSwitch,
		Shows: "session affinity none, actual ClientIP",
		Evidence: "it sets a pool's session persistence (SOURCE_IP for sessionAffinity ClientIP) only when it creates the pool " +
			"(buildPoolCreateOpt, pkg/openstack/loadbalancer.go:973-1011 of v1.36.0, called at :285 and :927); of a pool that " +
			"exists, ensureOctaviaPool (:880-970) changes the lb_algorithm (:914-923) and the members only, so a Service whose " +
			"affinity is switched off keeps source-IP persistence until its pool is made again"},
	// The same, seen on the data path: switched on, affinity never
	// reaches the pool.
	{Spec: specs.DatapathAffinity, Step: providers.StepSwitch,
		Shows: "with sessionAffinity ClientIP answered by one backend pod, actual: request 1 by",
		Evidence: "it sets a pool's session persistence only when it creates the pool (buildPoolCreateOpt, " +
			"pkg/openstack/loadbalancer.go:973-1011 of v1.36.0); of a pool that exists, ensureOctaviaPool (:880-970) changes " +
			"the lb_algorithm (:914-923) and the members only, so a Service whose affinity is switched on gets none until its " +
			"pool is made again, and one client's requests go to every node"},
}

// features are the extended load-balancer features the OpenStack CCM
// claims. Not load-balancer-no-node-ports: it adds a pool member only for
// a node port (buildBatchUpdateMemberOpts: "It's 0 when
// AllocateLoadBalancerNodePorts=False", pkg/openstack/loadbalancer.go of
// v1.36.0), so without node ports every pool is empty and the load
// balancer serves nothing (seen against fakecloud's Octavia: "(every
// eligible node), actual []"). Not load-balancer-source-ip: Octavia's
// amphorae proxy. load-balancer-session-affinity: a pool's SOURCE_IP
// persistence, set when the pool is made (see differences).
// load-balancer-proxy-protocol: a pool of protocol PROXY, and ipMode Proxy.
// node-dual-stack: the CCM reports a server's IPv6 addresses beside its
// IPv4 ones unless told not to (nodeAddresses skips them only with
// ipv6-support-disabled, pkg/openstack/instances_addresses.go of v1.36.0).
var features = providers.NewFeatures(specs.LoadBalancerUDP, specs.LoadBalancerMixedProtocol,
	specs.LoadBalancerSourceRanges, specs.LoadBalancerHealthChecks, specs.LoadBalancerSessionAffinity,
	specs.LoadBalancerProxyProtocol, specs.NodeDualStack)

// Config is the OpenStack provider's --provider-config file: fakecloud's
// own settings, and how the CCM logs in.
type Config struct {
	emulated.Config
	// Auth is how the CCM authenticates to Keystone: "password" (default)
	// or "application-credential".
	Auth string `json:"auth,omitempty"`
	// WrongPassword gives the CCM a password (or secret) Keystone refuses.
	WrongPassword bool `json:"wrongPassword,omitempty"`
	// AuthURL replaces Keystone's URL in the CCM's cloud config, as a
	// user who mistyped it would.
	AuthURL string `json:"authURL,omitempty"`
	// SubnetID replaces the tenant subnet in [LoadBalancer] subnet-id, as
	// a user who gave a wrong one would.
	SubnetID string `json:"subnetID,omitempty"`
	// IPv6SupportDisabled sets [Networking] ipv6-support-disabled, as a
	// user who turns the CCM's IPv6 off does: it then reports no IPv6
	// address of a server.
	IPv6SupportDisabled bool `json:"ipv6SupportDisabled,omitempty"`
	// Reach, when set, is an OpenStack the harness does not start but
	// reaches with clouds.yaml and the environment (a real cloud, or
	// fakecloud run by someone else), for a cluster it did not make
	// either (--cluster=existing). With it, nothing else may be given.
	Reach *Reach `json:"reach,omitempty"`
}

// Cloud is fakecloud with the OpenStack CCM's cloud config. The harness
// asks it what is true only through OpenStack's own APIs (package
// inspect, as the inspector's own Keystone user), and shapes it through
// fakecloud's admin API only where OpenStack has no call to (a machine
// that appears, with the node's name and addresses).
type Cloud struct {
	*emulated.Cloud
	config Config

	mu        sync.Mutex
	inspector *inspect.Cloud
	// inspected is the endpoint inspector was made for: a cloud asked
	// before it started gets none that would stay wrong.
	inspected string
}

// openStack is the inspector of the started cloud: Keystone at
// fakecloud's endpoint (never the CCM's possibly mistyped auth-url), as
// the inspector's user, and the services of its catalog; routes on the
// CCM's router, members on the tenant subnet.
func (c *Cloud) openStack() *inspect.Cloud {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inspector == nil || c.inspected != c.Endpoint() {
		c.inspected = c.Endpoint()
		c.inspector = inspect.New(inspect.Config{
			AuthURL:     c.Endpoint() + identityPath,
			Region:      c.Region(),
			Username:    api.OpenStackInspectorUser,
			Password:    c.InspectorToken(),
			ProjectName: project,
			DomainName:  domain,
			RouterID:    api.OpenStackRouterID,
			SubnetID:    api.OpenStackSubnetID,
		})
	}
	return c.inspector
}

// Inspector asks OpenStack's APIs, as the inspector.
func (c *Cloud) Inspector() providers.Inspector { return c.openStack() }

// Instances makes machines through fakecloud's admin API (Nova makes no
// server with the addresses of a machine that exists already) and stops,
// starts and deletes them through Nova.
func (c *Cloud) Instances() providers.InstanceControl { return c.Cloud.Machines(c.openStack()) }

// identityPath is Keystone v3 under fakecloud's endpoint.
const identityPath = "/identity/v3"

func (c *Cloud) authURL() string {
	if c.config.AuthURL != "" {
		return c.config.AuthURL
	}
	return c.Endpoint() + identityPath
}

func (c *Cloud) secret() string {
	if c.config.WrongPassword {
		return "not-" + c.CloudToken()
	}
	return c.CloudToken()
}

// CCMConfig is the CCM's cloud.conf, in the gcfg form it reads.
func (c *Cloud) CCMConfig() ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "[Global]\nauth-url = %s\nregion = %s\n", c.authURL(), c.Region())
	switch c.config.Auth {
	case AuthApplicationCredential:
		fmt.Fprintf(&b, "application-credential-id = %s\napplication-credential-secret = %s\n", appCredID, c.secret())
	default:
		fmt.Fprintf(&b, "username = %s\npassword = %s\ntenant-name = %s\ndomain-name = %s\n", user, c.secret(), project, domain)
	}
	// internal-lb: no floating IP, so the ingress is the VIP, where
	// fakecloud listens. create-monitor: the health check the specs expect
	// for externalTrafficPolicy=Local.
	fmt.Fprintf(&b, "\n[LoadBalancer]\nsubnet-id = %s\ninternal-lb = true\ncreate-monitor = true\n", c.subnetID())
	fmt.Fprintf(&b, "\n[Route]\nrouter-id = %s\n", api.OpenStackRouterID)
	if c.config.IPv6SupportDisabled {
		b.WriteString("\n[Networking]\nipv6-support-disabled = true\n")
	}
	return []byte(b.String()), nil
}

func (c *Cloud) subnetID() string {
	if c.config.SubnetID != "" {
		return c.config.SubnetID
	}
	return api.OpenStackSubnetID
}

// authOptions are what the CCM's cloud config tells gophercloud.
func (c *Cloud) authOptions() gophercloud.AuthOptions {
	o := gophercloud.AuthOptions{IdentityEndpoint: c.authURL()}
	if c.config.Auth == AuthApplicationCredential {
		o.ApplicationCredentialID, o.ApplicationCredentialSecret = appCredID, c.secret()
		return o
	}
	o.Username, o.Password, o.DomainName = user, c.secret(), domain
	o.Scope = &gophercloud.AuthScope{ProjectName: project, DomainName: domain}
	return o
}

// Diagnose logs in to Keystone as the CCM's cloud config says, with the
// library the CCM uses, and looks up the load balancers' subnet in
// Neutron, and says what failed.
func (c *Cloud) Diagnose(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pc, err := openstack.NewClient(c.authURL())
	if err != nil {
		return fmt.Errorf("the CCM's auth-url %q is not a URL: %w; fix auth-url in [Global] of its cloud config", c.authURL(), err)
	}
	pc.HTTPClient = http.Client{Timeout: 10 * time.Second}
	err = openstack.Authenticate(ctx, pc, c.authOptions())
	var unexpected gophercloud.ErrUnexpectedResponseCode
	var netErr net.Error
	switch {
	case err == nil:
		return c.diagnoseSubnet(ctx, pc)
	case gophercloud.ResponseCodeIs(err, http.StatusUnauthorized):
		return fmt.Errorf("Keystone at %s refuses the CCM's %s credentials (401): fix them in [Global] of its cloud config", c.authURL(), c.config.Auth)
	case errors.As(err, &unexpected):
		return fmt.Errorf("Keystone at %s answers the CCM's login with %d: %s; is auth-url in [Global] of its cloud config Keystone's v3 URL?", c.authURL(), unexpected.Actual, oneLine(unexpected.Body))
	case errors.As(err, &netErr):
		return fmt.Errorf("the CCM cannot reach Keystone at %s: %w; fix auth-url in [Global] of its cloud config", c.authURL(), err)
	default:
		return fmt.Errorf("the CCM's cloud config cannot log in to Keystone at %s: %w; fix [Global] there", c.authURL(), err)
	}
}

// diagnoseSubnet looks up [LoadBalancer] subnet-id as the CCM does when it
// creates a load balancer.
func (c *Cloud) diagnoseSubnet(ctx context.Context, pc *gophercloud.ProviderClient) error {
	network, err := openstack.NewNetworkV2(pc, gophercloud.EndpointOpts{Region: c.Region()})
	if err != nil {
		return fmt.Errorf("Keystone's catalog has no network endpoint for region %s: %w", c.Region(), err)
	}
	_, err = subnets.Get(ctx, network, c.subnetID()).Extract()
	switch {
	case err == nil:
		return nil
	case gophercloud.ResponseCodeIs(err, http.StatusNotFound):
		return fmt.Errorf("Neutron has no subnet %q, the CCM's [LoadBalancer] subnet-id: fix subnet-id in its cloud config (fakecloud's tenant subnet is %q)", c.subnetID(), api.OpenStackSubnetID)
	default:
		return fmt.Errorf("looking up the CCM's [LoadBalancer] subnet-id %q in Neutron: %w", c.subnetID(), err)
	}
}

// oneLine is a response body fit for a one-line error.
func oneLine(body []byte) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// What the OpenStack provider implements, checked at compile time.
var (
	_ providers.Cloud        = (*Cloud)(nil)
	_ providers.SecretKeeper = (*Cloud)(nil)
	_ providers.Diagnoser    = (*Cloud)(nil)
	_ providers.Attacher     = (*Cloud)(nil)
)
