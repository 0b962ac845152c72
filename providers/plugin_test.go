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

package providers_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/providers/cloudplugin"
)

// plugin writes a plugin answering the verbs given, every question logged
// to log; it answers node-a's instance, one load balancer and one route.
func plugin(t *testing.T, dir string, verbs ...cloudplugin.Verb) (path, log string) {
	t.Helper()
	var quoted []string
	for _, v := range verbs {
		quoted = append(quoted, `"`+string(v)+`"`)
	}
	log = filepath.Join(dir, "asked")
	body := `#!/bin/sh
req=$(cat); echo "$req" >> ` + log + `
r='{"apiVersion":"` + cloudplugin.APIVersion + `","kind":"Response"'
case $req in
*'"capabilities"'*) echo "$r,\"verbs\":[` + strings.ReplaceAll(strings.Join(quoted, ","), `"`, `\"`) + `]}" ;;
*'"instance"'*|*'"create"'*) echo "$r,\"instance\":{\"providerID\":\"p://1\",\"zone\":\"z1\",\"running\":true,\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.0.1\"}]}}" ;;
*'"loadBalancers"'*) echo "$r,\"loadBalancers\":[{\"name\":\"lb1\",\"service\":\"ns/s\",\"hostname\":\"localhost\",\"listeners\":[{\"port\":80,\"protocol\":\"TCP\",\"nodePort\":30080}],\"backends\":[\"node-a\"]}]}" ;;
*'"routes"'*) echo "$r,\"routes\":[{\"name\":\"r1\",\"destinationCIDR\":\"10.244.0.0/24\",\"targetNode\":\"node-a\"}]}" ;;
*) echo "$r}" ;;
esac
`
	path = filepath.Join(dir, "plugin")
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, log
}

// withPlugin resolves a profile file on cloud: none with the plugin, and
// starts its cloud.
func withPlugin(t *testing.T, verbs ...cloudplugin.Verb) (providers.Cloud, string) {
	t.Helper()
	dir := t.TempDir()
	path, log := plugin(t, dir, verbs...)
	p, cfg, err := providers.Resolve(providers.External, []byte("cloud: none\nccm: {binary: "+path+", cloudProvider: p}\n"+
		"providerIDScheme: p\ncapabilities: [instances]\ninspector: {plugin: plugin, timeout: 10s}\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.NewCloud(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background(), providers.CloudEnv{}); err != nil {
		t.Fatal(err)
	}
	return c, log
}

// TestPluginEveryVerb asks every verb through the harness's interfaces,
// and checks the question each sent.
func TestPluginEveryVerb(t *testing.T) {
	ctx := context.Background()
	c, log := withPlugin(t, cloudplugin.Verbs...)
	insp := c.Inspector()
	inst, err := insp.Instance(ctx, "node-a")
	if err != nil || inst.ProviderID != "p://1" || inst.Zone != "z1" || !inst.Running || len(inst.Addresses) != 1 || inst.Name != "node-a" {
		t.Errorf("instance: %+v %v", inst, err)
	}
	lbs, err := insp.(providers.LoadBalancerInspector).LoadBalancers(ctx)
	// A name with no address: resolved as a client would (here the
	// system's resolver; a reached cloud's own DNS where it has one).
	if err != nil || len(lbs) != 1 || lbs[0].Service != "ns/s" || lbs[0].Listeners[0] != (providers.Listener{Port: 80, Protocol: "TCP", NodePort: 30080}) ||
		lbs[0].Hostname != "localhost" || lbs[0].IP != "127.0.0.1" {
		t.Errorf("load balancers: %+v %v", lbs, err)
	}
	routes, err := insp.(providers.RouteInspector).Routes(ctx)
	if err != nil || len(routes) != 1 || routes[0].TargetNode != "node-a" {
		t.Errorf("routes: %+v %v", routes, err)
	}
	if err := insp.(providers.RouteTamperer).DeleteRoute(ctx, "r1"); err != nil {
		t.Error(err)
	}
	ic := c.Instances()
	if inst, err := ic.Create(ctx, "node-b"); err != nil || inst.Name != "node-b" {
		t.Errorf("create: %+v %v", inst, err)
	}
	for _, f := range []func(context.Context, string) error{ic.Stop, ic.Start, ic.Terminate} {
		if err := f(ctx, "node-b"); err != nil {
			t.Error(err)
		}
	}
	b, _ := os.ReadFile(log)
	var asked []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		asked = append(asked, strings.TrimPrefix(l, `{"apiVersion":"`+cloudplugin.APIVersion+`","kind":"Request",`))
	}
	want := []string{`"verb":"capabilities"}`, `"verb":"instance","node":"node-a"}`, `"verb":"loadBalancers"}`, `"verb":"routes"}`,
		`"verb":"deleteRoute","route":"r1"}`, `"verb":"create","node":"node-b"}`, `"verb":"stop","node":"node-b"}`,
		`"verb":"start","node":"node-b"}`, `"verb":"terminate","node":"node-b"}`}
	if !slices.Equal(asked, want) {
		t.Errorf("the plugin was asked\n%s\nwant\n%s", strings.Join(asked, "\n"), strings.Join(want, "\n"))
	}
}

// TestPluginAnswersWhatItSays: a question the plugin does not answer is
// an interface the inspector lacks, so the specs that need it skip.
func TestPluginAnswersWhatItSays(t *testing.T) {
	for _, tc := range []struct {
		verbs                []cloudplugin.Verb
		lbs, routes, tampers bool
	}{
		{[]cloudplugin.Verb{cloudplugin.Instance}, false, false, false},
		{[]cloudplugin.Verb{cloudplugin.Instance, cloudplugin.LoadBalancers}, true, false, false},
		{[]cloudplugin.Verb{cloudplugin.Instance, cloudplugin.Routes}, false, true, false},
		{[]cloudplugin.Verb{cloudplugin.Instance, cloudplugin.Routes, cloudplugin.DeleteRoute}, false, true, true},
		{[]cloudplugin.Verb{cloudplugin.Instance, cloudplugin.LoadBalancers, cloudplugin.Routes}, true, true, false},
	} {
		c, _ := withPlugin(t, tc.verbs...)
		insp := c.Inspector()
		_, lbs := insp.(providers.LoadBalancerInspector)
		_, routes := insp.(providers.RouteInspector)
		_, tampers := insp.(providers.RouteTamperer)
		if lbs != tc.lbs || routes != tc.routes || tampers != tc.tampers {
			t.Errorf("verbs %v: load balancers %v, routes %v, deletes routes %v; want %v %v %v", tc.verbs, lbs, routes, tampers, tc.lbs, tc.routes, tc.tampers)
		}
		if c.Instances() != nil {
			t.Errorf("verbs %v: machines can be changed, with cloud: none and no create, stop, start, terminate", tc.verbs)
		}
		if _, ok := c.(providers.FaultInjector); ok {
			t.Errorf("verbs %v: cloud: none with a plugin injects faults", tc.verbs)
		}
	}
	c, _ := withPlugin(t, cloudplugin.LoadBalancers)
	if c.Inspector() != nil {
		t.Error("a plugin that answers no instance is an inspector")
	}
}

// TestPluginFileBadInput: the inspector's mistakes are one line each.
func TestPluginFileBadInput(t *testing.T) {
	dir := t.TempDir()
	path, _ := plugin(t, dir)
	base := "cloud: none\nccm: {binary: " + path + ", cloudProvider: p}\ncapabilities: [load-balancers]\n"
	for file, want := range map[string]string{
		base + "inspector: {plugin: nothing-here}":                                       "inspector: plugin " + filepath.Join(dir, "nothing-here") + " is not an executable file",
		base + "inspector: {args: [x]}":                                                  "inspector: plugin: not set",
		base + "inspector: {plugin: plugin, timeout: soon}":                              `inspector: timeout "soon" is not a positive duration`,
		base + "inspector: {plugin: plugin, command: x}":                                 `unknown field "command"`,
		strings.Replace(base, "[load-balancers]", "[instances]\nproviderIDScheme: p", 1): "capabilities: instances with cloud: none",
	} {
		_, _, err := providers.Resolve(providers.External, []byte(file), dir)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", file, err, want)
		}
	}
}
