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
	"net/netip"
	"strings"
	"testing"
)

// kubeadm v1.37's Corefile, as its ConfigMap holds it.
const kubeadmCorefile = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
`

func TestWithZone(t *testing.T) {
	got := withZone(kubeadmCorefile, "amazonaws.com", "172.18.0.1:40053")
	want := kubeadmCorefile + "amazonaws.com:53 {\n    errors\n    forward . 172.18.0.1:40053\n}\n"
	if got != want {
		t.Fatalf("expected the cluster's Corefile with a block forwarding the zone:\n%s\nactual:\n%s", want, got)
	}
}

// TestEgressRules: the pods' packets to this machine are masqueraded
// before those to the nodes' network are let through, the chain is made
// once, and a failing command fails the script; the same of IPv6 in a
// dual-stack cluster.
func TestEgressRules(t *testing.T) {
	got := egressRules("iptables", "172.18.0.1", "10.244.0.0/16", netip.MustParsePrefix("172.18.0.0/16"))
	want := `set -e
if iptables -t nat -N CCM-HARNESS-EGRESS 2>/dev/null; then
iptables -t nat -A CCM-HARNESS-EGRESS -d 172.18.0.1/32 -j MASQUERADE
iptables -t nat -A CCM-HARNESS-EGRESS -d 10.244.0.0/16 -j RETURN
iptables -t nat -A CCM-HARNESS-EGRESS -d 172.18.0.0/16 -j RETURN
iptables -t nat -A CCM-HARNESS-EGRESS -j MASQUERADE
iptables -t nat -A POSTROUTING -s 10.244.0.0/16 -j CCM-HARNESS-EGRESS
fi
`
	if got != want {
		t.Errorf("expected the rules:\n%s\nactual:\n%s", want, got)
	}
	got = egressRules("ip6tables", "fc00:f853:ccd:e793::1", "fd00:10:244::/56", netip.MustParsePrefix("fc00:f853:ccd:e793::/64"))
	if !strings.Contains(got, "ip6tables -t nat -A CCM-HARNESS-EGRESS -d fc00:f853:ccd:e793::1/128 -j MASQUERADE\n") ||
		!strings.Contains(got, "ip6tables -t nat -A POSTROUTING -s fd00:10:244::/56 -j CCM-HARNESS-EGRESS\n") {
		t.Errorf("the IPv6 rules:\n%s\nwant the host's /128 masqueraded and the IPv6 pods' chain", got)
	}
}
