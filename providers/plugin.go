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

package providers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"

	"sigs.k8s.io/ccm-harness/providers/cloudplugin"
)

// FileInspector is a profile file's inspector: a cloud plugin that answers
// for the cloud in place of the harness's own inspector (package
// cloudplugin, docs/cloud-plugin.md).
type FileInspector struct {
	// Plugin is the executable; a relative path is taken from the file's
	// folder.
	Plugin string `json:"plugin"`
	// Args are the plugin's arguments.
	Args []string `json:"args,omitempty"`
	// Timeout bounds each question, as a Go duration ("30s"); default
	// cloudplugin.DefaultTimeout.
	Timeout string `json:"timeout,omitempty"`
}

// ToolEnvironment is a cloud the harness runs whose own command-line tools
// (the AWS CLI, the OpenStack client) can reach it: the environment they
// need, with the inspector's credentials. A cloud plugin runs with it.
type ToolEnvironment interface {
	ToolEnv() []string
}

// withPlugin is cloud with the plugin answering what it says it can: the
// inspector's questions and the machines' changes. The rest (starting the
// cloud, its CCM's config, faults) stays cloud's.
func withPlugin(cloud Cloud, p *cloudplugin.Plugin) Cloud {
	pc := &pluginCloud{Cloud: cloud, plugin: p}
	if _, ok := cloud.(FaultInjector); ok {
		return faultyPluginCloud{pc}
	}
	return pc
}

// pluginCloud answers through a cloud plugin. It forwards the optional
// interfaces of the cloud it wraps whose absence means nothing (no
// secrets, no annotations); FaultInjector, whose absence skips specs, only
// where the cloud is one (faultyPluginCloud).
type pluginCloud struct {
	Cloud
	plugin *cloudplugin.Plugin
	verbs  []cloudplugin.Verb
}

// Base is the cloud the plugin answers for.
func (c *pluginCloud) Base() Cloud { return c.Cloud }

// Start starts the cloud, then asks the plugin what it answers: with the
// cloud's tools' environment, if the harness runs the cloud.
func (c *pluginCloud) Start(ctx context.Context, env CloudEnv) error {
	if err := c.Cloud.Start(ctx, env); err != nil {
		return err
	}
	return c.capabilities(ctx)
}

// Attach joins the cloud another process started, and asks the plugin.
func (c *pluginCloud) Attach(ctx context.Context, env CloudEnv) error {
	if a, ok := c.Cloud.(Attacher); ok {
		if err := a.Attach(ctx, env); err != nil {
			return err
		}
	}
	return c.capabilities(ctx)
}

func (c *pluginCloud) capabilities(ctx context.Context) error {
	if t, ok := c.Cloud.(ToolEnvironment); ok {
		c.plugin.Env = t.ToolEnv()
	}
	resp, err := c.plugin.Ask(ctx, cloudplugin.Request{Verb: cloudplugin.Capabilities})
	if err != nil {
		return err
	}
	c.verbs = resp.Verbs
	return nil
}

func (c *pluginCloud) can(v cloudplugin.Verb) bool { return slices.Contains(c.verbs, v) }

// Secrets are the cloud's.
func (c *pluginCloud) Secrets() []string {
	if s, ok := c.Cloud.(SecretKeeper); ok {
		return s.Secrets()
	}
	return nil
}

// ServiceAnnotations are the cloud's.
func (c *pluginCloud) ServiceAnnotations() map[string]string {
	if s, ok := c.Cloud.(ServiceAnnotator); ok {
		return s.ServiceAnnotations()
	}
	return nil
}

// CCMEnv is the cloud's.
func (c *pluginCloud) CCMEnv() []string {
	if e, ok := c.Cloud.(CCMEnvironment); ok {
		return e.CCMEnv()
	}
	return nil
}

// Diagnose is the cloud's.
func (c *pluginCloud) Diagnose(ctx context.Context) error {
	if d, ok := c.Cloud.(Diagnoser); ok {
		return d.Diagnose(ctx)
	}
	return nil
}

type faultyPluginCloud struct{ *pluginCloud }

func (c faultyPluginCloud) Fail(ctx context.Context, op Operation, message string) (func(context.Context) error, error) {
	return c.Cloud.(FaultInjector).Fail(ctx, op, message)
}

// What a plugin's cloud is, checked at compile time.
var (
	_ Attacher         = (*pluginCloud)(nil)
	_ SecretKeeper     = (*pluginCloud)(nil)
	_ ServiceAnnotator = (*pluginCloud)(nil)
	_ CCMEnvironment   = (*pluginCloud)(nil)
	_ Diagnoser        = (*pluginCloud)(nil)
	_ Powerer          = (*pluginCloud)(nil)
	_ FaultInjector    = faultyPluginCloud{}
)

// Inspector is the plugin, where it answers "instance": each optional
// question it answers is an interface the inspector has, so that a spec
// that needs one it does not answer is skipped (FeaturesOf).
func (c *pluginCloud) Inspector() Inspector {
	if !c.can(cloudplugin.Instance) {
		return nil
	}
	a := asker{c.plugin}
	var resolver NameResolver = net.DefaultResolver
	if r, ok := c.Cloud.(NameResolver); ok {
		resolver = r
	}
	lba := lbAsker{a, resolver}
	lb, rt, del := c.can(cloudplugin.LoadBalancers), c.can(cloudplugin.Routes), c.can(cloudplugin.DeleteRoute)
	switch {
	case lb && rt && del:
		return struct {
			instanceAsker
			lbAsker
			routeAsker
			routeDeleter
		}{instanceAsker{a}, lba, routeAsker{a}, routeDeleter{a}}
	case lb && rt:
		return struct {
			instanceAsker
			lbAsker
			routeAsker
		}{instanceAsker{a}, lba, routeAsker{a}}
	case rt && del:
		return struct {
			instanceAsker
			routeAsker
			routeDeleter
		}{instanceAsker{a}, routeAsker{a}, routeDeleter{a}}
	case lb:
		return struct {
			instanceAsker
			lbAsker
		}{instanceAsker{a}, lba}
	case rt:
		return struct {
			instanceAsker
			routeAsker
		}{instanceAsker{a}, routeAsker{a}}
	}
	return instanceAsker{a}
}

// Instances are the plugin's create, stop, start and terminate, each
// where it answers it and the cloud's own otherwise; none unless all four
// can be done.
func (c *pluginCloud) Instances() InstanceControl {
	base := c.Cloud.Instances()
	m := machineAsker{asker: asker{c.plugin}, base: base}
	for _, v := range []cloudplugin.Verb{cloudplugin.Create, cloudplugin.Stop, cloudplugin.Start, cloudplugin.Terminate} {
		if c.can(v) {
			m.own = append(m.own, v)
		} else if base == nil {
			return nil
		}
	}
	if _, ok := base.(InstanceAdopter); ok {
		return adoptingMachineAsker{m}
	}
	return m
}

// asker asks the plugin one question.
type asker struct{ p *cloudplugin.Plugin }

func (a asker) ask(ctx context.Context, req cloudplugin.Request) (*cloudplugin.Response, error) {
	return a.p.Ask(ctx, req)
}

type instanceAsker struct{ asker }

func (a instanceAsker) Instance(ctx context.Context, name string) (Instance, error) {
	resp, err := a.ask(ctx, cloudplugin.Request{Verb: cloudplugin.Instance, Node: name})
	if err != nil {
		return Instance{}, err
	}
	return instanceOf(name, resp.Instance), nil
}

func instanceOf(name string, m *cloudplugin.Machine) Instance {
	out := Instance{Name: name, ProviderID: m.ProviderID, InstanceType: m.InstanceType, Zone: m.Zone, Region: m.Region, Running: m.Running}
	for _, a := range m.Addresses {
		out.Addresses = append(out.Addresses, v1.NodeAddress{Type: v1.NodeAddressType(a.Type), Address: a.Address})
	}
	return out
}

// lbAsker asks the plugin for the load balancers. One the plugin gives a
// DNS name and no address gets the address that name resolves to, as the
// built-in inspectors give it and as a client finds it: through the
// cloud's own DNS where it has one (NameResolver), else the system's.
type lbAsker struct {
	asker
	resolver NameResolver
}

func (a lbAsker) LoadBalancers(ctx context.Context) ([]LoadBalancer, error) {
	resp, err := a.ask(ctx, cloudplugin.Request{Verb: cloudplugin.LoadBalancers})
	if err != nil {
		return nil, err
	}
	out := make([]LoadBalancer, 0, len(resp.LoadBalancers))
	for _, lb := range resp.LoadBalancers {
		l := LoadBalancer{Name: lb.Name, Service: lb.Service, ServiceUID: lb.ServiceUID, IP: lb.IP, Hostname: lb.Hostname,
			Backends: lb.Backends, HealthCheckNodePort: lb.HealthCheckNodePort, SourceRanges: lb.SourceRanges, ProxyProtocol: lb.ProxyProtocol}
		if a := lb.ClientAffinity; a != nil {
			l.ClientAffinity = &ClientAffinity{TimeoutSeconds: a.TimeoutSeconds}
		}
		for _, ls := range lb.Listeners {
			l.Listeners = append(l.Listeners, Listener{Port: ls.Port, Protocol: v1.Protocol(ls.Protocol), NodePort: ls.NodePort})
		}
		if l.IP == "" && l.Hostname != "" {
			// A name not in DNS yet is no error: a real one takes a while.
			if addrs, err := a.resolver.LookupHost(ctx, l.Hostname); err == nil && len(addrs) > 0 {
				slices.Sort(addrs)
				l.IP = addrs[0]
			}
		}
		out = append(out, l)
	}
	return out, nil
}

type routeAsker struct{ asker }

func (a routeAsker) Routes(ctx context.Context) ([]Route, error) {
	resp, err := a.ask(ctx, cloudplugin.Request{Verb: cloudplugin.Routes})
	if err != nil {
		return nil, err
	}
	out := make([]Route, 0, len(resp.Routes))
	for _, r := range resp.Routes {
		out = append(out, Route{Name: r.Name, DestinationCIDR: r.DestinationCIDR, TargetNode: r.TargetNode, Blackhole: r.Blackhole})
	}
	return out, nil
}

type routeDeleter struct{ asker }

func (a routeDeleter) DeleteRoute(ctx context.Context, name string) error {
	_, err := a.ask(ctx, cloudplugin.Request{Verb: cloudplugin.DeleteRoute, Route: name})
	return err
}

// Power is the plugin's stop, start and terminate, each where it answers
// it and the cloud's own power otherwise (a reached cloud's, which makes
// no machine); none unless all three can be done.
func (c *pluginCloud) Power() MachinePower {
	base := PowerOf(c.Cloud)
	m := machineAsker{asker: asker{c.plugin}, base: basePower{base}}
	for _, v := range []cloudplugin.Verb{cloudplugin.Stop, cloudplugin.Start, cloudplugin.Terminate} {
		if c.can(v) {
			m.own = append(m.own, v)
		} else if base == nil {
			return nil
		}
	}
	return m
}

// basePower is a MachinePower as an InstanceControl that makes no
// machine, for a machineAsker that is never asked to.
type basePower struct{ MachinePower }

func (basePower) Create(context.Context, string) (Instance, error) {
	return Instance{}, errors.New("the cloud makes no machine here")
}

// machineAsker changes machines through the plugin for the verbs in own,
// through base for the rest.
type machineAsker struct {
	asker
	base InstanceControl
	own  []cloudplugin.Verb
}

func (m machineAsker) Create(ctx context.Context, name string) (Instance, error) {
	if !slices.Contains(m.own, cloudplugin.Create) {
		return m.base.Create(ctx, name)
	}
	resp, err := m.ask(ctx, cloudplugin.Request{Verb: cloudplugin.Create, Node: name})
	if err != nil {
		return Instance{}, err
	}
	return instanceOf(name, resp.Instance), nil
}

func (m machineAsker) change(ctx context.Context, v cloudplugin.Verb, name string, base func(context.Context, string) error) error {
	if !slices.Contains(m.own, v) {
		return base(ctx, name)
	}
	_, err := m.ask(ctx, cloudplugin.Request{Verb: v, Node: name})
	return err
}

func (m machineAsker) Stop(ctx context.Context, name string) error {
	return m.change(ctx, cloudplugin.Stop, name, func(ctx context.Context, n string) error { return m.base.Stop(ctx, n) })
}

func (m machineAsker) Start(ctx context.Context, name string) error {
	return m.change(ctx, cloudplugin.Start, name, func(ctx context.Context, n string) error { return m.base.Start(ctx, n) })
}

func (m machineAsker) Terminate(ctx context.Context, name string) error {
	return m.change(ctx, cloudplugin.Terminate, name, func(ctx context.Context, n string) error { return m.base.Terminate(ctx, n) })
}

// adoptingMachineAsker records kind's node containers through the cloud,
// which made them machines; the plugin answers for them as for any.
type adoptingMachineAsker struct{ machineAsker }

func (m adoptingMachineAsker) Adopt(ctx context.Context, name string, addresses []v1.NodeAddress) (Instance, error) {
	return m.base.(InstanceAdopter).Adopt(ctx, name, addresses)
}

// What the plugin's pieces are, checked at compile time.
var (
	_ Inspector             = instanceAsker{}
	_ LoadBalancerInspector = lbAsker{}
	_ RouteInspector        = routeAsker{}
	_ RouteTamperer         = routeDeleter{}
	_ InstanceControl       = machineAsker{}
	_ InstanceAdopter       = adoptingMachineAsker{}
)

// plugin is the file's inspector as a cloudplugin.Plugin, its command
// taken from dir.
func (fi *FileInspector) plugin(dir string) (*cloudplugin.Plugin, error) {
	if fi.Plugin == "" {
		return nil, fmt.Errorf("inspector: plugin: not set (the cloud plugin's executable)")
	}
	p := &cloudplugin.Plugin{Command: pathIn(dir, fi.Plugin), Args: fi.Args}
	if fi.Timeout != "" {
		d, err := time.ParseDuration(fi.Timeout)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("inspector: timeout %q is not a positive duration such as 30s", fi.Timeout)
		}
		p.Timeout = d
	}
	return p, nil
}
