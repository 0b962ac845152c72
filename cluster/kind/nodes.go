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
	"bytes"
	"context"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/internal/nodecontainer"
	"sigs.k8s.io/ccm-harness/internal/nodewait"
	"sigs.k8s.io/ccm-harness/providers"
)

// nodePool adds kind nodes to a running cluster, as kind itself cannot:
// a container made as kind makes a worker's, joined with kubeadm, with
// an instance in the cloud that mirrors it. Powering off stops the
// container, so its kubelet really goes silent.
type nodePool struct {
	in *instance
}

var _ cluster.NodePool = nodePool{}

// addTimeout bounds a node's boot and join: systemd, containerd and
// kubeadm's TLS bootstrap, on a loaded 2-core machine. It bounds the
// machine, not the CCM (whose waits start once the node has registered):
// in make test, a node's containerd once took over 2 minutes to answer
// beside the unit tests' compiling.
const addTimeout = 4 * time.Minute

func (p nodePool) Add(ctx context.Context, name string, opts ...cluster.NodeOption) (*v1.Node, error) {
	var o cluster.NodeOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.InTreeCloud {
		return nil, fmt.Errorf("node %s: the kind runtime's kubelets are of release %s, which has no in-tree cloud providers", name, p.in.version)
	}
	in := p.in
	ctx, cancel := context.WithTimeout(ctx, addTimeout)
	defer cancel()
	// kind deletes every container with its cluster label: a node added
	// here goes with the cluster.
	args := []string{"run", "--detach", "--tty", "--name", name, "--hostname", name,
		"--label", "io.x-k8s.kind.cluster=" + in.spec.Name, "--label", "io.x-k8s.kind.role=worker",
		"--net", "kind", "--restart=on-failure:1", "--init=false", "--cgroupns=private",
		"--privileged", "--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
		"--tmpfs", "/tmp", "--tmpfs", "/run", "--volume", "/var", "--volume", "/lib/modules:/lib/modules:ro",
		in.nodeImage}
	if out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("node %s: docker run: %v: %s", name, err, bytes.TrimSpace(out))
	}
	n, err := in.kindNode(name)
	if err != nil {
		return nil, err
	}
	addrs, err := in.containerAddresses(name, n)
	if err != nil {
		return nil, err
	}
	if _, err := in.cloud.Instances().(providers.InstanceAdopter).Adopt(ctx, name, addrs); err != nil {
		return nil, fmt.Errorf("instance for node %s: %w", name, err)
	}
	// As kind gives its own nodes: each InternalIP, IPv4 first.
	var ips []string
	for _, a := range addrs {
		if a.Type == v1.NodeInternalIP {
			ips = append(ips, a.Address)
		}
	}
	nodeIP := strings.Join(ips, ",")
	if o.ProvidedNodeIP != nil {
		nodeIP = o.ProvidedNodeIP(addrs)
	}
	if err := in.join(ctx, n, nodeIP, o.Labels); err != nil {
		return nil, fmt.Errorf("node %s: %w", name, err)
	}
	in.addNode(name, n)
	if err := nodewait.For(ctx, in.client, addTimeout, "node "+name+" to register with a pod CIDR of each family", []string{name}, in.hasPodCIDRs); err != nil {
		return nil, err
	}
	node, err := in.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if err := in.podNetworkOn(n, node.Spec.PodCIDRs); err != nil {
		return nil, err
	}
	return node, nil
}

// join waits for the container's containerd and joins it with a fresh
// bootstrap token, as kind joins its workers but for the CCM's settings.
func (in *instance) join(ctx context.Context, n nodes.Node, nodeIP string, labels map[string]string) error {
	for {
		if err := n.CommandContext(ctx, "ctr", "version").Run(); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("containerd did not start in the node container within %s (container %s): %w", addTimeout, nodecontainer.State(n.String()), ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
	cp, err := in.kindNode(in.spec.Name + "-control-plane")
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := cp.CommandContext(ctx, "kubeadm", "token", "create", "--print-join-command").SetStdout(&out).Run(); err != nil {
		return fmt.Errorf("kubeadm token create: %w", err)
	}
	// "kubeadm join ENDPOINT --token T --discovery-token-ca-cert-hash H"
	f := strings.Fields(out.String())
	if len(f) < 7 || f[0] != "kubeadm" || f[1] != "join" {
		return fmt.Errorf("kubeadm token create printed %q, not a join command", out.String())
	}
	endpoint, token, hash := f[2], flagValue(f, "--token"), flagValue(f, "--discovery-token-ca-cert-hash")
	conf := joinConf(nodeIP, endpoint, token, hash, labels)
	if err := n.CommandContext(ctx, "sh", "-c", "cat > /kind/kubeadm.conf").SetStdin(strings.NewReader(conf)).Run(); err != nil {
		return err
	}
	var joinOut bytes.Buffer
	if err := n.CommandContext(ctx, "kubeadm", "join", "--config", "/kind/kubeadm.conf", "--v=2").SetStdout(&joinOut).SetStderr(&joinOut).Run(); err != nil {
		return fmt.Errorf("kubeadm join: %w: %s", err, strings.Join(lastLines(joinOut.String(), 5), " | "))
	}
	return nil
}

// joinConfig is kind's JoinConfiguration with this runtime's patches.
const joinConfig = `apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
nodeRegistration:
  criSocket: unix:///run/containerd/containerd.sock
  kubeletExtraArgs:
  - name: node-ip
    value: "%s"
  - name: cloud-provider
    value: external
discovery:
  bootstrapToken:
    apiServerEndpoint: "%s"
    token: "%s"
    caCertHashes: ["%s"]
skipPhases:
- preflight
timeouts:
` + kubeadmTimeouts

// joinConf is joinConfig filled in; labels become the kubelet's
// --node-labels.
func joinConf(nodeIP, endpoint, token, hash string, labels map[string]string) string {
	conf := fmt.Sprintf(joinConfig, nodeIP, endpoint, token, hash)
	if len(labels) == 0 {
		return conf
	}
	pairs := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, k+"="+labels[k])
	}
	const args = "  kubeletExtraArgs:\n"
	return strings.Replace(conf, args, args+"  - name: node-labels\n    value: \""+strings.Join(pairs, ",")+"\"\n", 1)
}

func flagValue(fields []string, name string) string {
	for i, f := range fields[:len(fields)-1] {
		if f == name {
			return fields[i+1]
		}
	}
	return ""
}

// PowerOff stops the instance and the container at once, as a machine
// losing power: the kubelet stops reporting and nothing is drained.
func (p nodePool) PowerOff(ctx context.Context, name string) error {
	if err := p.in.cloud.Instances().Stop(ctx, name); err != nil {
		return err
	}
	return nodecontainer.Stop(ctx, name)
}

// PowerOn starts the instance and the container; systemd boots and the
// kubelet reports again.
func (p nodePool) PowerOn(ctx context.Context, name string) error {
	if err := p.in.cloud.Instances().Start(ctx, name); err != nil {
		return err
	}
	return nodecontainer.Start(ctx, name)
}

// Terminate destroys the instance and stops the container for good; the
// Node object stays for the CCM to delete.
func (p nodePool) Terminate(ctx context.Context, name string) error {
	if err := p.in.cloud.Instances().Terminate(ctx, name); err != nil {
		return err
	}
	return nodecontainer.Stop(ctx, name)
}

// Remove terminates the node, deletes its Node and its container.
func (p nodePool) Remove(ctx context.Context, name string) error {
	if err := p.in.cloud.Instances().Terminate(ctx, name); err != nil {
		return err
	}
	if err := p.in.client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	p.in.removeNode(name)
	return nodecontainer.Remove(ctx, name)
}

// kindNode is the kind node (container) called name.
func (in *instance) kindNode(name string) (nodes.Node, error) {
	list, err := provider().ListNodes(in.spec.Name)
	if err != nil {
		return nil, err
	}
	for _, n := range list {
		if n.String() == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no kind node %s in cluster %s", name, in.spec.Name)
}
