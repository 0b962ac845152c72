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

// Package inspect asks OpenStack what is true, through its own public APIs
// and the library its users use (gophercloud: Keystone, Nova, Neutron and
// Octavia), with credentials of its own: the server behind a node, the
// load balancers with their listeners, members, health monitors and
// allowed CIDRs, and the extra routes of the cluster's router; and it
// stops, starts and deletes servers. It knows nothing of fakecloud: the
// same code asks fakecloud's emulated OpenStack here and a real cloud in
// a provider's CI.
//
// What the CCM makes of a server is read as the OpenStack CCM reads it
// (pkg/openstack/instances.go and instances_addresses.go of
// cloud-provider-openstack v1.36.0, with its default options): the server
// found by its name, which is the node's; the provider ID
// openstack:///<server ID> (no region, OS_CCM_REGIONAL unset); the
// flavor's name as the instance type; the availability zone; and the node
// addresses of nodeAddresses.
package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/pagination"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"sigs.k8s.io/ccm-harness/providers"
)

// ProviderIDPrefix begins the provider ID the OpenStack CCM gives a node:
// openstack:///<server ID>.
const ProviderIDPrefix = "openstack:///"

// Nova's statuses of a server that runs and of one powered off.
const (
	statusActive  = "ACTIVE"
	statusShutoff = "SHUTOFF"
)

// Config says which OpenStack to ask, and as whom.
type Config struct {
	// AuthURL is Keystone's v3 endpoint; the catalog it hands out finds
	// the other services.
	AuthURL string
	// Region is the region of the services in the catalog, and the
	// nodes' region.
	Region string
	// Username, Password, ProjectName and DomainName are the inspector's
	// own credentials, not the CCM's.
	Username, Password, ProjectName, DomainName string
	// RouterID, when set, limits routes to that router's extra routes,
	// as the CCM's [Route] router-id does; otherwise every router's.
	RouterID string
	// SubnetID, when set, is where members' and next hops' addresses are
	// looked up among the servers' fixed IPs: where tenant networks
	// overlap, an address names a server only on its own subnet.
	SubnetID string
	// Auth, when set, is the login in place of AuthURL, Username,
	// Password, ProjectName and DomainName: as the OpenStack client
	// reads it from clouds.yaml or OS_* (gophercloud/utils' clientconfig),
	// an application credential or a token included.
	Auth *gophercloud.AuthOptions
}

// Cloud is OpenStack as the inspector sees it.
type Cloud struct {
	cfg Config

	mu sync.Mutex
	// svc is made at the first call: New asks nothing of the network.
	svc *services
}

// services are the inspector's clients, on one re-authenticating login.
type services struct {
	compute, network, lb *gophercloud.ServiceClient
}

// New is the inspector of the OpenStack cfg names.
func New(cfg Config) *Cloud { return &Cloud{cfg: cfg} }

// What the inspector answers, checked at compile time.
var (
	_ providers.Inspector             = (*Cloud)(nil)
	_ providers.LoadBalancerInspector = (*Cloud)(nil)
	_ providers.RouteInspector        = (*Cloud)(nil)
	_ providers.RouteTamperer         = (*Cloud)(nil)
)

// services logs in to Keystone once, and finds Nova, Neutron and Octavia
// in its catalog; a failed login is tried again at the next call.
func (c *Cloud) services(ctx context.Context) (*services, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.svc != nil {
		return c.svc, nil
	}
	auth := gophercloud.AuthOptions{
		IdentityEndpoint: c.cfg.AuthURL,
		Username:         c.cfg.Username,
		Password:         c.cfg.Password,
		DomainName:       c.cfg.DomainName,
		Scope:            &gophercloud.AuthScope{ProjectName: c.cfg.ProjectName, DomainName: c.cfg.DomainName},
	}
	if c.cfg.Auth != nil {
		auth = *c.cfg.Auth
	}
	// The inspector outlives a token (an hour in Keystone).
	auth.AllowReauth = true
	pc, err := openstack.AuthenticatedClient(ctx, auth)
	if err != nil {
		who := auth.Username
		if who == "" {
			who = "application credential " + auth.ApplicationCredentialID + auth.ApplicationCredentialName
		}
		return nil, fmt.Errorf("logging in to Keystone at %s as %s: %s", auth.IdentityEndpoint, who, oneLine(err))
	}
	eo := gophercloud.EndpointOpts{Region: c.cfg.Region}
	var s services
	for _, sc := range []struct {
		name string
		new  func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)
		to   **gophercloud.ServiceClient
	}{
		{"compute", openstack.NewComputeV2, &s.compute},
		{"network", openstack.NewNetworkV2, &s.network},
		{"load-balancer", openstack.NewLoadBalancerV2, &s.lb},
	} {
		if *sc.to, err = sc.new(pc, eo); err != nil {
			return nil, fmt.Errorf("Keystone's catalog at %s has no %s endpoint in region %s: %w", auth.IdentityEndpoint, sc.name, c.cfg.Region, err)
		}
	}
	c.svc = &s
	return c.svc, nil
}

// Instance is the server named as the node, as the OpenStack CCM finds it
// for a node without a provider ID (getServerByName: Nova's name filter,
// an anchored regular expression).
func (c *Cloud) Instance(ctx context.Context, name string) (providers.Instance, error) {
	s, err := c.services(ctx)
	if err != nil {
		return providers.Instance{}, err
	}
	srv, err := c.server(ctx, s, name)
	if err != nil {
		return providers.Instance{}, err
	}
	flavor, err := c.instanceType(ctx, s, srv)
	if err != nil {
		return providers.Instance{}, err
	}
	pages, err := ports.List(s.network, ports.ListOpts{DeviceID: srv.ID}).AllPages(ctx)
	if err != nil {
		return providers.Instance{}, c.fail("Neutron", "list ports", err)
	}
	attached, err := ports.ExtractPorts(pages)
	if err != nil {
		return providers.Instance{}, c.fail("Neutron", "list ports", err)
	}
	addrs, err := Addresses(srv, attached)
	if err != nil {
		return providers.Instance{}, err
	}
	return providers.Instance{
		Name:         srv.Name,
		ProviderID:   ProviderIDPrefix + srv.ID,
		InstanceType: flavor,
		Zone:         srv.AvailabilityZone,
		Region:       c.cfg.Region,
		Addresses:    addrs,
		Running:      srv.Status == statusActive,
	}, nil
}

// servers are the servers named name: Nova lists no deleted one.
func (c *Cloud) servers(ctx context.Context, s *services, name string) ([]servers.Server, error) {
	pages, err := servers.List(s.compute, servers.ListOpts{Name: "^" + regexp.QuoteMeta(name) + "$"}).AllPages(ctx)
	if err != nil {
		return nil, c.fail("Nova", "list servers", err)
	}
	list, err := servers.ExtractServers(pages)
	if err != nil {
		return nil, c.fail("Nova", "list servers", err)
	}
	return list, nil
}

// server is the one server named name.
func (c *Cloud) server(ctx context.Context, s *services, name string) (servers.Server, error) {
	list, err := c.servers(ctx, s, name)
	if err != nil {
		return servers.Server{}, err
	}
	switch len(list) {
	case 0:
		return servers.Server{}, fmt.Errorf("Nova in %s has no server named %s (the node's name)", c.cfg.Region, name)
	case 1:
		return list[0], nil
	}
	var ids []string
	for _, srv := range list {
		ids = append(ids, srv.ID)
	}
	return servers.Server{}, fmt.Errorf("Nova in %s has %d servers named %s, the node's name, which the CCM refuses: %s", c.cfg.Region, len(list), name, strings.Join(ids, ", "))
}

// instanceType is the flavor's name as the CCM reports it
// (srvInstanceType): the original_name Nova embeds from microversion 2.47
// if it is a valid label value, else the name of the flavor the id names,
// else that id.
func (c *Cloud) instanceType(ctx context.Context, s *services, srv servers.Server) (string, error) {
	if name, ok := srv.Flavor["original_name"].(string); ok && validLabel(name) {
		return name, nil
	}
	id, ok := srv.Flavor["id"].(string)
	if !ok {
		return "", fmt.Errorf("Nova shows server %s (%s) with neither a flavor original_name nor an id: %v", srv.Name, srv.ID, srv.Flavor)
	}
	f, err := flavors.Get(ctx, s.compute, id).Extract()
	if err != nil {
		return "", c.fail("Nova", "get flavor "+id+" of server "+srv.Name, err)
	}
	if validLabel(f.Name) {
		return f.Name, nil
	}
	return f.ID, nil
}

func validLabel(v string) bool { return len(validation.IsValidLabelValue(v)) == 0 }

// Addresses are a server's node addresses as the OpenStack CCM makes them
// with its default networking options (nodeAddresses): the fixed IPs of
// its ACTIVE ports as InternalIP, the access IPs as ExternalIP, the
// "hostname" metadata as Hostname, then the addresses Nova shows, network
// by network in name order, floating ones as ExternalIP and the rest as
// InternalIP; each address of a type once.
func Addresses(srv servers.Server, attached []ports.Port) ([]v1.NodeAddress, error) {
	var out []v1.NodeAddress
	add := func(t v1.NodeAddressType, addr string) {
		a := v1.NodeAddress{Type: t, Address: addr}
		for _, have := range out {
			if have == a {
				return
			}
		}
		out = append(out, a)
	}
	for _, p := range attached {
		if p.Status != statusActive {
			continue
		}
		for _, ip := range p.FixedIPs {
			add(v1.NodeInternalIP, ip.IPAddress)
		}
	}
	for _, ip := range []string{srv.AccessIPv4, srv.AccessIPv6} {
		if ip != "" {
			add(v1.NodeExternalIP, ip)
		}
	}
	if h := srv.Metadata["hostname"]; h != "" {
		add(v1.NodeHostName, h)
	}
	// Nova's addresses come as a generic map: read them as the CCM does.
	raw, err := json.Marshal(srv.Addresses)
	if err != nil {
		return nil, fmt.Errorf("the addresses of server %s (%s): %w", srv.Name, srv.ID, err)
	}
	var byNetwork map[string][]struct {
		Addr string `json:"addr"`
		Type string `json:"OS-EXT-IPS:type"`
	}
	if err := json.Unmarshal(raw, &byNetwork); err != nil {
		return nil, fmt.Errorf("Nova shows server %s (%s) with addresses that are not {network: [{addr, OS-EXT-IPS:type}]}: %w", srv.Name, srv.ID, err)
	}
	networks := make([]string, 0, len(byNetwork))
	for n := range byNetwork {
		networks = append(networks, n)
	}
	sort.Strings(networks)
	for _, n := range networks {
		for _, a := range byNetwork[n] {
			t := v1.NodeInternalIP
			if a.Type == "floating" {
				t = v1.NodeExternalIP
			}
			add(t, a.Addr)
		}
	}
	return out, nil
}

// Stop powers the server of node name off with Nova's os-stop; one off
// already is left so.
func (c *Cloud) Stop(ctx context.Context, name string) error {
	return c.power(ctx, name, statusShutoff, "os-stop", func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error {
		return servers.Stop(ctx, sc, id).ExtractErr()
	})
}

// Start powers it on again with os-start.
func (c *Cloud) Start(ctx context.Context, name string) error {
	return c.power(ctx, name, statusActive, "os-start", func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error {
		return servers.Start(ctx, sc, id).ExtractErr()
	})
}

// power makes the server of node name reach status by action, unless it
// is there: Nova refuses an action for the state the server is in (409).
func (c *Cloud) power(ctx context.Context, name, status, action string, act func(context.Context, *gophercloud.ServiceClient, string) error) error {
	s, err := c.services(ctx)
	if err != nil {
		return err
	}
	srv, err := c.server(ctx, s, name)
	if err != nil {
		return err
	}
	if srv.Status == status {
		return nil
	}
	return c.fail("Nova", action+" of server "+srv.ID, act(ctx, s.compute, srv.ID))
}

// Terminate deletes every server named name; none left is no error, so
// that cleanup can always call it.
func (c *Cloud) Terminate(ctx context.Context, name string) error {
	s, err := c.services(ctx)
	if err != nil {
		return err
	}
	list, err := c.servers(ctx, s, name)
	if err != nil {
		return err
	}
	for _, srv := range list {
		err := servers.Delete(ctx, s.compute, srv.ID).ExtractErr()
		if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return c.fail("Nova", "delete server "+srv.ID, err)
		}
	}
	return nil
}

// owners maps the servers' fixed IPs (on Config.SubnetID, if set) to the
// servers' names, the nodes': how a member's address or a next hop names
// its node. A deleted server has no port, so its address maps to nothing.
func (c *Cloud) owners(ctx context.Context, s *services) (map[string]string, error) {
	pages, err := servers.List(s.compute, servers.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, c.fail("Nova", "list servers", err)
	}
	list, err := servers.ExtractServers(pages)
	if err != nil {
		return nil, c.fail("Nova", "list servers", err)
	}
	names := make(map[string]string, len(list))
	for _, srv := range list {
		names[srv.ID] = srv.Name
	}
	pages, err = ports.List(s.network, ports.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, c.fail("Neutron", "list ports", err)
	}
	all, err := ports.ExtractPorts(pages)
	if err != nil {
		return nil, c.fail("Neutron", "list ports", err)
	}
	out := map[string]string{}
	for _, p := range all {
		name, ok := names[p.DeviceID]
		if !ok {
			continue // a router's, a load balancer's VIP
		}
		for _, ip := range p.FixedIPs {
			if c.cfg.SubnetID != "" && ip.SubnetID != c.cfg.SubnetID {
				continue
			}
			if _, taken := out[canonical(ip.IPAddress)]; !taken {
				out[canonical(ip.IPAddress)] = name
			}
		}
	}
	return out, nil
}

// nodeAt is the name of the server whose address addr is, or the address
// itself where no server has it (one deleted, another project's), as the
// fake inspector shows a backend no instance has; ok is false then.
func nodeAt(owners map[string]string, addr string) (name string, ok bool) {
	addr = canonical(addr)
	if n, ok := owners[addr]; ok {
		return n, true
	}
	return addr, false
}

// canonical is an address in one spelling (an IPv4-mapped IPv6 address as
// IPv4), or as given if it is none.
func canonical(addr string) string {
	if a, err := netip.ParseAddr(addr); err == nil {
		return a.Unmap().String()
	}
	return addr
}

// fail names the service and the call of err, on one line.
func (c *Cloud) fail(service, call string, err error) error {
	if err == nil {
		return nil
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return &callError{fmt.Sprintf("%s %s in %s timed out: %s", service, call, c.cfg.Region, oneLine(err)), err}
	}
	return &callError{fmt.Sprintf("%s %s in %s: %s", service, call, c.cfg.Region, oneLine(err)), err}
}

// callError is a failed call's one-line message, over gophercloud's error
// (whose response body may span lines) for errors.As and
// gophercloud.ResponseCodeIs.
type callError struct {
	msg string
	err error
}

func (e *callError) Error() string { return e.msg }
func (e *callError) Unwrap() error { return e.err }

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// Check logs in and finds the services in the catalog, and lists the
// servers, as the CCM's first calls do: a cloud that refuses the
// inspector is said at once.
func (c *Cloud) Check(ctx context.Context) error {
	s, err := c.services(ctx)
	if err != nil {
		return err
	}
	first := func(context.Context, pagination.Page) (bool, error) { return false, nil }
	if err := servers.List(s.compute, servers.ListOpts{}).EachPage(ctx, first); err != nil {
		return c.fail("Nova", "list servers", err)
	}
	return nil
}
