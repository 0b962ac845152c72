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

package deployer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kubetest2/pkg/artifacts"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/providers"
)

// DumpClusterLogs leaves the cluster's state beside the component logs
// the runtime writes as it goes ($ARTIFACTS/logs/<cluster>/*.log, and the
// fake cloud's audit log): the Nodes, Services and Events as the API
// serves them, what the cloud says about each node's instance and its
// load balancers and routes, and for the fake provider its cloud's own
// state file. Kubetest2 does not call it; Down does, and PostTest when no
// Down follows.
func (d *Deployer) DumpClusterLogs() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dump(context.Background())
}

// logDir is where the runtime writes the cluster's component logs.
func (d *Deployer) logDir() string { return cluster.LogDir(artifacts.BaseDir(), d.name()) }

func (d *Deployer) dump(ctx context.Context) error {
	dir := d.logDir()
	kubeconfig, err := d.kubeconfig()
	if err != nil {
		return fmt.Errorf("%w; the component logs are in %s", err, dir)
	}
	cs, err := clientFor(kubeconfig)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var errs []error
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	errs = append(errs, err)
	if err == nil {
		errs = append(errs, writeJSON(filepath.Join(dir, "nodes.json"), nodes))
	}
	services, err := cs.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	errs = append(errs, err)
	if err == nil {
		errs = append(errs, writeJSON(filepath.Join(dir, "services.json"), services))
	}
	events, err := cs.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	errs = append(errs, err)
	if err == nil {
		errs = append(errs, writeJSON(filepath.Join(dir, "events.json"), events))
	}
	if d.cluster != nil && d.cluster.Cloud != nil && nodes != nil {
		var names []string
		for _, n := range nodes.Items {
			names = append(names, n.Name)
		}
		errs = append(errs, writeJSON(filepath.Join(dir, "cloud.json"), cloudState(ctx, d.cluster.Cloud.Inspector(), names)))
	}
	// fakecloud (the fake provider's cloud, also under a profile file)
	// keeps its whole state (instances, load balancers, routes, faults) in
	// one file in the cluster's state folder; it holds no credentials.
	// Other clouds have no such file.
	src := filepath.Join(d.stateDir(), "cloud", "state.json")
	if data, err := os.ReadFile(src); err == nil {
		errs = append(errs, os.WriteFile(filepath.Join(dir, "fakecloud-state.json"), data, 0o644))
	} else if !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	klog.Infof("cluster %s: state dumped to %s", d.name(), dir)
	return nil
}

// cloud is what the cloud, not Kubernetes, says: each node's instance
// and the cloud's load balancers and routes, or why it could not say.
type cloud struct {
	Instances     map[string]any           `json:"instances,omitempty"`
	LoadBalancers []providers.LoadBalancer `json:"loadBalancers,omitempty"`
	Routes        []providers.Route        `json:"routes,omitempty"`
	Errors        []string                 `json:"errors,omitempty"`
}

func cloudState(ctx context.Context, insp providers.Inspector, nodes []string) cloud {
	var out cloud
	if insp == nil {
		out.Errors = append(out.Errors, "the provider has no cloud inspector")
		return out
	}
	sort.Strings(nodes)
	out.Instances = map[string]any{}
	for _, n := range nodes {
		inst, err := insp.Instance(ctx, n)
		if err != nil {
			out.Instances[n] = map[string]string{"error": err.Error()}
			continue
		}
		out.Instances[n] = inst
	}
	if lbi, ok := insp.(providers.LoadBalancerInspector); ok {
		lbs, err := lbi.LoadBalancers(ctx)
		if err != nil {
			out.Errors = append(out.Errors, "load balancers: "+err.Error())
		}
		out.LoadBalancers = lbs
	}
	if ri, ok := insp.(providers.RouteInspector); ok {
		routes, err := ri.Routes(ctx)
		if err != nil {
			out.Errors = append(out.Errors, "routes: "+err.Error())
		}
		out.Routes = routes
	}
	return out
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
