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

// Command incluster-ccm is a test CCM of the shape many shipped CCMs have
// and the harness's own does not: it works only inside a cluster, with
// the clients rest.InClusterConfig builds from the pod's ServiceAccount;
// it reads its settings from a ConfigMap when it starts; and it claims
// load balancers alone, with no cloud behind it, as the address-pool CCMs
// of bare-metal clusters do. Each LoadBalancer Service gets the next
// address of the pool the ConfigMap names.
//
// The harness has no Go code for it: profile.yaml beside this file, with
// `cloud: none` and the manifests in manifests/, is all it takes
// (make e2e-incluster).
package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/app"
	"k8s.io/cloud-provider/app/config"
	"k8s.io/cloud-provider/names"
	"k8s.io/cloud-provider/options"
	"k8s.io/component-base/cli"
	cliflag "k8s.io/component-base/cli/flag"
)

// ProviderName is its --cloud-provider.
const ProviderName = "incluster-lb"

// The ConfigMap it reads at start, in its own namespace: the key that
// holds the address pool (a CIDR), and the one that, set to "annotate",
// makes it leave status.loadBalancer to another component and write the
// address into spec.loadBalancerIP and AddressAnnotation, as kube-vip's
// CCM does (a negative control of the harness's).
//
// The key classesKey, set to "any", makes it serve Services of any
// loadBalancerClass too, as a CCM that ignores the field would (another
// negative control): k8s.io/cloud-provider's service controller leaves
// them alone, so a loop of its own gives them addresses.
const (
	configMapName     = "incluster-ccm-config"
	poolKey           = "pool"
	statusKey         = "status"
	classesKey        = "classes"
	AddressAnnotation = "incluster-ccm.ccm-harness.sigs.k8s.io/address"
)

func main() {
	opts, err := options.NewCloudControllerManagerOptions()
	if err != nil {
		fail(fmt.Errorf("cannot initialize options: %w", err))
	}
	cmd := app.NewCloudControllerManagerCommand(opts, cloudInitializer, app.DefaultInitFuncConstructors,
		names.CCMControllerAliases(), cliflag.NamedFlagSets{}, wait.NeverStop)
	os.Exit(cli.Run(cmd))
}

func cloudInitializer(c *config.CompletedConfig) cloudprovider.Interface {
	if name := c.ComponentConfig.KubeCloudShared.CloudProvider.Name; name != ProviderName {
		fail(fmt.Errorf("--cloud-provider=%q is not supported: this CCM only serves --cloud-provider=%s", name, ProviderName))
	}
	// Its own client, from the pod's ServiceAccount alone: outside a
	// cluster this fails, whatever --kubeconfig says.
	rc, err := rest.InClusterConfig()
	if err != nil {
		fail(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		fail(err)
	}
	ns, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err != nil {
		fail(err)
	}
	cm, err := cs.CoreV1().ConfigMaps(string(ns)).Get(context.Background(), configMapName, metav1.GetOptions{})
	if err != nil {
		fail(fmt.Errorf("reading its settings: %w", err))
	}
	pool, err := netip.ParsePrefix(cm.Data[poolKey])
	if err != nil {
		fail(fmt.Errorf("ConfigMap %s/%s: %s: %w", ns, configMapName, poolKey, err))
	}
	lb := &pools{pool: pool.Masked(), assigned: map[types.UID]netip.Addr{}}
	switch mode := cm.Data[statusKey]; mode {
	case "":
	case "annotate":
		lb.annotate = cs
	default:
		fail(fmt.Errorf("ConfigMap %s/%s: %s: %q is not annotate", ns, configMapName, statusKey, mode))
	}
	switch classes := cm.Data[classesKey]; classes {
	case "":
	case "any":
		go lb.serveClasses(cs)
	default:
		fail(fmt.Errorf("ConfigMap %s/%s: %s: %q is not any", ns, configMapName, classesKey, classes))
	}
	return &cloud{lb: lb}
}

// serveClasses gives every LoadBalancer Service with a loadBalancerClass
// an address of the pool, every second: what a CCM that ignores the
// class does.
func (p *pools) serveClasses(cs kubernetes.Interface) {
	ctx := context.Background()
	for range time.Tick(time.Second) {
		services, err := cs.CoreV1().Services("").List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, s := range services.Items {
			if s.Spec.Type != v1.ServiceTypeLoadBalancer || s.Spec.LoadBalancerClass == nil || len(s.Status.LoadBalancer.Ingress) > 0 {
				continue
			}
			a, err := p.assign(&s)
			if err != nil {
				continue
			}
			s.Status.LoadBalancer = *status(a)
			_, _ = cs.CoreV1().Services(s.Namespace).UpdateStatus(ctx, &s, metav1.UpdateOptions{})
		}
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "incluster-ccm: %v\n", err)
	os.Exit(1)
}

// cloud serves load balancers and nothing else.
type cloud struct{ lb *pools }

var _ cloudprovider.Interface = (*cloud)(nil)

func (c *cloud) Initialize(cloudprovider.ControllerClientBuilder, <-chan struct{}) {}
func (c *cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool)                  { return c.lb, true }
func (c *cloud) Instances() (cloudprovider.Instances, bool)                        { return nil, false }
func (c *cloud) InstancesV2() (cloudprovider.InstancesV2, bool)                    { return nil, false }
func (c *cloud) Zones() (cloudprovider.Zones, bool)                                { return nil, false }
func (c *cloud) Clusters() (cloudprovider.Clusters, bool)                          { return nil, false }
func (c *cloud) Routes() (cloudprovider.Routes, bool)                              { return nil, false }
func (c *cloud) ProviderName() string                                              { return ProviderName }
func (c *cloud) HasClusterID() bool                                                { return true }

// pools hands out the pool's addresses, one per Service, the first free
// one first.
type pools struct {
	mu       sync.Mutex
	pool     netip.Prefix
	assigned map[types.UID]netip.Addr
	// annotate, if set, writes the address into the Service instead of
	// returning it as the status.
	annotate kubernetes.Interface
}

var _ cloudprovider.LoadBalancer = (*pools)(nil)

func status(a netip.Addr) *v1.LoadBalancerStatus {
	return &v1.LoadBalancerStatus{Ingress: []v1.LoadBalancerIngress{{IP: a.String()}}}
}

func (p *pools) GetLoadBalancer(_ context.Context, _ string, s *v1.Service) (*v1.LoadBalancerStatus, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, ok := p.assigned[s.UID]
	if !ok {
		return nil, false, nil
	}
	return status(a), true, nil
}

func (p *pools) GetLoadBalancerName(_ context.Context, clusterName string, s *v1.Service) string {
	return cloudprovider.DefaultLoadBalancerName(s)
}

func (p *pools) EnsureLoadBalancer(ctx context.Context, _ string, s *v1.Service, _ []*v1.Node) (*v1.LoadBalancerStatus, error) {
	a, err := p.assign(s)
	if err != nil {
		return nil, err
	}
	if p.annotate == nil {
		return status(a), nil
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}},"spec":{"loadBalancerIP":%q}}`, AddressAnnotation, a, a)
	if _, err := p.annotate.CoreV1().Services(s.Namespace).Patch(ctx, s.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return nil, err
	}
	return &v1.LoadBalancerStatus{}, nil
}

func (p *pools) assign(s *v1.Service) (netip.Addr, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.assigned[s.UID]; ok {
		return a, nil
	}
	// The address the Service shows already is kept: the state of this
	// CCM is its Services', and survives a restart with them.
	for _, in := range s.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(in.IP); err == nil && p.pool.Contains(a) && !p.inUse(a) {
			p.assigned[s.UID] = a
			return a, nil
		}
	}
	for a := p.pool.Addr().Next(); p.pool.Contains(a); a = a.Next() {
		if !p.inUse(a) {
			p.assigned[s.UID] = a
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("address pool %s is exhausted", p.pool)
}

func (p *pools) inUse(a netip.Addr) bool {
	for _, b := range p.assigned {
		if a == b {
			return true
		}
	}
	return false
}

func (p *pools) UpdateLoadBalancer(context.Context, string, *v1.Service, []*v1.Node) error {
	return nil
}

func (p *pools) EnsureLoadBalancerDeleted(_ context.Context, _ string, s *v1.Service) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.assigned, s.UID)
	return nil
}
