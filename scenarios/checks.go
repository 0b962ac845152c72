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

package scenarios

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"sigs.k8s.io/ccm-harness/internal/nodewait"
	"sigs.k8s.io/ccm-harness/providers"
)

// ShutdownTaint is what the cloud node lifecycle controller puts on the
// NotReady node of a stopped instance.
const ShutdownTaint = cloudproviderapi.TaintNodeShutdown

// ProviderIDFromCloud passes when spec.providerID has the profile's scheme
// and, where the cloud was asked, equals the cloud's.
func ProviderIDFromCloud(scheme string, cloud map[string]providers.Instance) nodewait.Check {
	return func(n *v1.Node) error {
		if err := nodewait.Initialized(n); err != nil {
			return err
		}
		got := n.Spec.ProviderID
		if !strings.HasPrefix(got, scheme+"://") {
			return fmt.Errorf("node %s: expected spec.providerID with scheme %s://, actual %q", n.Name, scheme, got)
		}
		if inst, ok := cloud[n.Name]; ok && got != inst.ProviderID {
			return fmt.Errorf("node %s: expected spec.providerID %q (the cloud's instance), actual %q", n.Name, inst.ProviderID, got)
		}
		return nil
	}
}

// LabelsFromCloud passes when each label equals the value pick takes from
// the node's cloud instance. what names the value in messages.
func LabelsFromCloud(cloud map[string]providers.Instance, what string, pick func(providers.Instance) string, labels ...string) nodewait.Check {
	return func(n *v1.Node) error {
		if err := nodewait.Initialized(n); err != nil {
			return err
		}
		inst, ok := cloud[n.Name]
		if !ok {
			return fmt.Errorf("node %s: the cloud has no instance for it", n.Name)
		}
		want := pick(inst)
		for _, l := range labels {
			got, set := n.Labels[l]
			if !set {
				return fmt.Errorf("node %s: expected label %s=%q (the cloud's %s), actual: label not set", n.Name, l, want, what)
			}
			if got != want {
				return fmt.Errorf("node %s: expected label %s=%q (the cloud's %s), actual %q", n.Name, l, want, what, got)
			}
		}
		return nil
	}
}

// AddressesFromCloud passes when the node's addresses are the cloud's,
// plus the kubelet's Hostname where the cloud reports none (the cloud node
// controller keeps it then), and there is a Hostname.
func AddressesFromCloud(cloud map[string]providers.Instance) nodewait.Check {
	return func(n *v1.Node) error {
		if err := nodewait.Initialized(n); err != nil {
			return err
		}
		inst, ok := cloud[n.Name]
		if !ok {
			return fmt.Errorf("node %s: the cloud has no instance for it", n.Name)
		}
		want := append([]v1.NodeAddress(nil), inst.Addresses...)
		if !hasType(want, v1.NodeHostName) {
			want = append(want, v1.NodeAddress{Type: v1.NodeHostName, Address: n.Name})
		}
		if got := n.Status.Addresses; !sameAddresses(got, want) {
			return fmt.Errorf("node %s: expected addresses %s (the cloud's), actual %s", n.Name, formatAddresses(want), formatAddresses(got))
		}
		return nil
	}
}

// ProvidedNodeIPHonoured passes when the node's addresses are what
// k8s.io/cloud-provider's GetNodeAddressesFromNodeIP makes of the cloud's
// for provided, the kubelet's --node-ip (one IP, or an IPv4 and an IPv6
// one, comma-separated): every cloud address equal to a provided IP is
// kept, with its type, in the order of provided, and replaces the others
// of that type; addresses of other types are kept. (A guest address that
// is both the InternalIP and the ExternalIP so wins both types.)
func ProvidedNodeIPHonoured(provided string, inst providers.Instance) nodewait.Check {
	return func(n *v1.Node) error {
		if err := nodewait.Initialized(n); err != nil {
			return fmt.Errorf("%w (its kubelet gave --node-ip %s)", err, provided)
		}
		var want []v1.NodeAddress
		enforced := map[v1.NodeAddressType]bool{}
		for _, ip := range strings.Split(provided, ",") {
			for _, a := range inst.Addresses {
				if sameIP(a.Address, ip) {
					want = append(want, a)
					enforced[a.Type] = true
				}
			}
		}
		for _, a := range inst.Addresses {
			if !enforced[a.Type] {
				want = append(want, a)
			}
		}
		if !hasType(want, v1.NodeHostName) {
			want = append(want, v1.NodeAddress{Type: v1.NodeHostName, Address: n.Name})
		}
		if got := n.Status.Addresses; !sameAddresses(got, want) {
			return fmt.Errorf("node %s: with provided-node-ip %s, expected addresses %s, actual %s", n.Name, provided, formatAddresses(want), formatAddresses(got))
		}
		return nil
	}
}

// sameIP is whether a and b are one IP address (as GetNodeAddressesFromNodeIP
// compares them: an IPv6 address has more than one spelling).
func sameIP(a, b string) bool {
	x, errX := netip.ParseAddr(a)
	y, errY := netip.ParseAddr(b)
	if errX != nil || errY != nil {
		return a == b
	}
	return x.Unmap() == y.Unmap()
}

// Tainted passes when the node has (want) or lacks (!want) the taint.
func Tainted(key string, want bool) nodewait.Check {
	return func(n *v1.Node) error {
		if got := hasTaint(n, key); got != want {
			return fmt.Errorf("node %s: expected taint %s %s, actual taints: %s", n.Name, key, map[bool]string{true: "present", false: "absent"}[want], nodewait.TaintKeys(n))
		}
		return nil
	}
}

// ReadyIs passes when the node's Ready condition is true (want) or not.
func ReadyIs(want bool) nodewait.Check {
	return func(n *v1.Node) error {
		if got := nodewait.ReadyStatus(n) == v1.ConditionTrue; got != want {
			return fmt.Errorf("node %s: expected Ready=%t, actual Ready=%s", n.Name, want, nodewait.ReadyStatus(n))
		}
		return nil
	}
}

// All passes when every check passes, reporting the first that does not.
func All(checks ...nodewait.Check) nodewait.Check {
	return func(n *v1.Node) error {
		for _, c := range checks {
			if err := c(n); err != nil {
				return err
			}
		}
		return nil
	}
}

func hasTaint(n *v1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func hasType(addrs []v1.NodeAddress, t v1.NodeAddressType) bool {
	for _, a := range addrs {
		if a.Type == t {
			return true
		}
	}
	return false
}

func sameAddresses(a, b []v1.NodeAddress) bool {
	return formatAddresses(a) == formatAddresses(b)
}

// formatAddresses sorts, so order does not matter in comparisons: the CCM
// may reorder (it puts a provided node IP first).
func formatAddresses(addrs []v1.NodeAddress) string {
	s := make([]string, 0, len(addrs))
	for _, a := range addrs {
		s = append(s, string(a.Type)+"="+a.Address)
	}
	sort.Strings(s)
	return "[" + strings.Join(s, " ") + "]"
}
