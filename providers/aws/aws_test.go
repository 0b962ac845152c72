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

package aws

import (
	"context"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/internal/process"
	"sigs.k8s.io/ccm-harness/specs"
)

func newCloud(t *testing.T, config string) *Cloud {
	t.Helper()
	c, err := Profile().NewCloud([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	return c.(*Cloud)
}

func TestCCMConfig(t *testing.T) {
	for config, want := range map[string][]string{
		"": {"[Global]\n", "Region = fake-region-1\n", "VPC = " + api.AWSVPCID + "\n", "SubnetID = " + api.AWSSubnetID(0) + "\n",
			"KubernetesClusterID = ccm-harness\n", "[ServiceOverride \"ec2\"]\nService = EC2\nRegion = fake-region-1\nURL = /aws/ec2/\nSigningRegion = fake-region-1\n"},
		"clusterID: other\nregion: r1":            {"KubernetesClusterID = other\n", "Region = r1\n"},
		"endpointURL: http://127.0.0.1:1/nowhere": {"URL = http://127.0.0.1:1/nowhere\n"},
		"ipv6: true":                         {"KubernetesClusterID = ccm-harness\nNodeIPFamilies = ipv4\nNodeIPFamilies = ipv6\n"},
		"ipv6: true\nnodeIPFamilies: [ipv4]": {"KubernetesClusterID = ccm-harness\nNodeIPFamilies = ipv4\n\n"},
	} {
		got, err := newCloud(t, config).CCMConfig()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(got), w) {
				t.Errorf("config %q: cloud config\n%s\nlacks %q", config, got, w)
			}
		}
	}
	env := newCloud(t, "wrongSecretKey: true").CCMEnv()
	if !slices.Contains(env, "AWS_EC2_METADATA_DISABLED=true") || !slices.Contains(env, "AWS_ACCESS_KEY_ID="+api.AWSAccessKeyID) ||
		!slices.Contains(env, "AWS_SECRET_ACCESS_KEY=not-") {
		t.Errorf("CCM environment %v: want the access key, a wrong secret and the metadata client off", env)
	}
	if _, err := Profile().NewCloud([]byte("secretKey: x")); err == nil || !strings.Contains(err.Error(), "aws provider config") {
		t.Errorf("unknown field: %v", err)
	}
	if got, _ := newCloud(t, "").CCMConfig(); strings.Contains(string(got), "NodeIPFamilies") {
		t.Errorf("default cloud config\n%s\nnames NodeIPFamilies; the CCM's default is ipv4 alone", got)
	}
	for config, want := range map[string]string{
		"nodeIPFamilies: []":           `aws provider config: nodeIPFamilies is empty: name "ipv4", "ipv6" or both, or leave it out`,
		"nodeIPFamilies: [ipv4, ipv4]": `aws provider config: nodeIPFamilies: "ipv4" is not "ipv4" or "ipv6", or is named twice`,
		"nodeIPFamilies: [inet6]":      `aws provider config: nodeIPFamilies: "inet6" is not "ipv4" or "ipv6", or is named twice`,
		"ipv6: true\nreach: {}":        "with reach, give only reach and loadBalancerType",
	} {
		if _, err := Profile().NewCloud([]byte(config)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", config, err, want)
		}
	}
}

// TestIPv6 checks that a cloud with IPv6 claims node-dual-stack, and one
// without does not.
func TestIPv6(t *testing.T) {
	p := Profile()
	for config, want := range map[string]bool{"": false, "ipv6: true": true, "ipv6: true\nloadBalancerType: nlb": true, "nodeIPFamilies: [ipv4, ipv6]": false} {
		f := p.FeaturesOf(newCloud(t, config))
		if f[specs.NodeDualStack] != want {
			t.Errorf("%q: claims node-dual-stack: %t, want %t (features %s)", config, f[specs.NodeDualStack], want, f)
		}
		if f[specs.LoadBalancerDualStack] {
			t.Errorf("%q: claims load-balancer-dual-stack; the CCM asks for no IPv6 of a load balancer", config)
		}
	}
}

// TestDiagnose checks the one-line causes the bring-up reports for a CCM
// that cannot use EC2, against fakecloud's.
func TestDiagnose(t *testing.T) {
	srv, err := server.New(server.Config{CloudToken: "cloud-token", AdminToken: "admin-token"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	port, err := process.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ec2URL := hs.URL + api.AWSPath + "ec2/"
	for config, want := range map[string]string{
		"wrongSecretKey: true\nendpointURL: " + ec2URL:                                            "refuses the CCM's credentials (AuthFailure: AWS was not able to validate",
		"wrongSecretKey: true\nendpointURL: http://127.0.0.1:" + strconv.Itoa(port) + "/aws/ec2/": "cannot reach EC2 at http://127.0.0.1:",
		"wrongSecretKey: true\nendpointURL: " + hs.URL + "/nothing/":                              "answers the CCM's first call with",
	} {
		err := newCloud(t, config).Diagnose(context.Background())
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line containing %q", config, err, want)
		}
	}
}

// TestLoadBalancerType checks what the config's load balancer type asks of
// the specs' Services, and the extended features that come with it.
func TestLoadBalancerType(t *testing.T) {
	classic, nlb := newCloud(t, ""), newCloud(t, "loadBalancerType: nlb")
	if a := classic.ServiceAnnotations(); len(a) != 0 {
		t.Errorf("classic: annotations %v, want none", a)
	}
	if a := nlb.ServiceAnnotations(); a[AnnotationLoadBalancerType] != "nlb" {
		t.Errorf("nlb: annotations %v, want the load balancer type nlb", a)
	}
	p := Profile()
	if p.FeaturesOf(classic)[specs.LoadBalancerUDP] {
		t.Error("classic: claims load-balancer-udp; a classic load balancer carries TCP only")
	}
	if !p.FeaturesOf(nlb)[specs.LoadBalancerUDP] {
		t.Error("nlb: does not claim load-balancer-udp; a network load balancer carries UDP")
	}
	if _, err := Profile().NewCloud([]byte("loadBalancerType: alb")); err == nil || !strings.Contains(err.Error(), `loadBalancerType "alb" is neither "classic" nor "nlb"`) {
		t.Errorf("loadBalancerType: alb: %v", err)
	}
}
