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

// Package cloudplugin is the contract between the harness and a cloud
// plugin: an executable that answers the harness's questions about a cloud
// the harness has no code for, one question per run, as Kubernetes' exec
// credential plugins answer kubectl. The harness writes a Request as JSON
// on the plugin's stdin; the plugin writes a Response as JSON on stdout
// and exits 0. A plugin that cannot answer exits non-zero with one line
// on stderr saying why; the harness quotes it.
//
// The first question is always "capabilities": the verbs the plugin
// answers. A spec that needs a verb the plugin does not answer is skipped,
// saying so. docs/cloud-plugin.md has the JSON schema and an example.
package cloudplugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// APIVersion is the contract's version; a plugin answers with the one it
// was asked in.
const APIVersion = "cloudplugin.ccm-harness.sigs.k8s.io/v1alpha1"

// Verb is a question the harness asks.
type Verb string

// The verbs. Capabilities is always answered; the rest where the plugin
// says so.
const (
	// Capabilities: which of the other verbs the plugin answers.
	Capabilities Verb = "capabilities"
	// Instance: the machine behind Request.Node.
	Instance Verb = "instance"
	// LoadBalancers: every load balancer of the cluster.
	LoadBalancers Verb = "loadBalancers"
	// Routes: every pod CIDR route of the cluster.
	Routes Verb = "routes"
	// DeleteRoute: remove Request.Route behind the CCM's back.
	DeleteRoute Verb = "deleteRoute"
	// Create, Stop, Start, Terminate: make or change the machine behind
	// Request.Node. Create answers its Instance.
	Create    Verb = "create"
	Stop      Verb = "stop"
	Start     Verb = "start"
	Terminate Verb = "terminate"
)

// Verbs are every verb but Capabilities, in the order docs list them.
var Verbs = []Verb{Instance, LoadBalancers, Routes, DeleteRoute, Create, Stop, Start, Terminate}

// Request is what the plugin reads on stdin.
type Request struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"` // "Request"
	Verb       Verb   `json:"verb"`
	// Node is the Kubernetes node the question is about (instance,
	// create, stop, start, terminate).
	Node string `json:"node,omitempty"`
	// Route is a route's name as the plugin gave it (deleteRoute).
	Route string `json:"route,omitempty"`
}

// Response is what the plugin writes on stdout: the field of its verb,
// or none for deleteRoute, stop, start and terminate.
type Response struct {
	APIVersion    string         `json:"apiVersion"`
	Kind          string         `json:"kind"` // "Response"
	Verbs         []Verb         `json:"verbs,omitempty"`
	Instance      *Machine       `json:"instance,omitempty"`
	LoadBalancers []LoadBalancer `json:"loadBalancers,omitempty"`
	Routes        []Route        `json:"routes,omitempty"`
}

// Machine is the cloud's machine behind a node.
type Machine struct {
	ProviderID   string    `json:"providerID"`
	InstanceType string    `json:"instanceType,omitempty"`
	Zone         string    `json:"zone,omitempty"`
	Region       string    `json:"region,omitempty"`
	Addresses    []Address `json:"addresses,omitempty"`
	// Running is false for a stopped machine.
	Running bool `json:"running"`
}

// Address is a node address: type InternalIP, ExternalIP, InternalDNS,
// ExternalDNS or Hostname.
type Address struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// LoadBalancer is one load balancer as the cloud has it.
type LoadBalancer struct {
	Name string `json:"name"`
	// Service is "namespace/name" of the Service the cloud's records tie
	// it to.
	Service    string `json:"service"`
	ServiceUID string `json:"serviceUID,omitempty"`
	// IP or Hostname: how clients reach it.
	IP        string     `json:"ip,omitempty"`
	Hostname  string     `json:"hostname,omitempty"`
	Listeners []Listener `json:"listeners"`
	// Backends are the names of the nodes it sends traffic to.
	Backends            []string `json:"backends"`
	HealthCheckNodePort int32    `json:"healthCheckNodePort,omitempty"`
	SourceRanges        []string `json:"sourceRanges,omitempty"`
	// ClientAffinity is its session affinity by client address; absent
	// when it has none.
	ClientAffinity *ClientAffinity `json:"clientAffinity,omitempty"`
	// ProxyProtocol is the version of the PROXY protocol (1 or 2) it
	// speaks to its backends; 0 or absent when none.
	ProxyProtocol int32 `json:"proxyProtocol,omitempty"`
}

// ClientAffinity is a load balancer's session affinity by client address.
type ClientAffinity struct {
	// TimeoutSeconds is how long a client keeps its backend; 0 or absent
	// when the cloud does not say.
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`
}

// Listener is one frontend port: TCP, UDP or SCTP, to a node port.
type Listener struct {
	Port     int32  `json:"port"`
	Protocol string `json:"protocol"`
	NodePort int32  `json:"nodePort,omitempty"`
}

// Route is one pod CIDR route.
type Route struct {
	Name            string `json:"name"`
	DestinationCIDR string `json:"destinationCIDR"`
	TargetNode      string `json:"targetNode"`
	Blackhole       bool   `json:"blackhole,omitempty"`
}

// Plugin runs a plugin executable.
type Plugin struct {
	// Command is the executable, Args its arguments.
	Command string
	Args    []string
	// Env is added to the harness's environment for it.
	Env []string
	// Timeout bounds each question; 0 is DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout bounds a question: a cloud's API, asked a few times.
const DefaultTimeout = 60 * time.Second

var errTimeout = errors.New("the plugin's timeout")

// Ask asks req.Verb (about req.Node or req.Route) and checks the answer:
// well-formed JSON of this contract, with the field the verb asks for.
// Every error is one line naming the plugin and the verb.
func (p *Plugin) Ask(ctx context.Context, req Request) (*Response, error) {
	req.APIVersion, req.Kind = APIVersion, "Request"
	fail := func(format string, args ...any) (*Response, error) {
		return nil, fmt.Errorf("cloud plugin %s, asked %s%s: %s", p.Command, req.Verb, about(req), fmt.Sprintf(format, args...))
	}
	timeout := p.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	start := time.Now()
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()
	in, err := json.Marshal(req)
	if err != nil {
		return fail("%v", err)
	}
	// Each question gets a temporary folder of its own in TMPDIR, removed
	// when it is answered: a plugin killed at its timeout cannot clean up
	// its own temporary files, and they must not stay behind.
	tmp, err := os.MkdirTemp("", "ccm-harness-plugin-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, p.Command, p.Args...)
	cmd.Env = append(append(os.Environ(), p.Env...), "TMPDIR="+tmp)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A plugin's children (the cloud's command line) must not outlive a
	// timeout: the plugin runs in a process group of its own, killed
	// whole, and its pipes are not waited on for long.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	switch {
	case context.Cause(ctx) == errTimeout:
		return fail("no answer within %s (raise the profile's inspector timeout, or make the plugin answer sooner)", timeout)
	case ctx.Err() != nil:
		// The caller gave up first: its wait, not the plugin's timeout.
		return fail("stopped after %s: %v", time.Since(start).Round(time.Millisecond), context.Cause(ctx))
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist):
		return fail("cannot run it: %v (fix the profile's inspector command)", err)
	case err != nil:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fail("exit status %d: %s", exit.ExitCode(), lastLine(stderr.String(), "(nothing on stderr)"))
		}
		return fail("%v", err)
	}
	var resp Response
	out := stdout.String()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&resp); err != nil {
		return fail("its answer is not a Response of %s: %v (stdout began %q)", APIVersion, err, head(out))
	}
	if resp.APIVersion != APIVersion || resp.Kind != "Response" {
		return fail("it answered apiVersion %q kind %q, want %q %q", resp.APIVersion, resp.Kind, APIVersion, "Response")
	}
	if err := resp.check(req.Verb); err != nil {
		return fail("%v", err)
	}
	return &resp, nil
}

func about(req Request) string {
	switch {
	case req.Node != "":
		return " about node " + req.Node
	case req.Route != "":
		return " about route " + req.Route
	}
	return ""
}

// check says what the answer to verb lacks.
func (r *Response) check(verb Verb) error {
	switch verb {
	case Capabilities:
		for _, v := range r.Verbs {
			if !slices.Contains(Verbs, v) {
				return fmt.Errorf("verbs: %q is none of %v", v, Verbs)
			}
		}
	case Instance, Create:
		if r.Instance == nil {
			return errors.New(`no "instance" in the answer`)
		}
		if r.Instance.ProviderID == "" {
			return errors.New("instance: providerID is empty")
		}
		for _, a := range r.Instance.Addresses {
			if !slices.Contains([]string{"InternalIP", "ExternalIP", "InternalDNS", "ExternalDNS", "Hostname"}, a.Type) || a.Address == "" {
				return fmt.Errorf("instance: address %+v: want type InternalIP, ExternalIP, InternalDNS, ExternalDNS or Hostname, and an address", a)
			}
		}
	case LoadBalancers:
		for _, lb := range r.LoadBalancers {
			if lb.Name == "" {
				return errors.New("loadBalancers: a load balancer has no name")
			}
			for _, l := range lb.Listeners {
				if !slices.Contains([]string{"TCP", "UDP", "SCTP"}, l.Protocol) || l.Port <= 0 {
					return fmt.Errorf("loadBalancers: %s: listener %+v: want a port and protocol TCP, UDP or SCTP", lb.Name, l)
				}
			}
		}
	case Routes:
		for _, rt := range r.Routes {
			if rt.Name == "" || rt.DestinationCIDR == "" {
				return fmt.Errorf("routes: route %+v: want a name and a destinationCIDR", rt)
			}
		}
	}
	return nil
}

// lastLine is the last non-empty line of s, or def.
func lastLine(s, def string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return def
}

// head is the start of s, for a message.
func head(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
