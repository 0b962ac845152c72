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

package aws

import (
	"context"
	"fmt"
	"net"

	"github.com/aws/aws-sdk-go-v2/config"

	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/providers/aws/inspect"
)

// Reach is an AWS the harness does not start (the provider config's
// reach): a real account, or an emulation someone else runs. The harness
// asks it as the AWS CLI would, with what the environment and the shared
// files say (AWS_PROFILE, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY,
// AWS_REGION, AWS_ENDPOINT_URL or a service's own AWS_ENDPOINT_URL_EC2,
// AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE): credentials of the
// inspector's own, never the CCM's. It makes no machine there: the specs
// that would are skipped, saying so.
type Reach struct {
	// ClusterID is the cluster's tag, kubernetes.io/cluster/<ClusterID>,
	// on its subnets and route tables: the CCM's KubernetesClusterID.
	ClusterID string `json:"clusterID"`
	// Region, if set, is used in place of the environment's.
	Region string `json:"region,omitempty"`
	// Nameserver, if set, is the DNS server (host:port) that resolves the
	// load balancers' names, in place of the system's.
	Nameserver string `json:"nameserver,omitempty"`
}

// reached is the AWS a Reach names, with the load balancers its config
// asks the CCM for.
type reached struct {
	*providers.ReachedCloud
	reach  Reach
	lbType string
}

// LookupHost resolves a load balancer's DNS name as the inspector does:
// through reach.nameserver, else the system's DNS.
func (r *reached) LookupHost(ctx context.Context, name string) ([]string, error) {
	return r.reach.resolver().LookupHost(ctx, name)
}

// resolver is reach.nameserver's, else the system's.
func (r Reach) resolver() *net.Resolver {
	ns := r.Nameserver
	if ns == "" {
		return net.DefaultResolver
	}
	return resolverAt(ns)
}

// newReached checks reach.
func newReached(reach Reach, lbType string) (*reached, error) {
	if reach.ClusterID == "" {
		return nil, fmt.Errorf("aws provider config: reach.clusterID is not set (the cluster's tag kubernetes.io/cluster/<id>, the CCM's KubernetesClusterID)")
	}
	if ns := reach.Nameserver; ns != "" {
		if _, _, err := net.SplitHostPort(ns); err != nil {
			return nil, fmt.Errorf("aws provider config: reach.nameserver %q is not host:port", ns)
		}
	}
	return &reached{ReachedCloud: &providers.ReachedCloud{Name: Name, Connect: reach.connect}, reach: reach, lbType: lbType}, nil
}

// connect reads the environment's configuration and asks EC2 for the
// zones and the cluster's subnets.
func (r Reach) connect(ctx context.Context) (providers.Inspector, string, []string, error) {
	var opts []func(*config.LoadOptions) error
	if r.Region != "" {
		opts = append(opts, config.WithRegion(r.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, "", nil, fmt.Errorf("aws: reading the AWS configuration of the environment: %w (fix AWS_PROFILE, AWS_CONFIG_FILE or AWS_SHARED_CREDENTIALS_FILE)", err)
	}
	if cfg.Region == "" {
		return nil, "", nil, fmt.Errorf("aws: no region for the reached cloud: set AWS_REGION, a region in the shared config's profile, or reach.region in the provider config")
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		// The SDK's message is about the last source it tried (the
		// instance metadata service), not the ones a user sets.
		return nil, "", nil, fmt.Errorf("aws: no credentials for the harness's inspector in the environment, the shared files or the instance metadata: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (the inspector's own, not the CCM's)")
	}
	insp := inspect.FromConfig(cfg, r.ClusterID, r.resolver())
	if err := insp.Check(ctx); err != nil {
		return nil, "", nil, fmt.Errorf("aws: the reached cloud, as %s: %w", creds.AccessKeyID, err)
	}
	secrets := []string{creds.SecretAccessKey}
	if creds.SessionToken != "" {
		secrets = append(secrets, creds.SessionToken)
	}
	where := fmt.Sprintf("AWS in %s (cluster tag %s%s), as %s", cfg.Region, inspect.TagClusterPrefix, r.ClusterID, creds.AccessKeyID)
	return insp, where, secrets, nil
}
