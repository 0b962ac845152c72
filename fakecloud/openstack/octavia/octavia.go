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
// members, health monitors). octavia.go shows that tree and builds it
// from requests, api.go serves load balancers and listeners, pools.go
// pools, members and monitors. It is a thin front over package model,
// which keeps the tree, changes it and derives the spec from it; what it
// shares with the other OpenStack services is in openstackjson.
package octavia

import (
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"

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

// octaviaVersion is the newest API version fakecloud answers as: the CCM
// turns on tags (2.5), allowed_cidrs (2.12) and HTTP monitors on UDP pools
// (2.16) by it.
const octaviaVersion = 27

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

func (s *Front) poolFromOpts(o octaviaPoolReq, listenerID string) *model.OctaviaPool {
	p := &model.OctaviaPool{
		ID: s.NewOctaviaID("pool"), Name: o.Name, Description: o.Description, Protocol: string(o.Protocol),
		LBAlgorithm: string(o.LBMethod), ListenerID: listenerID, Tags: o.Tags,
	}
	if o.Persistence != nil {
		p.Persistence = &model.OctaviaPersistence{Type: o.Persistence.Type, CookieName: o.Persistence.CookieName}
	}
	for _, m := range o.Members {
		p.Members = append(p.Members, model.OctaviaMember{
			ID: s.NewOctaviaID("member"), Name: m.Name, Address: m.Address, ProtocolPort: m.ProtocolPort,
			SubnetID: m.SubnetID, Weight: weightOr(m.Weight), MonitorPort: m.MonitorPort, Tags: m.Tags,
		})
	}
	if o.Monitor != nil {
		p.Monitor = s.monitorFromOpts(*o.Monitor)
	}
	return p
}

func (s *Front) monitorFromOpts(o monitors.CreateOpts) *model.OctaviaMonitor {
	return &model.OctaviaMonitor{
		ID: s.NewOctaviaID("hm"), Name: o.Name, Type: o.Type, Delay: o.Delay, Timeout: o.Timeout,
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
