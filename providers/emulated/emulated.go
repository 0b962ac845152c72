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

// Package emulated is the base of the clouds fakecloud emulates: a
// fakecloud process started (or joined) for a cluster, its tokens, and the
// harness's view of its instances, load balancers and routes through its
// admin API, as a dialect (fakecloud's own, AWS's, OpenStack's) shows
// them. The fake, AWS and OpenStack providers are built on it; none is
// built on another.
package emulated

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mathrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/client"
	"sigs.k8s.io/ccm-harness/fakecloud/cloudprovider"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
	"sigs.k8s.io/ccm-harness/internal/process"
	"sigs.k8s.io/ccm-harness/providers"
)

// FakeCloud is the cloud simulator every emulated cloud runs.
var FakeCloud = binaries.Component{Name: "fakecloud", Module: pins.ModulePath, Package: pins.ModulePath + "/fakecloud/cmd/fakecloud"}

// Dialect is how a CCM that speaks another cloud's API through fakecloud
// (its OpenStack API, say) sees fakecloud's instances. The zero Dialect
// is fakecloud's own API, as fakecloud-ccm sees it.
type Dialect struct {
	// ProviderID is the spec.providerID of the instance.
	ProviderID func(inst *api.Instance) string
	// AddressTypes are the node address types the dialect can express;
	// nil is all of them.
	AddressTypes []v1.NodeAddressType
	// Addresses, if set, are the node addresses the dialect makes of the
	// instance's, instead of those of AddressTypes.
	Addresses func(inst *api.Instance) []v1.NodeAddress
	// DualStack gives every instance the cloud makes an IPv6 InternalIP
	// after its IPv4 ones (fakecloud --internal-cidr-v6), for a CCM that,
	// as the harness runs it, reports both families. (The AWS CCM reports
	// IPv6 only when its NodeIPFamilies says so.)
	DualStack bool
}

// NewCloud is a fakecloud that the Inspector and InstanceControl report
// on as d sees it.
func NewCloud(config Config, d Dialect) *Cloud {
	if d.ProviderID == nil {
		d.ProviderID = func(inst *api.Instance) string { return cloudprovider.ProviderName + "://" + inst.ID }
	}
	return &Cloud{config: config, dialect: d}
}

// Config is the emulated cloud's part of a --provider-config file: the
// fake provider's whole file, and inlined in AWS's and OpenStack's.
type Config struct {
	// Region is the cloud's region; default fakecloud's.
	Region string `json:"region,omitempty"`
	// Zones are the region's zones, handed out to instances in turn.
	Zones []string `json:"zones,omitempty"`
	// Faults are injected before the CCM starts: a way to run the suite
	// against a cloud that errs, throttles or lies.
	Faults []api.Fault `json:"faults,omitempty"`
	// ProxyLoadBalancers makes the cloud's load balancers proxy, so that
	// backends see fakecloud's address rather than the client's: a cloud
	// that does not do what the profile claims (load-balancer-source-ip).
	ProxyLoadBalancers bool `json:"proxyLoadBalancers,omitempty"`
	// IgnoreClientAffinity makes the cloud's load balancers report the
	// session affinity they are given and balance every connection
	// afresh: a cloud whose data plane does not do what its API says
	// (load-balancer-session-affinity).
	IgnoreClientAffinity bool `json:"ignoreClientAffinity,omitempty"`
	// UnservedIPv6 makes the cloud give a dual-stack load balancer its
	// IPv6 address, and say so, but listen on its IPv4 address alone: a
	// cloud whose IPv6 frontend carries nothing, which its API does not
	// show (load-balancer-dual-stack on the data path).
	UnservedIPv6 bool `json:"unservedIPv6,omitempty"`
}

// Cloud is a fakecloud process.
type Cloud struct {
	config   Config
	dialect  Dialect
	secrets  []string
	endpoint string
	// dns is where the cloud answers DNS for its load balancers' names
	// (host:port, UDP).
	dns   string
	dir   string
	admin *client.Admin
	// lbNet holds the reservation of the cloud's load-balancer range
	// while the harness process lives.
	lbNet net.Listener
	// lbIPv6 is whether its load balancers can have an IPv6 address.
	lbIPv6 bool
}

var _ providers.IPv6LoadBalancerCloud = (*Cloud)(nil)

// IPv6LoadBalancers says whether the cloud's load balancers can have an
// IPv6 address: a dual-stack dialect's, started as root.
func (c *Cloud) IPv6LoadBalancers() bool { return c.lbIPv6 }

// reserveLBNet picks an index N that no other cloud of this machine has,
// for its load balancers' /24 (127.20.N.0/24 or 10.251.N.0/24, see
// lbNet), and holds it: an abstract Unix socket named for it, which only
// one process can bind and which goes with the process. A random pick
// alone let two parallel negative controls draw the same range.
func (c *Cloud) reserveLBNet() (int, error) {
	for _, n := range mathrand.Perm(256) {
		l, err := net.Listen("unix", fmt.Sprintf("@ccm-harness/fakecloud-lb-net/127.20.%d.0", n))
		if err != nil {
			continue // another cloud holds it
		}
		c.lbNet = l
		return n, nil
	}
	return 0, fmt.Errorf("every load balancer range of this machine (256 /24s) is held by another fakecloud: take some clusters down (ccm-harness down)")
}

// lbNet is the load balancers' range of reservation n, and whether
// fakecloud must route it here (--lb-route). Where the nodes are real
// hosts (kind's containers), a range their pods reach: 10.251.N.0/24,
// routed to this machine, which takes root; in a pod, 127.0.0.0/8 is the
// pod's own loopback, so upstream's specs that reach a load balancer from
// a pod cannot pass on loopback ones. Elsewhere, and without root,
// 127.20.N.0/24 on loopback.
func lbNet(n int, env providers.CloudEnv) (cidr string, route bool) {
	if len(env.NodeNetworks) > 0 && os.Geteuid() == 0 {
		return fmt.Sprintf("10.251.%d.0/24", n), true
	}
	return fmt.Sprintf("127.20.%d.0/24", n), false
}

// Start runs fakecloud on a free port: on loopback, or on the host's
// address on the nodes' network when the CCM runs on a node.
func (c *Cloud) Start(ctx context.Context, env providers.CloudEnv) error {
	bins, err := env.Binaries.Paths(ctx, FakeCloud)
	if err != nil {
		return err
	}
	port, err := process.FreePort()
	if err != nil {
		return err
	}
	c.dir = env.Dir
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	if env.AdminDir == "" {
		return fmt.Errorf("fakecloud: no folder for the admin token (CloudEnv.AdminDir)")
	}
	cloudToken, adminToken, inspectorToken := token(), token(), token()
	c.secrets = []string{cloudToken, adminToken, inspectorToken}
	// The admin and inspector tokens lie apart, where the CCM under test
	// cannot read them: with the one, a CCM could clear its faults or
	// change what the inspector reports; with the other, see past them.
	adminTokenFile := filepath.Join(env.AdminDir, "admin.token")
	inspectorTokenFile := filepath.Join(env.AdminDir, inspectorFile)
	for path, tok := range map[string]string{filepath.Join(c.dir, "cloud.token"): cloudToken, adminTokenFile: adminToken, inspectorTokenFile: inspectorToken} {
		if err := os.WriteFile(path, []byte(tok), 0o600); err != nil {
			return err
		}
	}
	// Its API listens where the CCM reaches it: loopback, or the host's
	// address on the nodes' network for a CCM run as a pod there.
	listen := "127.0.0.1"
	if env.HostAddress != "" {
		listen = env.HostAddress
	}
	c.endpoint = "http://" + net.JoinHostPort(listen, strconv.Itoa(port))
	dnsPort, err := process.FreePort()
	if err != nil {
		return err
	}
	// DNS answers on loopback, for the harness's inspector and the specs'
	// clients on this machine; where nodes are real hosts, on this
	// machine's address on their network, where the cluster's DNS
	// forwards the cloud's names (providers.NameServer) and a pod
	// resolves a load balancer's name as in the cloud.
	dnsHost := "127.0.0.1"
	if env.NodesHost != "" {
		dnsHost = env.NodesHost
	}
	c.dns = net.JoinHostPort(dnsHost, strconv.Itoa(dnsPort))
	// Load balancers really listen on their frontend IPs: a /24 of its
	// own keeps clusters that run side by side (the negative controls)
	// from competing for the same IP and port.
	n, err := c.reserveLBNet()
	if err != nil {
		return err
	}
	lbCIDR, lbRoute := lbNet(n, env)
	c.admin = client.NewAdmin(c.endpoint, adminToken)
	// For the processes that join the cloud (Attach).
	for file, value := range map[string]string{endpointFile: c.endpoint, dnsFile: c.dns} {
		if err := os.WriteFile(filepath.Join(env.AdminDir, file), []byte(value), 0o600); err != nil {
			return err
		}
	}
	args := []string{
		"--listen=" + net.JoinHostPort(listen, strconv.Itoa(port)),
		"--state-file=" + filepath.Join(c.dir, "state.json"),
		// A cluster's cloud lives as long as the cluster: no fsync, as
		// for its etcd.
		"--unsafe-no-fsync",
		"--token-file=" + filepath.Join(c.dir, "cloud.token"),
		"--admin-token-file=" + adminTokenFile,
		"--inspector-token-file=" + inspectorTokenFile,
		"--dns-listen=" + c.dns,
		"--audit-log=" + filepath.Join(env.LogDir, "fakecloud-audit.jsonl"),
		"--lb-cidr=" + lbCIDR,
	}
	if lbRoute {
		args = append(args, "--lb-route")
	}
	if c.dialect.DualStack {
		// Unique local ranges per cloud, as its load balancers' /24.
		// Nothing listens on the instances': a node's IPv6 address is
		// data. The load balancers' really listen, so their range must
		// be routed here, which takes root.
		args = append(args, fmt.Sprintf("--internal-cidr-v6=fd00:1:%x::/64", n))
		if os.Geteuid() == 0 {
			c.lbIPv6 = true
			// For the processes that join the cloud (Attach).
			if err := os.WriteFile(filepath.Join(env.AdminDir, lbIPv6File), []byte("true"), 0o600); err != nil {
				return err
			}
			args = append(args, fmt.Sprintf("--lb-cidr-v6=fd00:2:%x::/64", n))
			if !lbRoute {
				args = append(args, "--lb-route")
			}
		}
	}
	if c.config.Region != "" {
		args = append(args, "--region="+c.config.Region)
	}
	for _, n := range env.NodeNetworks {
		args = append(args, "--backend-cidr="+n.String())
	}
	if len(c.config.Zones) > 0 {
		args = append(args, "--zones="+strings.Join(c.config.Zones, ","))
	}
	if c.config.ProxyLoadBalancers {
		args = append(args, "--proxy-load-balancers")
	}
	if c.config.IgnoreClientAffinity {
		args = append(args, "--ignore-client-affinity")
	}
	if c.config.UnservedIPv6 {
		args = append(args, "--unserved-ipv6")
	}
	if env.KwokLabel != "" {
		args = append(args, "--kwok-kubeconfig="+env.Kubeconfig, "--kwok-label="+env.KwokLabel)
	}
	if len(c.config.Faults) > 0 {
		data, err := json.Marshal(c.config.Faults)
		if err != nil {
			return err
		}
		f := filepath.Join(c.dir, "faults.json")
		if err := os.WriteFile(f, data, 0o600); err != nil {
			return err
		}
		args = append(args, "--faults="+f)
	}
	_, err = env.Processes.Start(ctx, process.Spec{
		Name:   "fakecloud",
		Path:   bins[FakeCloud.Name],
		Args:   args,
		LogDir: env.LogDir,
		Ready:  c.admin.Healthz,
	})
	return err
}

// Files in the admin folder: the URL of a started cloud, the address of
// its DNS, the inspector's token.
const (
	endpointFile  = "endpoint"
	dnsFile       = "dns"
	inspectorFile = "inspector.token"
	// lbIPv6File is there when the cloud's load balancers can have an
	// IPv6 address.
	lbIPv6File = "lb-ipv6"
)

// Attach joins the fakecloud another process started for the cluster
// whose cloud folders env names, with its admin token.
func (c *Cloud) Attach(ctx context.Context, env providers.CloudEnv) error {
	read := func(path string) (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("fakecloud: join the cloud of %s: %w (is its cluster up?)", env.Dir, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	var err error
	c.dir = env.Dir
	if c.endpoint, err = read(filepath.Join(env.AdminDir, endpointFile)); err != nil {
		return err
	}
	if c.dns, err = read(filepath.Join(env.AdminDir, dnsFile)); err != nil {
		return err
	}
	cloudToken, err := read(filepath.Join(c.dir, "cloud.token"))
	if err != nil {
		return err
	}
	adminToken, err := read(filepath.Join(env.AdminDir, "admin.token"))
	if err != nil {
		return err
	}
	inspectorToken, err := read(filepath.Join(env.AdminDir, inspectorFile))
	if err != nil {
		return err
	}
	c.secrets = []string{cloudToken, adminToken, inspectorToken}
	_, err = os.Stat(filepath.Join(env.AdminDir, lbIPv6File))
	c.lbIPv6 = err == nil
	c.admin = client.NewAdmin(c.endpoint, adminToken)
	if err := c.admin.Healthz(ctx); err != nil {
		return fmt.Errorf("fakecloud at %s: %w", c.endpoint, err)
	}
	return nil
}

// CCMConfig points fakecloud-ccm at this cloud.
func (c *Cloud) CCMConfig() ([]byte, error) {
	return yaml.Marshal(map[string]string{
		"endpoint":  c.endpoint,
		"tokenFile": filepath.Join(c.dir, "cloud.token"),
		"region":    c.Region(),
	})
}

// Region is the cloud's region.
func (c *Cloud) Region() string {
	if c.config.Region == "" {
		return "fake-region-1"
	}
	return c.config.Region
}

// Endpoint is the URL of the cloud's APIs, once started.
func (c *Cloud) Endpoint() string { return c.endpoint }

// CloudToken is the credential of the cloud API (the CCM's), once started.
func (c *Cloud) CloudToken() string {
	if len(c.secrets) == 0 {
		return ""
	}
	return c.secrets[0]
}

// InspectorToken is the inspector's own credential of the cloud API, in
// every dialect (api.AWSInspectorAccessKeyID's secret key,
// api.OpenStackInspectorUser's password), once started: no fault touches
// its calls.
func (c *Cloud) InspectorToken() string {
	if len(c.secrets) < 3 {
		return ""
	}
	return c.secrets[2]
}

// DNS is the address (host:port, UDP) where the cloud answers for its load
// balancers' DNS names, once started.
func (c *Cloud) DNS() string { return c.dns }

// Secrets are fakecloud's bearer tokens.
func (c *Cloud) Secrets() []string { return c.secrets }

// Instances makes fakecloud instances.
func (c *Cloud) Instances() providers.InstanceControl { return instances{c.admin, c.dialect} }

// Inspector reads fakecloud's admin API, which no fault ever touches, so it
// tells the truth even when the cloud API is made to lie. It lists load
// balancers and routes too, and can delete a route behind the CCM's back.
func (c *Cloud) Inspector() providers.Inspector { return instances{c.admin, c.dialect} }

type instances struct {
	admin   *client.Admin
	dialect Dialect
}

func (i instances) Create(ctx context.Context, name string) (providers.Instance, error) {
	inst, err := i.admin.CreateInstance(ctx, api.CreateInstanceRequest{Name: name})
	if err != nil {
		return providers.Instance{}, err
	}
	return i.convert(inst), nil
}

// Adopt records a machine that exists already (a kind node) as an
// instance with its own addresses.
func (i instances) Adopt(ctx context.Context, name string, addresses []v1.NodeAddress) (providers.Instance, error) {
	req := api.CreateInstanceRequest{Name: name, Hostname: name}
	for _, a := range addresses {
		req.Addresses = append(req.Addresses, api.Address{Type: string(a.Type), Address: a.Address})
	}
	inst, err := i.admin.CreateInstance(ctx, req)
	if err != nil {
		return providers.Instance{}, err
	}
	return i.convert(inst), nil
}

func (i instances) Stop(ctx context.Context, name string) error {
	_, err := i.admin.Stop(ctx, name)
	return err
}

func (i instances) Start(ctx context.Context, name string) error {
	_, err := i.admin.Start(ctx, name)
	return err
}

func (i instances) Terminate(ctx context.Context, name string) error {
	_, err := i.admin.Terminate(ctx, name)
	return err
}

func (i instances) Instance(ctx context.Context, name string) (providers.Instance, error) {
	inst, err := i.admin.Instance(ctx, name)
	if err != nil {
		return providers.Instance{}, err
	}
	if inst.State == api.StateTerminated {
		return providers.Instance{}, fmt.Errorf("instance %s (%s) is terminated", name, inst.ID)
	}
	return i.convert(inst), nil
}

func (i instances) convert(inst *api.Instance) providers.Instance {
	out := providers.Instance{
		Name:         inst.Name,
		ProviderID:   i.dialect.ProviderID(inst),
		InstanceType: inst.InstanceType,
		Zone:         inst.Zone,
		Region:       inst.Region,
		Running:      inst.State == api.StateRunning,
	}
	if i.dialect.Addresses != nil {
		out.Addresses = i.dialect.Addresses(inst)
		return out
	}
	for _, a := range inst.Addresses {
		t := v1.NodeAddressType(a.Type)
		if i.dialect.AddressTypes == nil || slices.Contains(i.dialect.AddressTypes, t) {
			out.Addresses = append(out.Addresses, v1.NodeAddress{Type: t, Address: a.Address})
		}
	}
	return out
}

func token() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// What an emulated cloud implements, checked at compile time: a drifted
// signature would otherwise turn the specs that ask for it into skips.
var (
	_ providers.Cloud                 = (*Cloud)(nil)
	_ providers.SecretKeeper          = (*Cloud)(nil)
	_ providers.Attacher              = (*Cloud)(nil)
	_ providers.FaultInjector         = (*Cloud)(nil)
	_ providers.InstanceControl       = instances{}
	_ providers.InstanceAdopter       = instances{}
	_ providers.Inspector             = instances{}
	_ providers.LoadBalancerInspector = instances{}
	_ providers.RouteInspector        = instances{}
	_ providers.RouteTamperer         = instances{}
)
