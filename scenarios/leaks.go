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
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"sigs.k8s.io/ccm-harness/providers"
)

// Leaks names the cloud's load balancers and routes that no live Service or
// Node owns. Clouds whose inspector cannot list them report none.
func Leaks(ctx context.Context, cs kubernetes.Interface, insp providers.Inspector) ([]string, error) {
	var leaks []string
	if lbi, ok := insp.(providers.LoadBalancerInspector); ok {
		lbs, err := lbi.LoadBalancers(ctx)
		if err != nil {
			return nil, fmt.Errorf("list the cloud's load balancers: %w", err)
		}
		svcs, err := cs.CoreV1().Services("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		live := map[string]*v1.Service{}
		for i := range svcs.Items {
			s := &svcs.Items[i]
			live[s.Namespace+"/"+s.Name] = s
		}
		for _, lb := range lbs {
			s := live[lb.Service]
			switch {
			case s == nil:
				leaks = append(leaks, fmt.Sprintf("load balancer %s (%s) of Service %s, which no longer exists", lb.Name, lb.IP, lb.Service))
			case lb.ServiceUID != "" && lb.ServiceUID != string(s.UID):
				leaks = append(leaks, fmt.Sprintf("load balancer %s (%s) of an earlier Service %s (UID %s)", lb.Name, lb.IP, lb.Service, lb.ServiceUID))
			case s.Spec.Type != v1.ServiceTypeLoadBalancer:
				leaks = append(leaks, fmt.Sprintf("load balancer %s (%s) of Service %s, which is now of type %s", lb.Name, lb.IP, lb.Service, s.Spec.Type))
			}
		}
	}
	if ri, ok := insp.(providers.RouteInspector); ok {
		routes, err := ri.Routes(ctx)
		if err != nil {
			return nil, fmt.Errorf("list the cloud's routes: %w", err)
		}
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		cidrs := map[string][]string{}
		for _, n := range nodes.Items {
			cidrs[n.Name] = n.Spec.PodCIDRs
		}
		for _, r := range routes {
			owned, ok := cidrs[r.TargetNode]
			switch {
			case !ok:
				leaks = append(leaks, fmt.Sprintf("route %s (%s via %s) to node %s, which no longer exists", r.Name, r.DestinationCIDR, r.TargetNode, r.TargetNode))
			case !contains(owned, r.DestinationCIDR):
				leaks = append(leaks, fmt.Sprintf("route %s (%s via %s), not the node's pod CIDRs %v", r.Name, r.DestinationCIDR, r.TargetNode, owned))
			}
		}
	}
	return leaks, nil
}

// CheckNoLeaks waits for the CCM to clean up after deleted Services and
// Nodes, and fails naming what it left in the cloud.
func CheckNoLeaks(ctx context.Context, cs kubernetes.Interface, insp providers.Inspector, timeout time.Duration) error {
	if insp == nil {
		return nil
	}
	return WaitForCloud(ctx, timeout, "the CCM to remove cloud resources nothing owns", func(ctx context.Context) error {
		leaks, err := Leaks(ctx, cs, insp)
		if err != nil {
			return err
		}
		if len(leaks) > 0 {
			return fmt.Errorf("leaked: %s", strings.Join(leaks, "; "))
		}
		return nil
	})
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
