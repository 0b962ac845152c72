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

package vsphere

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"

	"github.com/vmware/govmomi/vim25/soap"

	"sigs.k8s.io/ccm-harness/providers"
)

// Reach is a vCenter the harness does not start (the provider config's
// reach): a real one, or a simulator someone else runs. The harness logs
// in as govc does, with what the environment says: GOVC_URL (a host, or a
// URL of /sdk), GOVC_USERNAME and GOVC_PASSWORD (or the URL's own user),
// GOVC_TLS_CA_CERTS (the server's CA) or GOVC_INSECURE, GOVC_DATACENTER:
// credentials of the inspector's own, never the CCM's. It reads VMs and
// tags there, and powers only the VMs of nodes the user lent the lifecycle
// specs; it makes none: the specs that would are skipped, saying so.
type Reach struct {
	// Datacenter is where the nodes' VMs are; default GOVC_DATACENTER.
	Datacenter string `json:"datacenter,omitempty"`
	// RegionCategory and ZoneCategory are the tag categories of the CCM's
	// [Labels] region and zone; default k8s-region and k8s-zone.
	RegionCategory string `json:"regionCategory,omitempty"`
	ZoneCategory   string `json:"zoneCategory,omitempty"`
}

// The govc environment the inspector reads.
const (
	envURL        = "GOVC_URL"
	envUsername   = "GOVC_USERNAME"
	envPassword   = "GOVC_PASSWORD"
	envCA         = "GOVC_TLS_CA_CERTS"
	envInsecure   = "GOVC_INSECURE"
	envDatacenter = "GOVC_DATACENTER"
)

// reached is the vCenter reach names; families are the CCM's ipFamily,
// which decide a VM's node addresses.
func reached(reach Reach, families []string) *providers.ReachedCloud {
	return &providers.ReachedCloud{Name: Name, Connect: func(ctx context.Context) (providers.Inspector, string, []string, error) {
		return reach.connect(ctx, families)
	}}
}

// connect reads the environment, logs in and finds the datacenter and the
// tag categories.
func (r Reach) connect(ctx context.Context, families []string) (providers.Inspector, string, []string, error) {
	raw := os.Getenv(envURL)
	if raw == "" {
		return nil, "", nil, fmt.Errorf("vsphere: no vCenter for the harness's inspector: set %s, and %s and %s (the inspector's own, not the CCM's), as govc takes them", envURL, envUsername, envPassword)
	}
	u, err := soap.ParseURL(raw)
	if err != nil {
		return nil, "", nil, fmt.Errorf("vsphere: %s %q: %v (give a host, or https://host/sdk)", envURL, raw, err)
	}
	user, password := u.User.Username(), ""
	if p, ok := u.User.Password(); ok {
		password = p
	}
	if v := os.Getenv(envUsername); v != "" {
		user = v
	}
	if v := os.Getenv(envPassword); v != "" {
		password = v
	}
	if user == "" {
		return nil, "", nil, fmt.Errorf("vsphere: no user for the harness's inspector at %s: set %s and %s (the inspector's own, not the CCM's)", u.Host, envUsername, envPassword)
	}
	u.User = nil
	insecure := false
	if v := os.Getenv(envInsecure); v != "" {
		if insecure, err = strconv.ParseBool(v); err != nil {
			return nil, "", nil, fmt.Errorf("vsphere: %s %q is not true or false", envInsecure, v)
		}
	}
	dcName := r.Datacenter
	if dcName == "" {
		dcName = os.Getenv(envDatacenter)
	}
	if dcName == "" {
		return nil, "", nil, fmt.Errorf("vsphere: no datacenter for the reached vCenter: set %s, or reach.datacenter in the provider config", envDatacenter)
	}
	inv, err := dial(ctx, u, os.Getenv(envCA), insecure, url.UserPassword(user, password), Config{IPFamilies: families})
	var login *loginError
	switch {
	case errors.As(err, &login):
		return nil, "", nil, fmt.Errorf("vsphere: vCenter %s rejects the inspector's credentials (user %s): %v; fix %s and %s", u, user, login, envUsername, envPassword)
	case err != nil:
		return nil, "", nil, fmt.Errorf("vsphere: cannot reach vCenter %s: %v; fix %s, and %s (its CA) or %s", u, err, envURL, envCA, envInsecure)
	}
	inv.names = names{datacenter: dcName, region: or(r.RegionCategory, regionCategory), zone: or(r.ZoneCategory, zoneCategory)}
	if _, err := inv.find(ctx); err != nil {
		return nil, "", nil, fmt.Errorf("vsphere: the reached vCenter %s: %v (fix %s or reach.datacenter, and reach.regionCategory and reach.zoneCategory: the CCM's [Labels])", u, err, envDatacenter)
	}
	return inv, fmt.Sprintf("vCenter %s, datacenter %s, as %s", u, dcName, user), []string{password}, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// What a reached vCenter's inventory is, checked at compile time.
var (
	_ providers.Inspector    = (*inventory)(nil)
	_ providers.MachinePower = (*inventory)(nil)
)
