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
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/cluster/audit"
	"sigs.k8s.io/ccm-harness/cluster/kind/nodeimage"
	"sigs.k8s.io/ccm-harness/internal/nodewait"
	"sigs.k8s.io/ccm-harness/internal/process"
	"sigs.k8s.io/ccm-harness/providers"
)

// The cluster's networks. Pod CIDRs are real here: each node's bridge
// hands out addresses from its own.
// A dual-stack cluster (cluster.Spec.DualStack) has an IPv6 range of each
// beside: kind's defaults.
const (
	serviceCIDR  = "10.96.0.0/16"
	clusterCIDR  = "10.244.0.0/16"
	serviceCIDR6 = "fd00:10:96::/112"
	clusterCIDR6 = "fd00:10:244::/56"
)

// clusterCIDRs are the cluster's pod ranges, IPv4 first.
func (in *instance) clusterCIDRs() []string {
	if in.spec.DualStack {
		return []string{clusterCIDR, clusterCIDR6}
	}
	return []string{clusterCIDR}
}

// serviceCIDRs are the cluster's Service ranges, IPv4 first.
func (in *instance) serviceCIDRs() []string {
	if in.spec.DualStack {
		return []string{serviceCIDR, serviceCIDR6}
	}
	return []string{serviceCIDR}
}

// containerAddresses are what the cloud records of node container n as
// its instance's addresses: the container's IPv4 address, in a dual-stack
// cluster its IPv6 address too, and its name, which is what the kubelet
// reports.
func (in *instance) containerAddresses(name string, n nodes.Node) ([]v1.NodeAddress, error) {
	ip4, ip6, err := n.IP()
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", name, err)
	}
	addrs := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: ip4}}
	if in.spec.DualStack {
		if ip6 == "" {
			return nil, fmt.Errorf("node %s has no IPv6 address on Docker's kind network, which a dual-stack cluster needs: delete the network (docker network rm kind) so that kind makes it again with an IPv6 range", name)
		}
		addrs = append(addrs, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip6})
	}
	return append(addrs, v1.NodeAddress{Type: v1.NodeHostName, Address: name}), nil
}

// instance is one kind cluster being brought up or running.
type instance struct {
	spec      cluster.Spec
	dir       string
	nodeImage string
	logf      func(string, ...any)

	procs   process.Group
	cloud   providers.Cloud
	client  kubernetes.Interface
	version string
	fabric  *fabric
	// host is this machine's address on the nodes' network (the Docker
	// network's gateway), where pods reach what runs here, and nodeNet
	// that network.
	host    string
	nodeNet netip.Prefix
	// host6 and nodeNet6 are the same of IPv6, in a dual-stack cluster.
	host6    string
	nodeNet6 netip.Prefix

	// nodesMu guards nodes, which the node pool changes while the fabric
	// reads them.
	nodesMu sync.Mutex
	nodes   map[string]nodes.Node

	stateMu sync.Mutex
	steps   cluster.Steps
	created bool

	// pods are the managers run from images, as pods.
	pods []*podManager
	// audit is the API server's audit log, read for the CCM's refusals.
	audit audit.Log
}

func (in *instance) logDir() string { return in.spec.LogDir() }

func (in *instance) kubeconfig() string { return filepath.Join(in.dir, kubeconfigFile) }

func (in *instance) up(ctx context.Context) (*cluster.Cluster, error) {
	spec := in.spec
	start := time.Now()
	var err error
	if in.cloud, err = spec.Profile.NewCloud(spec.ProviderConfig); err != nil {
		return nil, err
	}
	// Said before anything is made: the nodes exist already when the
	// cloud is asked for their instances.
	if _, ok := in.cloud.Instances().(providers.InstanceAdopter); !ok {
		return nil, fmt.Errorf("provider %s's cloud cannot record kind's node containers as its instances; run it with --cluster=local, or against its own cluster with --cluster=existing", spec.Profile.Name)
	}
	var bins map[string]string
	if err := in.steps.Do("binaries ready", func() (err error) {
		bins, err = spec.Binaries.Paths(ctx, components(spec)...)
		return err
	}); err != nil {
		return nil, err
	}
	if in.nodeImage == "" {
		if err := in.steps.Do("node image ready", func() (err error) {
			in.nodeImage, err = nodeimage.Ensure(ctx, nodeimage.Options{Binaries: spec.Binaries, Logf: in.logf, KubernetesVersion: spec.KubernetesVersion})
			return err
		}); err != nil {
			return nil, err
		}
	}
	if err := in.steps.Do(fmt.Sprintf("kind cluster of %d nodes", spec.Nodes), func() error { return in.createCluster(ctx) }); err != nil {
		return nil, err
	}
	nets, gateway, gateway6, err := dockerNetworks(ctx, "kind")
	if err != nil {
		return nil, err
	}
	in.host = gateway
	if spec.DualStack {
		in.host6 = gateway6
	}
	for _, n := range nets {
		if gw, err := netip.ParseAddr(gateway); err == nil && n.Contains(gw) {
			in.nodeNet = n
		}
		if gw, err := netip.ParseAddr(in.host6); err == nil && n.Contains(gw) {
			in.nodeNet6 = n
		}
	}
	// A CCM from an image runs as a pod on a node, and reaches the cloud
	// at this machine's address on the nodes' network.
	host := ""
	if spec.Profile.CCM.Image != "" {
		if gateway == "" {
			return nil, fmt.Errorf("docker network kind has no IPv4 gateway, where a CCM pod would reach the cloud on this machine")
		}
		host = gateway
	}
	if err := in.steps.Do("cloud ready", func() error {
		admin, err := cluster.MakeAdminDir(in.dir)
		if err != nil {
			return err
		}
		return in.cloud.Start(ctx, providers.CloudEnv{
			Dir: filepath.Join(in.dir, "cloud"), AdminDir: admin, LogDir: in.logDir(), Processes: &in.procs, Binaries: spec.Binaries,
			Kubeconfig: in.kubeconfig(), NodeNetworks: nets, HostAddress: host, NodesHost: gateway,
		})
	}); err != nil {
		return nil, err
	}
	if ns, ok := in.cloud.(providers.NameServer); ok && gateway != "" {
		addr, zone := ns.NameServer()
		if err := in.steps.Do("cluster DNS forwards "+zone, func() error { return in.forwardZone(ctx, zone, addr) }); err != nil {
			return nil, err
		}
	}
	if err := in.steps.Do("instances mirror the nodes", func() error { return in.adoptNodes(ctx) }); err != nil {
		return nil, err
	}
	if err := in.steps.Do("pod network on every node", func() error { return in.podNetwork(ctx) }); err != nil {
		return nil, err
	}
	var ccm cluster.Manager
	if err := in.steps.Do("CCM ready", func() (err error) {
		ccm, err = in.startCCM(ctx, bins[spec.Profile.CCM.Name])
		return cluster.Diagnosed(ctx, in.cloud, err)
	}); err != nil {
		return nil, err
	}
	if err := in.procs.Dead(); err != nil {
		return nil, err
	}
	in.saveState(in.procs.Records())
	return &cluster.Cluster{
		Name:              spec.Name,
		Kubeconfig:        in.kubeconfig(),
		KubernetesVersion: in.version,
		Profile:           spec.Profile,
		Cloud:             in.cloud,
		DataPlane:         true,
		IPv4OnlyNodes:     !spec.DualStack,
		DualStackServices: spec.DualStack,
		Nodes:             nodePool{in},
		Managers:          []cluster.Manager{ccm},
		Steps:             in.steps.Total(start),
		Health:            in.health,
		Refusals:          in.audit.Refusals,
		APIUses:           in.audit.APIUses,
	}, nil
}

// health reports a host process that died, a CCM pod that restarted, or a
// fabric that cannot program the nodes' routes.
func (in *instance) health() error {
	if err := in.procs.Dead(); err != nil {
		return err
	}
	for _, m := range in.pods {
		if err := m.health(); err != nil {
			return err
		}
	}
	if in.fabric != nil {
		return in.fabric.err()
	}
	return nil
}

func (in *instance) addNode(name string, n nodes.Node) {
	in.nodesMu.Lock()
	defer in.nodesMu.Unlock()
	in.nodes[name] = n
}

func (in *instance) removeNode(name string) {
	in.nodesMu.Lock()
	defer in.nodesMu.Unlock()
	delete(in.nodes, name)
}

// nodeList is a copy of the nodes, for the fabric.
func (in *instance) nodeList() map[string]nodes.Node {
	in.nodesMu.Lock()
	defer in.nodesMu.Unlock()
	out := make(map[string]nodes.Node, len(in.nodes))
	for k, v := range in.nodes {
		out[k] = v
	}
	return out
}

// adoptNodes records each node container in the cloud as an instance with
// the container's address and name, which is what the kubelet reported.
func (in *instance) adoptNodes(ctx context.Context) error {
	adopter := in.cloud.Instances().(providers.InstanceAdopter)
	for name, n := range in.nodes {
		addrs, err := in.containerAddresses(name, n)
		if err != nil {
			return err
		}
		if _, err := adopter.Adopt(ctx, name, addrs); err != nil {
			return fmt.Errorf("instance for node %s: %w", name, err)
		}
	}
	return nil
}

// podNetwork gives each node a bridge for its pods once
// kube-controller-manager has handed it a pod CIDR, and starts copying
// the cloud's routes into the nodes.
func (in *instance) podNetwork(ctx context.Context) error {
	var names []string
	for name := range in.nodes {
		names = append(names, name)
	}
	if err := nodewait.For(ctx, in.client, 2*time.Minute, "a pod CIDR of each family on every node", names, in.hasPodCIDRs); err != nil {
		return err
	}
	list, err := in.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, n := range list.Items {
		if node := in.nodes[n.Name]; node != nil {
			if err := in.podNetworkOn(node, n.Spec.PodCIDRs); err != nil {
				return err
			}
		}
	}
	if insp, ok := in.cloud.Inspector().(providers.RouteInspector); ok {
		in.fabric = newFabric(in.nodeList, insp, in.logf)
		go in.fabric.run()
	}
	return nil
}

// hasPodCIDRs says what node n lacks of a pod CIDR of each of the
// cluster's families.
func (in *instance) hasPodCIDRs(n *v1.Node) error {
	if want := len(in.clusterCIDRs()); len(n.Spec.PodCIDRs) < want {
		return fmt.Errorf("node %s has pod CIDRs %v, expected %d (one of each family of %v)", n.Name, n.Spec.PodCIDRs, want, in.clusterCIDRs())
	}
	return nil
}

// podNetworkOn gives node n its pods' network: the bridge for podCIDRs,
// and a way out of the cluster. Pods' addresses are not masqueraded
// within the cluster (see bridgeConfig), but this machine has no route
// to them: a pod's packet to it (the cloud's DNS, which the cluster's
// CoreDNS forwards to) or past it (a load balancer's address, which
// this machine holds) leaves with the node's address, as a cloud's NAT
// or Kubernetes' ip-masq-agent makes it, so that the answer comes back.
func (in *instance) podNetworkOn(n nodes.Node, podCIDRs []string) error {
	if err := writeBridge(n, podCIDRs); err != nil {
		return err
	}
	if in.host == "" || !in.nodeNet.IsValid() {
		return nil
	}
	script := egressRules("iptables", in.host, clusterCIDR, in.nodeNet)
	if in.host6 != "" && in.nodeNet6.IsValid() {
		script += egressRules("ip6tables", in.host6, clusterCIDR6, in.nodeNet6)
	}
	if err := n.Command("sh", "-c", script).Run(); err != nil {
		return fmt.Errorf("node %s: masquerading its pods' packets that leave the cluster: %w", n, err)
	}
	return nil
}

// egressChain holds a node's masquerading rules for its pods' packets.
const egressChain = "CCM-HARNESS-EGRESS"

// egressRules is a script for one family's iptables (iptables or
// ip6tables) that masquerades the pods' packets to this machine (host)
// and beyond the nodes' network (nodeNet), and leaves those to other pods
// (pods) and to the nodes as they are, as ip-masq-agent's rules do; once
// per node, as a node may be set up again.
func egressRules(iptables, host, pods string, nodeNet netip.Prefix) string {
	nat := iptables + " -t nat "
	return "set -e\nif " + nat + "-N " + egressChain + " 2>/dev/null; then\n" +
		nat + "-A " + egressChain + " -d " + hostPrefix(host) + " -j MASQUERADE\n" +
		nat + "-A " + egressChain + " -d " + pods + " -j RETURN\n" +
		nat + "-A " + egressChain + " -d " + nodeNet.String() + " -j RETURN\n" +
		nat + "-A " + egressChain + " -j MASQUERADE\n" +
		nat + "-A POSTROUTING -s " + pods + " -j " + egressChain + "\nfi\n"
}

// hostPrefix is the prefix of the one address host: /32 or /128.
func hostPrefix(host string) string {
	if a, err := netip.ParseAddr(host); err == nil && a.Is6() {
		return host + "/128"
	}
	return host + "/32"
}

// writeBridge gives node n its CNI config for podCIDRs.
func writeBridge(n nodes.Node, podCIDRs []string) error {
	conf, err := bridgeConfig(podCIDRs)
	if err != nil {
		return err
	}
	if err := n.Command("sh", "-c", "cat > /etc/cni/net.d/10-ccm-harness.conflist").SetStdin(strings.NewReader(conf)).Run(); err != nil {
		return fmt.Errorf("node %s: writing its CNI config: %w", n, err)
	}
	return nil
}

// bridgeConfig is a node's CNI config: a bridge with its pod CIDRs (an
// address of each family for each pod, in a dual-stack cluster) and the
// node as the pods' gateway, no masquerading (a pod's address is seen as
// it is, anywhere in the cluster), and host ports.
func bridgeConfig(podCIDRs []string) (string, error) {
	if len(podCIDRs) == 0 {
		return "", fmt.Errorf("no pod CIDR")
	}
	var ranges [][]map[string]string
	var routes []map[string]string
	for _, c := range podCIDRs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return "", fmt.Errorf("pod CIDR %q: %w", c, err)
		}
		ranges = append(ranges, []map[string]string{{"subnet": c}})
		dst := "0.0.0.0/0"
		if p.Addr().Is6() {
			dst = "::/0"
		}
		routes = append(routes, map[string]string{"dst": dst})
	}
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "ccm-harness",
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
				"ipam": map[string]any{
					"type":   "host-local",
					"ranges": ranges,
					"routes": routes,
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	return string(b), err
}

// startCCM runs a CCM binary on the host against the cluster's API, with
// the admin kubeconfig kind wrote, or a CCM image as a pod (startPod).
func (in *instance) startCCM(ctx context.Context, bin string) (cluster.Manager, error) {
	cfgPath := in.spec.Profile.CCMConfigFile
	if cfgPath == "" {
		cfg, err := in.cloud.CCMConfig()
		if err != nil {
			return nil, err
		}
		cfgPath = filepath.Join(in.dir, "cloud-config")
		if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
			return nil, err
		}
	}
	port, err := process.FreePort()
	if err != nil {
		return nil, err
	}
	spec := cluster.ManagerSpec{Name: cluster.CloudControllerManager, Kind: cluster.CloudControllerManager, Binary: in.spec.Profile.CCM, CloudProvider: in.spec.Profile.CloudProvider}
	args := append(cluster.CCMFlags(in.spec.Profile, cfgPath, in.spec.Name, strings.Join(in.clusterCIDRs(), ",")),
		"--kubeconfig="+in.kubeconfig(),
		"--authentication-kubeconfig="+in.kubeconfig(),
		"--authorization-kubeconfig="+in.kubeconfig(),
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		// A self-signed serving certificate: only the harness's health
		// probe, on loopback, connects.
		"--cert-dir="+filepath.Join(in.dir, "ccm-certs"),
		// Leased (up's clusters): a suite judging the cluster as an
		// existing one finds the CCM by its lease, as a deployed one.
		"--leader-elect="+strconv.FormatBool(in.spec.Leased),
		"--node-monitor-period=1s",
		"--v=2",
	)
	args = append(args, in.spec.Profile.CCMArgs...)
	var env []string
	if e, ok := in.cloud.(providers.CCMEnvironment); ok {
		env = e.CCMEnv()
	}
	if img := in.spec.Binaries.Image(spec.Binary); img != nil {
		return in.startPod(ctx, spec, img, args, env)
	}
	m := &cluster.ProcessManager{ManagerSpec: spec, Group: &in.procs, Endpoint: cluster.Endpoint{URL: "https://127.0.0.1:" + strconv.Itoa(port), Client: loopbackClient()}}
	m.Proc, err = in.procs.Start(ctx, process.Spec{
		Name:         spec.Name,
		Path:         bin,
		Args:         args,
		Env:          env,
		LogDir:       in.logDir(),
		Ready:        m.Healthz,
		Unprivileged: true, // out of reach of the cloud's admin credentials
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// loopbackClient talks to the CCM's self-signed endpoint on loopback.
func loopbackClient() *http.Client {
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // our own process, on loopback, self-signed
			DialContext:     (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		},
	}
}

func (in *instance) teardown() {
	if in.fabric != nil {
		in.fabric.stop()
	}
	in.procs.StopAll(10 * time.Second)
	for _, m := range in.pods {
		m.stopLogs()
	}
	if in.created {
		p := provider()
		if in.spec.ArtifactsDir != "" {
			// What the nodes logged (kubelet, containerd, the pods) is
			// the first place to look when a spec failed.
			if err := p.CollectLogs(in.spec.Name, filepath.Join(in.logDir(), "kind")); err != nil {
				in.logf("collecting the kind nodes' logs: %v", err)
			}
		}
		if err := p.Delete(in.spec.Name, in.kubeconfig()); err != nil {
			in.logf("kind delete cluster %s: %v", in.spec.Name, err)
		}
	}
	if err := in.state(nil).RedactLogs(); err != nil {
		in.logf("%v", err)
	}
	_ = cluster.RemoveStateDir(in.dir)
	// The runtime's folder goes with its last cluster.
	_ = os.Remove(filepath.Dir(in.dir))
}

func (in *instance) saveState(records []process.Record) {
	in.stateMu.Lock()
	defer in.stateMu.Unlock()
	_ = in.state(records).Write(in.dir)
}

func (in *instance) state(records []process.Record) cluster.State {
	st := cluster.State{Name: in.spec.Name, Kubeconfig: in.kubeconfig(), Processes: records, LogDir: in.logDir()}
	if in.cloud != nil {
		st.Secrets = cluster.SecretsOf(in.cloud)
	}
	return st
}

// dockerNetworks are the subnets of the Docker network the nodes are on,
// and this machine's IPv4 address on it (its gateway).
func dockerNetworks(ctx context.Context, network string) (nets []netip.Prefix, gateway, gateway6 string, err error) {
	out, err := exec.CommandContext(ctx, "docker", "network", "inspect", "--format", "{{range .IPAM.Config}}{{.Subnet}}|{{.Gateway}} {{end}}", network).Output()
	if err != nil {
		return nil, "", "", fmt.Errorf("docker network inspect %s: %w", network, err)
	}
	for _, f := range strings.Fields(string(out)) {
		subnet, gw, _ := strings.Cut(f, "|")
		p, err := netip.ParsePrefix(subnet)
		if err != nil {
			return nil, "", "", fmt.Errorf("docker network %s has subnet %q: %w", network, subnet, err)
		}
		nets = append(nets, p.Masked())
		if a, err := netip.ParseAddr(gw); err == nil && a.Is4() && gateway == "" {
			gateway = a.String()
		} else if err == nil && a.Is6() && gateway6 == "" {
			gateway6 = a.String()
		}
	}
	if len(nets) == 0 {
		return nil, "", "", fmt.Errorf("docker network %s has no subnet", network)
	}
	return nets, gateway, gateway6, nil
}
