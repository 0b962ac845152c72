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

package cloudprovider

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/client"
)

// byProviderID returns the live instance with the ID in providerID, or nil
// when it does not exist or is terminated: either way the node has no
// machine behind it any more.
func (c *Cloud) byProviderID(ctx context.Context, providerID string) (*api.Instance, error) {
	id, err := InstanceID(providerID)
	if err != nil {
		return nil, err
	}
	inst, err := c.api.GetInstance(ctx, id)
	if client.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if inst.State == api.StateTerminated {
		return nil, nil
	}
	return inst, nil
}

// byName returns the newest live instance named name, or nil.
func (c *Cloud) byName(ctx context.Context, name string) (*api.Instance, error) {
	list, err := c.api.ListInstances(ctx, name)
	if err != nil {
		return nil, err
	}
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].Name == name && list[i].State != api.StateTerminated {
			return &list[i], nil
		}
	}
	return nil, nil
}

// instanceOf finds node's instance, by provider ID when the node has one
// (names can be reused; IDs cannot), else by the node's name.
func (c *Cloud) instanceOf(ctx context.Context, node *v1.Node) (*api.Instance, error) {
	var inst *api.Instance
	var err error
	_, foreign := InstanceID(node.Spec.ProviderID)
	switch {
	case node.Spec.ProviderID != "" && foreign != nil && c.misbehaves[CrashOnForeignNodes]:
		panic(fmt.Sprintf("fakecloud (misbehaving on purpose, %s=%s): node %q: %v", MisbehaveEnv, CrashOnForeignNodes, node.Name, foreign))
	case node.Spec.ProviderID != "" && foreign != nil && c.misbehaves[AdoptForeignNodes]:
		inst, err = c.byName(ctx, node.Name)
	case node.Spec.ProviderID != "":
		inst, err = c.byProviderID(ctx, node.Spec.ProviderID)
	default:
		inst, err = c.byName(ctx, node.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("finding the instance of node %q: %w", node.Name, err)
	}
	return inst, nil
}

// InstanceExists reports whether node's instance exists and is not
// terminated; a stopped instance exists.
func (c *Cloud) InstanceExists(ctx context.Context, node *v1.Node) (bool, error) {
	inst, err := c.instanceOf(ctx, node)
	return inst != nil, err
}

// InstanceShutdown reports whether node's instance is stopped.
func (c *Cloud) InstanceShutdown(ctx context.Context, node *v1.Node) (bool, error) {
	inst, err := c.instanceOf(ctx, node)
	if err != nil {
		return false, err
	}
	if inst == nil {
		return false, cloudprovider.InstanceNotFound
	}
	return inst.State == api.StateStopped, nil
}

// InstanceMetadata returns what the node controller puts on node.
func (c *Cloud) InstanceMetadata(ctx context.Context, node *v1.Node) (*cloudprovider.InstanceMetadata, error) {
	inst, err := c.instanceOf(ctx, node)
	if err != nil {
		return nil, err
	}
	if inst == nil {
		return nil, cloudprovider.InstanceNotFound
	}
	addrs := make([]v1.NodeAddress, 0, len(inst.Addresses))
	for _, a := range inst.Addresses {
		if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is6() && !ip.Is4In6() && c.misbehaves[IPv4OnlyAddresses] {
			continue
		}
		addrs = append(addrs, v1.NodeAddress{Type: v1.NodeAddressType(a.Type), Address: a.Address})
	}
	return &cloudprovider.InstanceMetadata{
		ProviderID:    ProviderID(inst.ID),
		InstanceType:  inst.InstanceType,
		NodeAddresses: addrs,
		Zone:          inst.Zone,
		Region:        c.region(inst),
	}, nil
}

func (c *Cloud) region(inst *api.Instance) string {
	if inst.Region != "" {
		return inst.Region
	}
	return c.cfg.Region
}

// GetZone cannot work for an external CCM, which does not run on the
// machine it would describe.
func (c *Cloud) GetZone(context.Context) (cloudprovider.Zone, error) {
	return cloudprovider.Zone{}, errors.New("fakecloud: GetZone is not supported: fakecloud has no metadata service, so it cannot tell which instance the caller runs on (use GetZoneByProviderID or GetZoneByNodeName)")
}

// GetZoneByProviderID returns the zone of the instance with this provider ID.
func (c *Cloud) GetZoneByProviderID(ctx context.Context, providerID string) (cloudprovider.Zone, error) {
	inst, err := c.byProviderID(ctx, providerID)
	return c.zone(inst, err, "provider ID "+providerID)
}

// GetZoneByNodeName returns the zone of the instance named after the node.
func (c *Cloud) GetZoneByNodeName(ctx context.Context, nodeName types.NodeName) (cloudprovider.Zone, error) {
	inst, err := c.byName(ctx, string(nodeName))
	return c.zone(inst, err, fmt.Sprintf("node %q", nodeName))
}

func (c *Cloud) zone(inst *api.Instance, err error, what string) (cloudprovider.Zone, error) {
	if err != nil {
		return cloudprovider.Zone{}, fmt.Errorf("finding the instance of %s: %w", what, err)
	}
	if inst == nil {
		return cloudprovider.Zone{}, cloudprovider.InstanceNotFound
	}
	return cloudprovider.Zone{FailureDomain: inst.Zone, Region: c.region(inst)}, nil
}
