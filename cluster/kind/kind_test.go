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

package kind

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	kindexec "sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/yaml"
)

func TestBridgeConfig(t *testing.T) {
	conf, err := bridgeConfig([]string{"10.244.1.0/24", "fd00:10:244:1::/64"})
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Plugins []struct {
			Type   string `json:"type"`
			IPMasq bool   `json:"ipMasq"`
			IPAM   struct {
				Ranges [][]struct{ Subnet string } `json:"ranges"`
				Routes []struct{ Dst string }      `json:"routes"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(conf), &c); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, conf)
	}
	if len(c.Plugins) == 0 || c.Plugins[0].Type != "bridge" || c.Plugins[0].IPMasq {
		t.Fatalf("first plugin %+v, want a bridge that does not masquerade (pod addresses must cross nodes as they are)", c.Plugins)
	}
	// A range of each family gives each pod an address of each.
	ipam := c.Plugins[0].IPAM
	if len(ipam.Ranges) != 2 || ipam.Ranges[0][0].Subnet != "10.244.1.0/24" || ipam.Ranges[1][0].Subnet != "fd00:10:244:1::/64" {
		t.Errorf("ranges %+v, want one of each of the node's pod CIDRs", ipam.Ranges)
	}
	if len(ipam.Routes) != 2 || ipam.Routes[0].Dst != "0.0.0.0/0" || ipam.Routes[1].Dst != "::/0" {
		t.Errorf("routes %+v, want a default route of each family", ipam.Routes)
	}
	for _, bad := range [][]string{{"10.244.1.0"}, nil} {
		if _, err := bridgeConfig(bad); err == nil {
			t.Errorf("pod CIDRs %q were accepted", bad)
		}
	}
}

// kind matches a patch to a kubeadm document by its kind, and merges
// extra arguments by name, a null value removing one.
func TestKubeadmPatches(t *testing.T) {
	// By apiVersion and kind: kind applies a patch that names its
	// apiVersion only to a configuration of that version.
	docs := map[string]map[string]any{}
	for _, p := range kubeadmPatches {
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(p), &doc); err != nil {
			t.Fatalf("patch is not YAML: %v\n%s", err, p)
		}
		docs[fmt.Sprint(doc["apiVersion"], " ", doc["kind"])] = doc
	}
	if docs["<nil> KubeletConfiguration"] == nil {
		t.Error("no patch for KubeletConfiguration")
	}
	// kubeadm's v1beta4 (kind's from v1.36) lists arguments by name;
	// v1beta3 (before v1.36) maps them.
	for version, want := range map[string][2]string{
		"kubeadm.k8s.io/v1beta4": {"name:provider-id value:<nil>", "name:cloud-provider value:external"},
		"kubeadm.k8s.io/v1beta3": {"provider-id:<nil>", "cloud-provider:external"},
	} {
		if docs[version+" ClusterConfiguration"] == nil {
			t.Errorf("no %s patch for ClusterConfiguration", version)
		}
		if args := fmt.Sprint(docs[version+" ClusterConfiguration"]["controllerManager"]); !strings.Contains(args, want[1]) {
			t.Errorf("%s ClusterConfiguration controller manager arguments %s: want cloud-provider external", version, args)
		}
		// kubeadm deploys CoreDNS: upstream's specs ask Services by name.
		if phases := fmt.Sprint(docs[version+" InitConfiguration"]["skipPhases"]); strings.Contains(phases, "coredns") {
			t.Errorf("%s InitConfiguration skips %s: want CoreDNS deployed", version, phases)
		}
		for _, k := range []string{"InitConfiguration", "JoinConfiguration"} {
			args := fmt.Sprint(docs[version+" "+k]["nodeRegistration"])
			if !strings.Contains(args, want[0]) || !strings.Contains(args, want[1]) {
				t.Errorf("%s %s kubelet arguments %s: want cloud-provider external and kind's provider-id removed", version, k, args)
			}
		}
	}
}

func TestJoinConfig(t *testing.T) {
	var doc map[string]any
	conf := joinConf("172.18.0.9", "c-control-plane:6443", "abc.def", "sha256:00", map[string]string{"b": "2", "a": "1"})
	if err := yaml.Unmarshal([]byte(conf), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["kind"] != "JoinConfiguration" {
		t.Errorf("kind %v", doc["kind"])
	}
	args := fmt.Sprint(doc["nodeRegistration"])
	if !strings.Contains(args, "name:node-ip value:172.18.0.9") || !strings.Contains(args, "name:cloud-provider value:external") ||
		!strings.Contains(args, "name:node-labels value:a=1,b=2") {
		t.Errorf("kubelet arguments %s: want node-ip, cloud-provider external and the node labels", args)
	}
	f := strings.Fields("kubeadm join c:6443 --token abc.def --discovery-token-ca-cert-hash sha256:00")
	if flagValue(f, "--token") != "abc.def" || flagValue(f, "--discovery-token-ca-cert-hash") != "sha256:00" || flagValue(f, "--nope") != "" {
		t.Error("flagValue misreads a join command")
	}
}

// A failed kubeadm in a node says why in its output, which kind's error
// message leaves out: the bring-up error quotes its last lines.
func TestCommandOutput(t *testing.T) {
	out := []byte("line 1\nline 2\n" + strings.Repeat("progress\n", 10) + "error execution phase kubelet-start: timed out\n")
	err := fmt.Errorf("failed to join node with kubeadm: %w", &kindexec.RunError{Command: []string{"kubeadm", "join"}, Output: out, Inner: errors.New("exit status 1")})
	got := commandOutput(err)
	if !strings.HasSuffix(got, "\n    error execution phase kubelet-start: timed out") || strings.Contains(got, "line 2") || strings.Count(got, "\n") != 8 {
		t.Errorf("commandOutput: %q", got)
	}
	// kubeadm at --v=6 ends with its error's stack: the frames are left
	// out, the messages before them kept.
	stack := "error execution phase wait-control-plane: could not initialize a Kubernetes cluster\n" +
		"k8s.io/kubernetes/cmd/kubeadm/app/cmd/phases/workflow.(*Runner).Run.func1\n" +
		"\tk8s.io/kubernetes/cmd/kubeadm/app/cmd/phases/workflow/runner.go:262 +0x13a\n" +
		"runtime.goexit\n\truntime/asm_amd64.s:1700 +0x1\n"
	err = fmt.Errorf("failed to init node with kubeadm: %w", &kindexec.RunError{Output: []byte(strings.Repeat("earlier\n", 9) + "[api-check] The API server is not healthy after 3m0s\n" + stack)})
	got = commandOutput(err)
	if strings.Contains(got, "runner.go") || strings.Contains(got, "goexit") || !strings.Contains(got, "not healthy after 3m0s") || strings.Count(got, "\n") != 8 {
		t.Errorf("commandOutput kept stack frames or lost the messages: %q", got)
	}
	if commandOutput(errors.New("other")) != "" {
		t.Error("commandOutput of an error with no command output is not empty")
	}
}
