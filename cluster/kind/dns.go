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
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The ConfigMap kubeadm deploys CoreDNS's Corefile in, and its key.
const (
	coreDNSConfigMap = "coredns"
	corefileKey      = "Corefile"
)

// forwardZone has the cluster's DNS forward zone to the cloud's DNS server
// at addr (host:port), as a cloud's resolver answers its load balancers'
// names to the machines in it: a pod that has only a Service's ingress
// hostname reaches the load balancer. It runs before the nodes are
// initialized, so CoreDNS starts with it; kubeadm's Corefile reloads a
// change anyway.
func (in *instance) forwardZone(ctx context.Context, zone, addr string) error {
	cms := in.client.CoreV1().ConfigMaps(metav1.NamespaceSystem)
	cm, err := cms.Get(ctx, coreDNSConfigMap, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("the cluster's DNS (kubeadm's ConfigMap %s/%s): %w", metav1.NamespaceSystem, coreDNSConfigMap, err)
	}
	corefile, ok := cm.Data[corefileKey]
	if !ok {
		return fmt.Errorf("the cluster's DNS: ConfigMap %s/%s has no %s", metav1.NamespaceSystem, coreDNSConfigMap, corefileKey)
	}
	cm.Data[corefileKey] = withZone(corefile, zone, addr)
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

// withZone is corefile with a server block of its own for zone, which
// forwards every query in it to addr.
func withZone(corefile, zone, addr string) string {
	return strings.TrimRight(corefile, "\n") + "\n" + zone + ":53 {\n    errors\n    forward . " + addr + "\n}\n"
}
