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
	"encoding/json"
	"time"
)

// OctaviaLB is the Octavia view of a load balancer, as stored.
type OctaviaLB struct {
	Description string             `json:"description"`
	Provider    string             `json:"provider"`
	Tags        []string           `json:"tags"`
	Listeners   []*OctaviaListener `json:"listeners"`
	Pools       []*OctaviaPool     `json:"pools"`
	// Pending and BusyUntil: the status a change left it in, and until
	// when.
	Pending   string    `json:"pending,omitempty"`
	BusyUntil time.Time `json:"busyUntil"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// OctaviaListener is an Octavia listener, as Octavia shows it.
type OctaviaListener struct {
	ID                     string            `json:"id"`
	Name                   string            `json:"name"`
	Description            string            `json:"description"`
	Protocol               string            `json:"protocol"`
	ProtocolPort           int               `json:"protocol_port"`
	ConnectionLimit        int               `json:"connection_limit"`
	DefaultPoolID          string            `json:"default_pool_id"`
	DefaultTLSContainerRef string            `json:"default_tls_container_ref"`
	AllowedCIDRs           []string          `json:"allowed_cidrs"`
	InsertHeaders          map[string]string `json:"insert_headers"`
	TimeoutClientData      int               `json:"timeout_client_data"`
	TimeoutMemberConnect   int               `json:"timeout_member_connect"`
	TimeoutMemberData      int               `json:"timeout_member_data"`
	TimeoutTCPInspect      int               `json:"timeout_tcp_inspect"`
	Tags                   []string          `json:"tags"`
}

// OctaviaPool is an Octavia pool, with its members and health monitor.
type OctaviaPool struct {
	ID          string              `json:"id"`
	Name        string              `json:"name"`
	Description string              `json:"description"`
	Protocol    string              `json:"protocol"`
	LBAlgorithm string              `json:"lb_algorithm"`
	ListenerID  string              `json:"listenerID,omitempty"`
	Persistence *OctaviaPersistence `json:"session_persistence"`
	Members     []OctaviaMember     `json:"members"`
	Monitor     *OctaviaMonitor     `json:"monitor,omitempty"`
	Tags        []string            `json:"tags"`
}

// OctaviaSourceIP is the session persistence that keeps a client, by its
// address, on one member: what the OpenStack CCM asks for a Service's
// sessionAffinity ClientIP.
const OctaviaSourceIP = "SOURCE_IP"

// octaviaPersistenceTypes are the session persistence types Octavia takes.
var octaviaPersistenceTypes = []string{OctaviaSourceIP, "HTTP_COOKIE", "APP_COOKIE"}

// Pool protocols. PROXY and PROXYV2 pools carry TCP, each connection to a
// member opened with the PROXY protocol header of version 1 or 2: what
// the OpenStack CCM asks for a Service's PROXY protocol annotation.
const (
	OctaviaProxy   = "PROXY"
	OctaviaProxyV2 = "PROXYV2"
)

// octaviaPoolProtocols are the pool protocols Octavia takes, in the order
// its refusal of another lists them.
var octaviaPoolProtocols = []string{"HTTP", "HTTPS", OctaviaProxy, OctaviaProxyV2, "SCTP", "TCP", "UDP"}

// octaviaListenerPools are the pool protocols Octavia puts behind a
// listener of each protocol (its VALID_LISTENER_POOL_PROTOCOL_MAP): a PROXY
// pool goes behind TCP or HTTP(S), a UDP pool behind UDP alone.
var octaviaListenerPools = map[string][]string{
	"TCP":              {"HTTP", "HTTPS", OctaviaProxy, OctaviaProxyV2, "TCP"},
	"HTTP":             {"HTTP", OctaviaProxy, OctaviaProxyV2},
	"HTTPS":            {"HTTPS", OctaviaProxy, OctaviaProxyV2, "TCP"},
	"TERMINATED_HTTPS": {"HTTP", OctaviaProxy, OctaviaProxyV2},
	"UDP":              {"UDP"},
	"SCTP":             {"SCTP"},
}

// OctaviaPersistence is a pool's session persistence.
type OctaviaPersistence struct {
	Type       string `json:"type"`
	CookieName string `json:"cookie_name,omitempty"`
}

// OctaviaMember is a pool member.
type OctaviaMember struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Address      string   `json:"address"`
	ProtocolPort int      `json:"protocol_port"`
	SubnetID     string   `json:"subnet_id"`
	Weight       int      `json:"weight"`
	MonitorPort  *int     `json:"monitor_port"`
	Backup       bool     `json:"backup"`
	Tags         []string `json:"tags"`
}

// OctaviaMonitor is a pool's health monitor.
type OctaviaMonitor struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Type           string   `json:"type"`
	Delay          int      `json:"delay"`
	Timeout        int      `json:"timeout"`
	MaxRetries     int      `json:"max_retries"`
	MaxRetriesDown int      `json:"max_retries_down"`
	URLPath        string   `json:"url_path,omitempty"`
	HTTPMethod     string   `json:"http_method,omitempty"`
	ExpectedCodes  string   `json:"expected_codes,omitempty"`
	Tags           []string `json:"tags"`
}

// Clone deep-copies o, so a change can be made to a copy and dropped.
func (o *OctaviaLB) Clone() *OctaviaLB {
	b, _ := json.Marshal(o) // plain data: never fails
	var out OctaviaLB
	_ = json.Unmarshal(b, &out)
	return &out
}

// Listener is the listener with that ID, or nil.
func (o *OctaviaLB) Listener(id string) *OctaviaListener {
	for _, l := range o.Listeners {
		if l.ID == id {
			return l
		}
	}
	return nil
}

// Pool is the pool with that ID, or nil.
func (o *OctaviaLB) Pool(id string) *OctaviaPool {
	for _, p := range o.Pools {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// PoolOfMonitor is the pool with the health monitor of that ID, or nil.
func (o *OctaviaLB) PoolOfMonitor(id string) *OctaviaPool {
	for _, p := range o.Pools {
		if p.Monitor != nil && p.Monitor.ID == id {
			return p
		}
	}
	return nil
}

// PoolOf is the pool a listener sends to, or nil.
func (o *OctaviaLB) PoolOf(listenerID string) *OctaviaPool {
	for _, p := range o.Pools {
		if p.ListenerID == listenerID {
			return p
		}
	}
	return nil
}

// Status is the load balancer's provisioning status now.
func (o *OctaviaLB) Status(now time.Time) string {
	if o.Pending != "" && now.Before(o.BusyUntil) {
		return o.Pending
	}
	return OctaviaActive
}

// Octavia's provisioning statuses.
const (
	OctaviaActive        = "ACTIVE"
	OctaviaPendingCreate = "PENDING_CREATE"
	OctaviaPendingUpdate = "PENDING_UPDATE"
)
