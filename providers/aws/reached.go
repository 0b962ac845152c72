package aws

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

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

// reached is the AWS a Reach names.
type reached struct {
	reach  Reach
	lbType string

	mu        sync.Mutex
	inspector *inspect.Cloud
	region    string
	secrets   []string
}

// What a reached AWS implements, checked at compile time.
var (
	_ providers.Cloud        = (*reached)(nil)
	_ providers.Attacher     = (*reached)(nil)
	_ providers.Reached      = (*reached)(nil)
	_ providers.SecretKeeper = (*reached)(nil)
)

// connectTimeout bounds the first calls: a cloud that does not answer is
// said at once.
const connectTimeout = 30 * time.Second

// Start connects: it reads the environment's configuration and asks EC2
// for the zones and the cluster's subnets, saying in one line what is
// wrong.
func (r *reached) Start(ctx context.Context, _ providers.CloudEnv) error { return r.connect(ctx) }

// Attach is Start: every process reads the same environment.
func (r *reached) Attach(ctx context.Context, _ providers.CloudEnv) error { return r.connect(ctx) }

func (r *reached) connect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	var opts []func(*config.LoadOptions) error
	if r.reach.Region != "" {
		opts = append(opts, config.WithRegion(r.reach.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return fmt.Errorf("aws: reading the AWS configuration of the environment: %w (fix AWS_PROFILE, AWS_CONFIG_FILE or AWS_SHARED_CREDENTIALS_FILE)", err)
	}
	if cfg.Region == "" {
		return fmt.Errorf("aws: no region for the reached cloud: set AWS_REGION, a region in the shared config's profile, or reach.region in the provider config")
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		// The SDK's message is about the last source it tried (the
		// instance metadata service), not the ones a user sets.
		return fmt.Errorf("aws: no credentials for the harness's inspector in the environment, the shared files or the instance metadata: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (the inspector's own, not the CCM's)")
	}
	var resolver *net.Resolver
	if ns := r.reach.Nameserver; ns != "" {
		if _, _, err := net.SplitHostPort(ns); err != nil {
			return fmt.Errorf("aws: reach.nameserver %q is not host:port", ns)
		}
		resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "udp", ns)
		}}
	}
	insp := inspect.FromConfig(cfg, r.reach.ClusterID, resolver)
	if err := insp.Check(ctx); err != nil {
		return fmt.Errorf("aws: the reached cloud, as %s: %w", creds.AccessKeyID, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inspector, r.region = insp, cfg.Region
	r.secrets = []string{creds.SecretAccessKey}
	if creds.SessionToken != "" {
		r.secrets = append(r.secrets, creds.SessionToken)
	}
	return nil
}

// Where is the region and the cluster's tag.
func (r *reached) Where() string {
	return fmt.Sprintf("AWS in %s (cluster tag %s%s), as the environment's credentials", r.region, inspect.TagClusterPrefix, r.reach.ClusterID)
}

// CCMConfig: the CCM of a reached cloud is its owner's, configured there.
func (r *reached) CCMConfig() ([]byte, error) {
	return nil, fmt.Errorf("aws: the harness writes no cloud config for a cloud it reaches: run the suite with --cluster=existing against the cluster whose CCM uses that cloud, or give the profile file's ccm.cloudConfig")
}

// Instances: no machine is made or changed in a cloud the harness does not
// own.
func (r *reached) Instances() providers.InstanceControl { return nil }

// Inspector asks the reached AWS; nil before it connected.
func (r *reached) Inspector() providers.Inspector {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inspector == nil {
		return nil
	}
	return r.inspector
}

// Secrets are the inspector's secret key and session token.
func (r *reached) Secrets() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.secrets
}

// newReached checks reach.
func newReached(reach Reach) (*reached, error) {
	if reach.ClusterID == "" {
		return nil, fmt.Errorf("aws provider config: reach.clusterID is not set (the cluster's tag kubernetes.io/cluster/<id>, the CCM's KubernetesClusterID)")
	}
	return &reached{reach: reach}, nil
}
