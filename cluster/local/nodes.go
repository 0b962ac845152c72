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

package local

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
	"sigs.k8s.io/ccm-harness/providers"
)

// nodePool registers simulated nodes and powers their instances.
type nodePool struct {
	client kubernetes.Interface
	cloud  providers.InstanceControl
}

var _ cluster.NodePool = (*nodePool)(nil)

// Add creates the instance, then the Node as kubelet v1.36 registers it with
// --cloud-provider=external: the uninitialized taint, and only a Hostname
// address unless --node-ip was given (then that InternalIP too, and the
// provided-node-ip annotation the CCM must honour).
func (p *nodePool) Add(ctx context.Context, name string, opts ...cluster.NodeOption) (*v1.Node, error) {
	var o cluster.NodeOptions
	for _, opt := range opts {
		opt(&o)
	}
	inst, err := p.cloud.Create(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("node %s: create its instance: %w", name, err)
	}
	node := kubeletNode(name)
	maps.Copy(node.Labels, o.Labels)
	node.Annotations = map[string]string{}
	node.Spec.Taints = []v1.Taint{{
		Key:    cloudproviderapi.TaintExternalCloudProvider,
		Value:  "true",
		Effect: v1.TaintEffectNoSchedule,
	}}
	// A kubelet sends its status with the registration itself, so the CCM
	// never sees the node without addresses, or without the machine's
	// SMBIOS UUID (the vSphere CCM finds VMs by it).
	node.Status.NodeInfo.SystemUUID = inst.SystemUUID
	if o.ProvidedNodeIP != nil {
		// One IP, or a dual-stack pair: the kubelet reports each as an
		// InternalIP, in order.
		provided := o.ProvidedNodeIP(inst.Addresses)
		node.Annotations[cloudproviderapi.AnnotationAlphaProvidedIPAddr] = provided
		var own []v1.NodeAddress
		for _, ip := range strings.Split(provided, ",") {
			own = append(own, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip})
		}
		node.Status.Addresses = append(own, node.Status.Addresses...)
	}
	if o.InTreeCloud {
		node.Spec.Taints = nil
		node.Spec.ProviderID = inst.ProviderID
		node.Status.Addresses = append([]v1.NodeAddress(nil), inst.Addresses...)
		if !slices.ContainsFunc(inst.Addresses, func(a v1.NodeAddress) bool { return a.Type == v1.NodeHostName }) {
			node.Status.Addresses = append(node.Status.Addresses, v1.NodeAddress{Type: v1.NodeHostName, Address: name})
		}
		for k, v := range map[string]string{
			v1.LabelInstanceTypeStable: inst.InstanceType,
			v1.LabelTopologyZone:       inst.Zone,
			v1.LabelTopologyRegion:     inst.Region,
		} {
			if v != "" {
				node.Labels[k] = v
			}
		}
	}
	created, err := p.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("node %s: register: %w", name, err)
	}
	return created, nil
}

// registerWithoutCloud registers the i-th node as a kubelet run with no
// cloud provider does, for a CCM that claims no instances: no taint for a
// CCM to remove, and the InternalIP the kubelet found on its machine (a
// TEST-NET-1 address: only ever data).
func registerWithoutCloud(ctx context.Context, client kubernetes.Interface, name string, i int) error {
	node := kubeletNode(name)
	node.Status.Addresses = append([]v1.NodeAddress{{Type: v1.NodeInternalIP, Address: fmt.Sprintf("192.0.2.%d", i)}}, node.Status.Addresses...)
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("node %s: register: %w", name, err)
	}
	return nil
}

// kubeletNode is the Node a kubelet v1.36 registers for its machine, with
// the status it sends along, and kwok to play it from then on.
func kubeletNode(name string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				v1.LabelHostname:   name,
				v1.LabelOSStable:   "linux",
				v1.LabelArchStable: "amd64",
				kwokLabel:          kwokManaged,
			},
		},
		Status: kubeletStatus(name, metav1.Now()),
	}
}

// kubeletStatus is the status a healthy kubelet v1.36 registers with
// (its initialNode sets it before the create): the four conditions it
// owns, capacity, and only a Hostname address, as with
// --cloud-provider=external. Registered so, kwok's node-initialize stage
// has nothing to do for a new node: it would otherwise patch every node
// right after its registration, racing the CCM's update of the same node
// and adding an InternalIP of its own where the node has none yet. kwok
// still plays the kubelet after that: leases, and Ready again after a
// power-on. The phase is kwok's, whose heartbeat stage selects on it.
func kubeletStatus(name string, now metav1.Time) v1.NodeStatus {
	resources := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("4"),
		v1.ResourceMemory: resource.MustParse("16Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	condition := func(t v1.NodeConditionType, s v1.ConditionStatus, reason, message string) v1.NodeCondition {
		return v1.NodeCondition{Type: t, Status: s, Reason: reason, Message: message, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return v1.NodeStatus{
		Conditions: []v1.NodeCondition{
			condition(v1.NodeMemoryPressure, v1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			condition(v1.NodeDiskPressure, v1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			condition(v1.NodePIDPressure, v1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			condition(v1.NodeReady, v1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
		},
		Addresses:   []v1.NodeAddress{{Type: v1.NodeHostName, Address: name}},
		Capacity:    resources,
		Allocatable: resources,
		NodeInfo: v1.NodeSystemInfo{
			OperatingSystem: "linux",
			Architecture:    "amd64",
			KubeletVersion:  pins.ModuleVersion(pins.Kubernetes),
		},
		Phase: v1.NodeRunning,
	}
}

// PowerOff stops the instance and silences the node's kubelet.
func (p *nodePool) PowerOff(ctx context.Context, name string) error {
	if err := p.cloud.Stop(ctx, name); err != nil {
		return fmt.Errorf("node %s: stop its instance: %w", name, err)
	}
	return p.setKubelet(ctx, name, false)
}

// PowerOn starts the instance and its kubelet reports again.
func (p *nodePool) PowerOn(ctx context.Context, name string) error {
	if err := p.cloud.Start(ctx, name); err != nil {
		return fmt.Errorf("node %s: start its instance: %w", name, err)
	}
	return p.setKubelet(ctx, name, true)
}

// Terminate destroys the instance and its kubelet with it.
func (p *nodePool) Terminate(ctx context.Context, name string) error {
	if err := p.cloud.Terminate(ctx, name); err != nil {
		return fmt.Errorf("node %s: terminate its instance: %w", name, err)
	}
	err := p.setKubelet(ctx, name, false)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Remove terminates the instance and deletes the Node.
func (p *nodePool) Remove(ctx context.Context, name string) error {
	if err := p.cloud.Terminate(ctx, name); err != nil {
		return fmt.Errorf("node %s: terminate its instance: %w", name, err)
	}
	err := p.client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// setKubelet hands the node to kwok or takes it away; an unmanaged node
// gets no status updates or lease renewals, as when its kubelet is down.
func (p *nodePool) setKubelet(ctx context.Context, name string, on bool) error {
	var value any // JSON null removes the label
	if on {
		value = kwokManaged
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{kwokLabel: value}}})
	_, err := p.client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("node %s: switch its kubelet %s: %w", name, map[bool]string{true: "on", false: "off"}[on], err)
	}
	return err
}
