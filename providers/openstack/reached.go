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

package openstack

import (
	"context"
	"fmt"
	"os"

	"github.com/gophercloud/utils/v2/openstack/clientconfig"

	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/providers/openstack/inspect"
)

// Reach is an OpenStack the harness does not start (the provider
// config's reach): a real cloud, or an emulation someone else runs. The
// harness logs in as the OpenStack client would, with what clouds.yaml
// and the environment say (OS_CLOUD, or OS_AUTH_URL, OS_USERNAME,
// OS_PASSWORD, OS_PROJECT_NAME, OS_USER_DOMAIN_NAME, an application
// credential, OS_REGION_NAME): credentials of the inspector's own, never
// the CCM's. It makes no machine there: the specs that would are skipped,
// saying so.
type Reach struct {
	// Cloud is the entry of clouds.yaml; default OS_CLOUD, else the
	// OS_* variables alone.
	Cloud string `json:"cloud,omitempty"`
	// Region, if set, is used in place of clouds.yaml's or OS_REGION_NAME.
	Region string `json:"region,omitempty"`
	// RouterID and SubnetID are the CCM's [Route] router-id and
	// [LoadBalancer] subnet-id: the router whose extra routes are the
	// cluster's, and the subnet where the nodes' addresses are.
	RouterID string `json:"routerID,omitempty"`
	SubnetID string `json:"subnetID,omitempty"`
}

// reached is the OpenStack reach names.
func reached(reach Reach) *providers.ReachedCloud {
	return &providers.ReachedCloud{Name: Name, Connect: reach.connect}
}

// connect reads clouds.yaml and the environment, logs in and lists the
// servers.
func (r Reach) connect(ctx context.Context) (providers.Inspector, string, []string, error) {
	opts := &clientconfig.ClientOpts{Cloud: r.Cloud, RegionName: r.Region}
	auth, err := clientconfig.AuthOptions(opts)
	if err != nil {
		return nil, "", nil, fmt.Errorf("openstack: the login for the harness's inspector: %v (set OS_CLOUD to an entry of clouds.yaml, or OS_AUTH_URL and the rest: the inspector's own, not the CCM's)", err)
	}
	region := r.Region
	if region == "" && (opts.Cloud != "" || os.Getenv("OS_CLOUD") != "") {
		if cloud, err := clientconfig.GetCloudFromYAML(opts); err == nil {
			region = cloud.RegionName
		}
	}
	if region == "" {
		region = os.Getenv("OS_REGION_NAME")
	}
	if region == "" {
		return nil, "", nil, fmt.Errorf("openstack: no region for the reached cloud: set region_name in clouds.yaml, OS_REGION_NAME, or reach.region in the provider config")
	}
	insp := inspect.New(inspect.Config{Region: region, Auth: auth, RouterID: r.RouterID, SubnetID: r.SubnetID})
	if err := insp.Check(ctx); err != nil {
		return nil, "", nil, fmt.Errorf("openstack: the reached cloud: %w", err)
	}
	who := auth.Username
	if who == "" {
		who = "application credential " + auth.ApplicationCredentialID + auth.ApplicationCredentialName
	}
	var secrets []string
	for _, s := range []string{auth.Password, auth.ApplicationCredentialSecret, auth.TokenID} {
		if s != "" {
			secrets = append(secrets, s)
		}
	}
	return insp, fmt.Sprintf("OpenStack at %s, region %s, as %s", auth.IdentityEndpoint, region, who), secrets, nil
}
