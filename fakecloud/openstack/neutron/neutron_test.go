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

package neutron_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/openstackjson"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

// The OpenStack dialect is tested with gophercloud, the client the
// OpenStack CCM is built on: what it parses here, the CCM parses. The
// tests drive the whole server (servertest), as the CCM does.

func TestNeutron(t *testing.T) {
	f := servertest.New(t, server.Config{})
	a := f.Create("node-a")
	f.Create("node-b")
	_, network := f.OSClients()
	ctx := context.Background()

	page, err := ports.List(network, ports.ListOpts{DeviceID: a.ID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := ports.ExtractPorts(page)
	if err != nil || len(ps) != 1 {
		t.Fatalf("ports of %s: %v %+v", a.ID, err, ps)
	}
	var fixed []string
	for _, ip := range ps[0].FixedIPs {
		fixed = append(fixed, ip.IPAddress)
	}
	var internal, external []string
	for _, ad := range a.Addresses {
		switch ad.Type {
		case api.AddressInternalIP:
			internal = append(internal, ad.Address)
		case api.AddressExternalIP:
			external = append(external, ad.Address)
		}
	}
	if strings.Join(fixed, ",") != strings.Join(internal, ",") || ps[0].Status != "ACTIVE" {
		t.Errorf("port %+v: want fixed IPs %v, ACTIVE", ps[0], internal)
	}
	net, err := networks.Get(ctx, network, ps[0].NetworkID).Extract()
	if err != nil || net.Name != openstackjson.NetworkName {
		t.Errorf("port's network: %v %+v", err, net)
	}
	sn, err := subnets.Get(ctx, network, ps[0].FixedIPs[0].SubnetID).Extract()
	if err != nil || sn.NetworkID != ps[0].NetworkID {
		t.Errorf("port's subnet: %v %+v", err, sn)
	}
	page, err = floatingips.List(network, floatingips.ListOpts{PortID: ps[0].ID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fips, err := floatingips.ExtractFloatingIPs(page)
	if err != nil || len(fips) != len(external) || fips[0].FloatingIP != external[0] {
		t.Errorf("floating IPs of %s: %v %+v, want %v", ps[0].ID, err, fips, external)
	}
	if _, err := networks.Get(ctx, network, "net-none").Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("unknown network: %v, want 404", err)
	}
	page, err = extensions.List(network).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exts, err := extensions.ExtractExtensions(page)
	if err != nil || len(exts) == 0 {
		t.Errorf("extensions: %v %+v", err, exts)
	}
	// A filter fakecloud does not know is refused, not ignored.
	if _, err := ports.List(network, ports.ListOpts{MACAddress: "fa:16:3e:00:00:01"}).AllPages(ctx); !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
		t.Errorf("unknown filter: %v, want 400", err)
	}
}
