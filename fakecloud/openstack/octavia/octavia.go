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

// Package octavia is fakecloud's Octavia, the load-balancer API v2: a
// load balancer made through it is one of the cloud's, whose spec is
// derived from the tree Octavia shows (model.OctaviaLB: listeners, pools,
// members, health monitors). octavia.go derives and shows that tree,
// api.go serves load balancers and listeners, pools.go pools, members and
// monitors. It is a front over package model; what it shares with the
// other OpenStack services is in openstackjson.
package octavia

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/openstackjson"
)

// Front is Octavia, the load-balancer API v2, over the cloud.
type Front struct{ *model.Cloud }

// New is Octavia over cloud.
func New(cloud *model.Cloud) *Front { return &Front{cloud} }

var lbError openstackjson.Dialect = func(status int, msg string) any {
	code := "Server"
	if status < 500 {
		code = "Client"
	}
	return map[string]any{"faultcode": code, "faultstring": msg, "debuginfo": nil}
}

// Octavia, load-balancer API v2: a load balancer is one of fakecloud's,
// with its real listeners. Octavia's objects (listeners, pools with their
// members and health monitor) are kept beside the native spec, which is
// derived from them on every change: a listener's node port is its pool's
// members' port, the backends are the instances whose InternalIP the
// members name, the health check node port is the members' monitor port
// under an HTTP monitor, and the source ranges are the listeners'
// allowed_cidrs. So the inspector, the data plane and the faults work on
// Octavia's load balancers as on native ones.
//
// As in Octavia, every change leaves the load balancer PENDING_* for a
// moment, during which a further change is refused with 409: a client
// that does not wait for ACTIVE fails here as it would there.

// octaviaBusy is how long a change keeps a load balancer PENDING_*. The
// OpenStack CCM first polls one second after a change.
const octaviaBusy = 300 * time.Millisecond

// octaviaVersion is the newest API version fakecloud answers as: the CCM
// turns on tags (2.5), allowed_cidrs (2.12) and HTTP monitors on UDP pools
// (2.16) by it.
const octaviaVersion = 27

// serviceOfLBName is the namespace/name a load balancer's name carries
// when the OpenStack CCM made it: kube_service_<cluster>_<ns>_<name>.
// Namespaces and Service names have no underscores, so the last two
// fields are theirs whatever the cluster is called.
func serviceOfLBName(name string) string {
	rest, ok := strings.CutPrefix(name, "kube_service_")
	if !ok {
		return ""
	}
	f := strings.Split(rest, "_")
	if len(f) < 3 {
		return ""
	}
	return f[len(f)-2] + "/" + f[len(f)-1]
}

// octaviaSpecLocked derives the native spec from the Octavia view: a
// member is the backend of the instance whose InternalIP its address is.
// Octavia keeps a member it cannot reach (its monitor marks it ERROR), and
// so does fakecloud: a member of a terminated instance stays that
// instance's backend, one of no instance's address is a backend named by
// the address, and both forward nothing (as a next hop no instance has
// is a blackhole route). Refusing them instead would refuse every later
// change of the load balancer, the one that removes them too.
func (s *Front) octaviaSpecLocked(name string, o *model.OctaviaLB) (api.LoadBalancerSpec, error) {
	spec := api.LoadBalancerSpec{Listeners: []api.Listener{}, Backends: []string{}, Tags: map[string]string{api.TagService: serviceOfLBName(name)}}
	byAddr := map[string]string{}
	for _, inst := range s.St.Instances {
		ip := model.FirstInternalIP(inst)
		if !ip.IsValid() {
			continue
		}
		// A running instance's address is its own, whichever terminated
		// one had it before.
		if _, taken := byAddr[ip.String()]; !taken || inst.State != api.StateTerminated {
			byAddr[ip.String()] = inst.ID
		}
	}
	for _, l := range o.Listeners {
		out := api.Listener{Port: int32(l.ProtocolPort), Protocol: api.Protocol(l.Protocol)}
		if p := o.PoolOf(l.ID); p != nil {
			for _, m := range p.Members {
				addr, err := netip.ParseAddr(m.Address)
				if err != nil {
					return spec, fmt.Errorf("member %s address %q is not an IP address", m.ID, m.Address)
				}
				id, ok := byAddr[addr.Unmap().String()]
				if !ok {
					id = addr.Unmap().String()
				}
				out.NodePort = int32(m.ProtocolPort)
				if !slices.Contains(spec.Backends, id) {
					spec.Backends = append(spec.Backends, id)
				}
				if p.Monitor != nil && p.Monitor.Type == "HTTP" && m.MonitorPort != nil {
					spec.HealthCheckNodePort = int32(*m.MonitorPort)
				}
			}
		}
		for _, c := range l.AllowedCIDRs {
			if !model.AllowsAll(c) && !slices.Contains(spec.SourceRanges, c) {
				spec.SourceRanges = append(spec.SourceRanges, c)
			}
		}
		spec.Listeners = append(spec.Listeners, out)
	}
	return spec, model.ValidateLBSpec(spec)
}

// octaviaIgnore undoes, in next, the part of a change an ignore fault
// drops: the request succeeds, the cloud keeps what it had.
func octaviaIgnore(f *api.Fault, before, next *model.OctaviaLB) {
	if f == nil || f.Kind != api.FaultIgnore {
		return
	}
	prevPool := func(id string) *model.OctaviaPool {
		if before == nil {
			return nil
		}
		return before.Pool(id)
	}
	switch f.Field {
	case api.IgnoreListeners:
		next.Listeners = nil
		if before != nil {
			next.Listeners = before.Clone().Listeners
		}
		next.Pools = slices.DeleteFunc(next.Pools, func(p *model.OctaviaPool) bool { return next.Listener(p.ListenerID) == nil })
	case api.IgnoreBackends:
		for _, p := range next.Pools {
			p.Members = nil
			if old := prevPool(p.ID); old != nil {
				p.Members = old.Members
			}
		}
	case api.IgnoreSourceRanges:
		for _, l := range next.Listeners {
			l.AllowedCIDRs = nil
			if before != nil && before.Listener(l.ID) != nil {
				l.AllowedCIDRs = before.Listener(l.ID).AllowedCIDRs
			}
		}
	case api.IgnoreHealthCheck:
		for _, p := range next.Pools {
			old := prevPool(p.ID)
			p.Monitor = nil
			if old != nil {
				p.Monitor = old.Monitor
			}
			for i := range p.Members {
				p.Members[i].MonitorPort = nil
				if old != nil {
					if j := slices.IndexFunc(old.Members, func(m model.OctaviaMember) bool { return m.ID == p.Members[i].ID }); j >= 0 {
						p.Members[i].MonitorPort = old.Members[j].MonitorPort
					}
				}
			}
		}
	}
}

// Wire forms.

type octaviaRef struct {
	ID string `json:"id"`
}

func octaviaTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05") }

func (s *Front) octaviaLBWire(rec *model.LBRecord, ip string, now time.Time) map[string]any {
	o := rec.Octavia
	ls, ps := []octaviaRef{}, []octaviaRef{}
	for _, l := range o.Listeners {
		ls = append(ls, octaviaRef{l.ID})
	}
	for _, p := range o.Pools {
		ps = append(ps, octaviaRef{p.ID})
	}
	return map[string]any{
		"id": rec.ID, "name": rec.Name, "description": o.Description, "provider": o.Provider,
		"admin_state_up": true, "project_id": openstackjson.ProjectID, "tenant_id": openstackjson.ProjectID,
		"provisioning_status": o.Status(now), "operating_status": "ONLINE",
		"vip_address": ip, "vip_port_id": "port-vip-" + rec.ID, "vip_subnet_id": openstackjson.PrivateSubnetID,
		"vip_network_id": openstackjson.PrivateNetID, "vip_qos_policy_id": nil, "flavor_id": nil, "availability_zone": nil,
		"listeners": ls, "pools": ps, "tags": nonNil(o.Tags), "additional_vips": []any{},
		"created_at": octaviaTime(rec.CreatedAt), "updated_at": octaviaTime(o.UpdatedAt),
	}
}

func octaviaListenerWire(rec *model.LBRecord, l *model.OctaviaListener, now time.Time) map[string]any {
	var pools []octaviaRef
	if l.DefaultPoolID != "" {
		pools = append(pools, octaviaRef{l.DefaultPoolID})
	}
	return map[string]any{
		"id": l.ID, "name": l.Name, "description": l.Description, "protocol": l.Protocol, "protocol_port": l.ProtocolPort,
		"connection_limit": l.ConnectionLimit, "default_pool_id": nilIfEmpty(l.DefaultPoolID),
		"default_tls_container_ref": nilIfEmpty(l.DefaultTLSContainerRef), "sni_container_refs": []string{},
		"allowed_cidrs": l.AllowedCIDRs, "insert_headers": nonNilMap(l.InsertHeaders),
		"timeout_client_data": l.TimeoutClientData, "timeout_member_connect": l.TimeoutMemberConnect,
		"timeout_member_data": l.TimeoutMemberData, "timeout_tcp_inspect": l.TimeoutTCPInspect,
		"loadbalancers": []octaviaRef{{rec.ID}}, "pools": nonNil(pools), "l7policies": []any{},
		"admin_state_up": true, "project_id": openstackjson.ProjectID, "tags": nonNil(l.Tags),
		"provisioning_status": rec.Octavia.Status(now), "operating_status": "ONLINE",
	}
}

func octaviaPoolWire(rec *model.LBRecord, p *model.OctaviaPool, now time.Time) map[string]any {
	ms := []octaviaRef{}
	for _, m := range p.Members {
		ms = append(ms, octaviaRef{m.ID})
	}
	var ls []octaviaRef
	if p.ListenerID != "" {
		ls = append(ls, octaviaRef{p.ListenerID})
	}
	monitorID := ""
	if p.Monitor != nil {
		monitorID = p.Monitor.ID
	}
	return map[string]any{
		"id": p.ID, "name": p.Name, "description": p.Description, "protocol": p.Protocol, "lb_algorithm": p.LBAlgorithm,
		"session_persistence": p.Persistence, "listeners": nonNil(ls), "loadbalancers": []octaviaRef{{rec.ID}},
		"members": ms, "healthmonitor_id": nilIfEmpty(monitorID), "admin_state_up": true, "project_id": openstackjson.ProjectID,
		"tags": nonNil(p.Tags), "tls_enabled": false, "provisioning_status": rec.Octavia.Status(now), "operating_status": "ONLINE",
	}
}

func octaviaMemberWire(rec *model.LBRecord, m model.OctaviaMember, now time.Time) map[string]any {
	return map[string]any{
		"id": m.ID, "name": m.Name, "address": m.Address, "protocol_port": m.ProtocolPort, "subnet_id": nilIfEmpty(m.SubnetID),
		"weight": m.Weight, "monitor_port": m.MonitorPort, "monitor_address": nil, "backup": m.Backup,
		"admin_state_up": true, "project_id": openstackjson.ProjectID, "tags": nonNil(m.Tags),
		"provisioning_status": rec.Octavia.Status(now), "operating_status": "NO_MONITOR",
		"created_at": octaviaTime(rec.CreatedAt), "updated_at": octaviaTime(rec.Octavia.UpdatedAt),
	}
}

func octaviaMonitorWire(rec *model.LBRecord, p *model.OctaviaPool, now time.Time) map[string]any {
	m := p.Monitor
	return map[string]any{
		"id": m.ID, "name": m.Name, "type": m.Type, "delay": m.Delay, "timeout": m.Timeout,
		"max_retries": m.MaxRetries, "max_retries_down": m.MaxRetriesDown, "url_path": m.URLPath,
		"http_method": m.HTTPMethod, "expected_codes": m.ExpectedCodes, "pools": []octaviaRef{{p.ID}},
		"admin_state_up": true, "project_id": openstackjson.ProjectID, "tags": nonNil(m.Tags),
		"provisioning_status": rec.Octavia.Status(now), "operating_status": "ONLINE",
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Requests, in gophercloud's request types: what the client sends. Where
// a request type holds an interface (a pool's monitor), a wrapper gives
// the decoder the concrete type.

type octaviaPoolReq struct {
	pools.CreateOpts
	Monitor *monitors.CreateOpts `json:"healthmonitor,omitempty"`
}

type octaviaListenerReq struct {
	listeners.CreateOpts
	DefaultPool *octaviaPoolReq `json:"default_pool,omitempty"`
}

type octaviaLBReq struct {
	loadbalancers.CreateOpts
	Listeners []octaviaListenerReq `json:"listeners,omitempty"`
}

func (s *Front) newOctaviaIDLocked(prefix string) string {
	return prefix + "-" + strings.TrimPrefix(s.NewLBIDLocked(), "lb-")
}

func listenerFromOpts(id string, o listeners.CreateOpts) *model.OctaviaListener {
	l := &model.OctaviaListener{
		ID: id, Name: o.Name, Description: o.Description, Protocol: string(o.Protocol), ProtocolPort: o.ProtocolPort,
		ConnectionLimit: -1, DefaultTLSContainerRef: o.DefaultTlsContainerRef, AllowedCIDRs: o.AllowedCIDRs,
		InsertHeaders: o.InsertHeaders, Tags: o.Tags,
		// Octavia's defaults.
		TimeoutClientData: 50000, TimeoutMemberConnect: 5000, TimeoutMemberData: 50000,
	}
	if o.ConnLimit != nil {
		l.ConnectionLimit = *o.ConnLimit
	}
	for from, to := range map[*int]*int{o.TimeoutClientData: &l.TimeoutClientData, o.TimeoutMemberConnect: &l.TimeoutMemberConnect, o.TimeoutMemberData: &l.TimeoutMemberData, o.TimeoutTCPInspect: &l.TimeoutTCPInspect} {
		if from != nil {
			*to = *from
		}
	}
	return l
}

func (s *Front) poolFromOptsLocked(o octaviaPoolReq, listenerID string) *model.OctaviaPool {
	p := &model.OctaviaPool{
		ID: s.newOctaviaIDLocked("pool"), Name: o.Name, Description: o.Description, Protocol: string(o.Protocol),
		LBAlgorithm: string(o.LBMethod), ListenerID: listenerID, Tags: o.Tags,
	}
	if o.Persistence != nil {
		p.Persistence = &model.OctaviaPersistence{Type: o.Persistence.Type, CookieName: o.Persistence.CookieName}
	}
	for _, m := range o.Members {
		p.Members = append(p.Members, model.OctaviaMember{
			ID: s.newOctaviaIDLocked("member"), Name: m.Name, Address: m.Address, ProtocolPort: m.ProtocolPort,
			SubnetID: m.SubnetID, Weight: weightOr(m.Weight), MonitorPort: m.MonitorPort, Tags: m.Tags,
		})
	}
	if o.Monitor != nil {
		p.Monitor = s.monitorFromOptsLocked(*o.Monitor)
	}
	return p
}

func (s *Front) monitorFromOptsLocked(o monitors.CreateOpts) *model.OctaviaMonitor {
	return &model.OctaviaMonitor{
		ID: s.newOctaviaIDLocked("hm"), Name: o.Name, Type: o.Type, Delay: o.Delay, Timeout: o.Timeout,
		MaxRetries: o.MaxRetries, MaxRetriesDown: maxRetriesDownOr(o.MaxRetriesDown), URLPath: o.URLPath,
		HTTPMethod: o.HTTPMethod, ExpectedCodes: o.ExpectedCodes, Tags: o.Tags,
	}
}

// Octavia's defaults for what a request may leave out.
func weightOr(w *int) int {
	if w == nil {
		return 1
	}
	return *w
}

func maxRetriesDownOr(n int) int {
	if n == 0 {
		return 3
	}
	return n
}

// validateOctavia checks what Octavia checks of the objects themselves,
// with its messages' shape.
func validateOctavia(o *model.OctaviaLB) error {
	seen := map[string]bool{}
	for _, l := range o.Listeners {
		if l.ProtocolPort < 1 || l.ProtocolPort > 65535 {
			return fmt.Errorf("Invalid input for field/attribute protocol_port. Value: '%d'. Value must be between 1 and 65535.", l.ProtocolPort)
		}
		k := fmt.Sprintf("%s/%d", l.Protocol, l.ProtocolPort)
		if seen[k] {
			return fmt.Errorf("Another Listener on this Load Balancer is already using protocol %s and protocol_port %d", l.Protocol, l.ProtocolPort)
		}
		seen[k] = true
	}
	for _, p := range o.Pools {
		for _, m := range p.Members {
			if m.ProtocolPort < 1 || m.ProtocolPort > 65535 {
				return fmt.Errorf("Invalid input for field/attribute protocol_port. Value: '%d'. Value must be between 1 and 65535.", m.ProtocolPort)
			}
			if m.MonitorPort != nil && (*m.MonitorPort < 1 || *m.MonitorPort > 65535) {
				return fmt.Errorf("Invalid input for field/attribute monitor_port. Value: '%d'. Value must be between 1 and 65535.", *m.MonitorPort)
			}
		}
		if m := p.Monitor; m != nil && m.Timeout > m.Delay {
			return fmt.Errorf("Validation failure: The request timeout value must be less than or equal to the delay value.")
		}
	}
	return nil
}
