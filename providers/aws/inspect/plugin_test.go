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

package inspect_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/providers/cloudplugin"
)

// TestExamplePlugin asks the example cloud plugin (examples/cloud-plugin/
// aws-cli.sh, the AWS CLI and jq) every verb it answers, and compares each
// answer with this inspector's, over the same cloud: two clients of AWS's
// public API, one in Go, one in shell, must see the same truth.
func TestExamplePlugin(t *testing.T) {
	needTools(t)
	t.Parallel()
	c := newCloud(t)
	ctx := context.Background()
	a, _ := c.asTheCCM()
	p := examplePlugin(t, c)
	ask := func(verb cloudplugin.Verb, node, route string) *cloudplugin.Response {
		t.Helper()
		resp, err := p.Ask(ctx, cloudplugin.Request{Verb: verb, Node: node, Route: route})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	if got := ask(cloudplugin.Capabilities, "", "").Verbs; len(got) != 7 || slices.Contains(got, cloudplugin.Create) {
		t.Errorf("capabilities %v: want every verb but create", got)
	}

	m := ask(cloudplugin.Instance, "node-a", "").Instance
	want, err := c.insp.Instance(ctx, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	got := providers.Instance{Name: "node-a", ProviderID: m.ProviderID, InstanceType: m.InstanceType, Zone: m.Zone, Region: m.Region, Running: m.Running}
	for _, ad := range m.Addresses {
		got.Addresses = append(got.Addresses, addr(ad))
	}
	if !equalInstance(got, want) {
		t.Errorf("instance node-a:\n plugin    %+v\n inspector %+v", got, want)
	}

	lbs, err := c.insp.LoadBalancers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	classic := lbs[slices.IndexFunc(lbs, func(lb providers.LoadBalancer) bool { return lb.Name == "a1" })]
	answered := ask(cloudplugin.LoadBalancers, "", "").LoadBalancers
	if len(answered) != 1 {
		t.Fatalf("load balancers %+v: want the classic one, a1 (the example answers no network load balancers)", answered)
	}
	lb := answered[0]
	var listeners []providers.Listener
	for _, l := range lb.Listeners {
		listeners = append(listeners, providers.Listener{Port: l.Port, Protocol: "TCP", NodePort: l.NodePort})
	}
	if lb.Name != classic.Name || lb.Service != classic.Service || lb.Hostname != classic.Hostname || lb.HealthCheckNodePort != classic.HealthCheckNodePort ||
		!sameSet(lb.Backends, classic.Backends) || !sameSet(lb.SourceRanges, classic.SourceRanges) || !slices.Equal(listeners, classic.Listeners) {
		t.Errorf("load balancer a1:\n plugin    %+v\n inspector %+v", lb, classic)
	}

	routes, err := c.insp.Routes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	answeredRoutes := ask(cloudplugin.Routes, "", "").Routes
	if len(answeredRoutes) != len(routes) || len(routes) != 1 || answeredRoutes[0].Name != routes[0].Name ||
		answeredRoutes[0].TargetNode != routes[0].TargetNode || answeredRoutes[0].DestinationCIDR != routes[0].DestinationCIDR {
		t.Errorf("routes:\n plugin    %+v\n inspector %+v", answeredRoutes, routes)
	}
	ask(cloudplugin.DeleteRoute, "", answeredRoutes[0].Name)
	if routes, err := c.insp.Routes(ctx); err != nil || len(routes) != 0 {
		t.Errorf("after the plugin's deleteRoute: %+v (%v), want none", routes, err)
	}

	var truth api.Instance
	for _, step := range []struct {
		verb cloudplugin.Verb
		want api.InstanceState
	}{{cloudplugin.Stop, api.StateStopped}, {cloudplugin.Start, api.StateRunning}, {cloudplugin.Terminate, api.StateTerminated}, {cloudplugin.Terminate, api.StateTerminated}} {
		ask(step.verb, "node-a", "")
		c.fakeTrue(api.AdminPathInstance+a.ID, &truth)
		if truth.State != step.want {
			t.Errorf("after %s: fakecloud says %s, want %s", step.verb, truth.State, step.want)
		}
	}
	_, err = p.Ask(ctx, cloudplugin.Request{Verb: cloudplugin.Instance, Node: "node-a"})
	if err == nil || !strings.Contains(err.Error(), "exit status 1: EC2 has 0 live instances with private DNS name node-a") {
		t.Errorf("a terminated node's instance: %v, want the plugin's one line quoted", err)
	}
}

// TestExamplePluginLoadBalancerGoneMeanwhile: the example reads the
// listing again when a load balancer goes between two of its calls.
func TestExamplePluginLoadBalancerGoneMeanwhile(t *testing.T) {
	needTools(t)
	t.Parallel()
	c := newCloud(t)
	c.asTheCCM()
	p := examplePlugin(t, c)
	p.Env = append(p.Env, "AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING="+c.racingELB()+api.AWSPath+"elb/")
	resp, err := p.Ask(context.Background(), cloudplugin.Request{Verb: cloudplugin.LoadBalancers})
	if err != nil {
		t.Fatalf("a load balancer deleted meanwhile: %v", err)
	}
	if len(resp.LoadBalancers) != 0 {
		t.Errorf("load balancers %+v: want none, a1 deleted meanwhile (the example answers no network ones)", resp.LoadBalancers)
	}
}

// needTools skips t without the AWS CLI and jq, but fails it in CI,
// whose .ci/run installs them.
func needTools(t *testing.T) {
	for _, tool := range []string{"aws", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed: .ci/run installs it", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
}

// examplePlugin is the example plugin with the AWS CLI's environment for
// c, as the inspector.
func examplePlugin(t *testing.T, c *cloud) *cloudplugin.Plugin {
	script, err := filepath.Abs("../../../examples/cloud-plugin/aws-cli.sh")
	if err != nil {
		t.Fatal(err)
	}
	// Its answers are what this checks, not its speed: each verb runs the
	// AWS CLI a few times, a second of CPU each, and make unit runs this
	// beside other packages' clusters on two cores, where the load
	// balancers' answer once took over the default minute.
	return &cloudplugin.Plugin{Command: script, Timeout: 5 * time.Minute, Env: []string{
		"AWS_ACCESS_KEY_ID=" + api.AWSInspectorAccessKeyID, "AWS_SECRET_ACCESS_KEY=" + inspectorToken,
		"AWS_DEFAULT_REGION=" + region, "AWS_ENDPOINT_URL_EC2=" + c.url + api.AWSPath + "ec2/",
		"AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING=" + c.url + api.AWSPath + "elb/",
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true",
		"KUBERNETES_CLUSTER_ID=" + api.AWSClusterID,
	}}
}

func addr(a cloudplugin.Address) v1.NodeAddress {
	return v1.NodeAddress{Type: v1.NodeAddressType(a.Type), Address: a.Address}
}
