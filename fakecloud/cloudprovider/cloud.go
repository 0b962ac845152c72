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

// Package cloudprovider is a k8s.io/cloud-provider implementation backed by
// fakecloud, so that a real cloud-controller-manager can be built and run
// against the simulated cloud. It is deliberately a plain, by-the-book
// provider: the harness judges CCM behaviour, and this is its reference CCM.
package cloudprovider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cloudprovider "k8s.io/cloud-provider"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/ccm-harness/fakecloud/client"
)

// ProviderName is the --cloud-provider value and the provider ID scheme.
const ProviderName = "fakecloud"

const providerIDPrefix = ProviderName + "://"

// reachTimeout bounds the start-up check that fakecloud answers: long enough
// for a loaded machine, short enough that a wrong endpoint fails fast.
const reachTimeout = 3 * time.Second

var registerOnce sync.Once

// Register makes the provider known to k8s.io/cloud-provider under
// ProviderName. Calling it more than once is harmless.
func Register() {
	registerOnce.Do(func() {
		cloudprovider.RegisterCloudProvider(ProviderName, func(config io.Reader) (cloudprovider.Interface, error) {
			return New(config)
		})
	})
}

// Config is the cloud config file (--cloud-config), in YAML.
type Config struct {
	// Endpoint is fakecloud's URL, e.g. http://127.0.0.1:8080.
	Endpoint string `json:"endpoint"`
	// TokenFile holds the cloud API token.
	TokenFile string `json:"tokenFile"`
	// Region is the region this CCM serves; it is reported for instances
	// that name none.
	Region string `json:"region"`
}

// ProviderID returns the provider ID of the instance with this ID.
func ProviderID(instanceID string) string { return providerIDPrefix + instanceID }

// InstanceID returns the instance ID inside a fakecloud provider ID.
func InstanceID(providerID string) (string, error) {
	id, ok := strings.CutPrefix(providerID, providerIDPrefix)
	if !ok || id == "" || strings.Contains(id, "/") {
		return "", fmt.Errorf("provider ID %q is not of the form %s<instance id>", providerID, providerIDPrefix)
	}
	return id, nil
}

// Cloud is the fakecloud cloudprovider.Interface.
type Cloud struct {
	cfg Config
	api *client.Cloud
	// misbehaves are the CCM's own faults, for negative controls.
	misbehaves map[Misbehaviour]bool
	// unroutable is the first node a route was asked to that no
	// instance is, once FailRoutesOnForeignNodes holds it against the
	// route table.
	unroutable atomic.Pointer[string]
}

// MisbehaveEnv names the CCM's own deliberate faults, for the harness's
// negative controls of what no fault of the cloud can break (the cloud is
// not asked about a node that is not its own): a comma-separated list of
// Misbehaviours. Unset in any other use.
const MisbehaveEnv = "FAKECLOUD_CCM_MISBEHAVE"

// Misbehaviour is a deliberate fault of the CCM itself.
type Misbehaviour string

const (
	// AdoptForeignNodes looks a node whose provider ID is not fakecloud's
	// up by its name, as a CCM that ignores the scheme does: no instance
	// has that name, so the node lifecycle controller deletes the node.
	AdoptForeignNodes Misbehaviour = "adopt-foreign-nodes"
	// CrashOnForeignNodes panics on such a node, as a CCM that parses
	// every provider ID as its own does, and the process exits.
	CrashOnForeignNodes Misbehaviour = "crash-on-foreign-nodes"
	// FailLoadBalancersOnForeignNodes fails every load balancer while
	// such a node is in the cluster, as a CCM that reads every node's
	// provider ID as its own to place the load balancer does.
	FailLoadBalancersOnForeignNodes Misbehaviour = "fail-load-balancers-on-foreign-nodes"
	// FailRoutesOnForeignNodes fails every listing of the route table once
	// asked for a route to such a node, as a CCM that names every route's
	// target as its own instance does: the route controller then makes no
	// route for any node.
	FailRoutesOnForeignNodes Misbehaviour = "fail-routes-on-foreign-nodes"
	// VIPForProxyProtocol writes ipMode VIP even for a load balancer that
	// speaks the PROXY protocol, as a CCM that never sets ipMode does
	// (hcloud CCM issue 727): kube-proxy then short-circuits in-cluster
	// clients of the ingress IP straight to the backends, which get no
	// header and fail them.
	VIPForProxyProtocol Misbehaviour = "vip-for-proxy-protocol"
	// IPv4OnlyAddresses leaves the instance's IPv6 addresses out of the
	// node's, as a CCM that knows one family does (the AWS CCM unless its
	// NodeIPFamilies names ipv6): a node whose kubelet was given a
	// dual-stack --node-ip then never initializes, since the CCM's
	// addresses lack the IPv6 one.
	IPv4OnlyAddresses Misbehaviour = "ipv4-only-addresses"
)

var misbehaviours = []Misbehaviour{AdoptForeignNodes, CrashOnForeignNodes, FailLoadBalancersOnForeignNodes, FailRoutesOnForeignNodes, VIPForProxyProtocol, IPv4OnlyAddresses}

func readMisbehaviours(v string) (map[Misbehaviour]bool, error) {
	out := map[Misbehaviour]bool{}
	for _, f := range strings.Split(v, ",") {
		m := Misbehaviour(strings.TrimSpace(f))
		if m == "" {
			continue
		}
		if !slices.Contains(misbehaviours, m) {
			return nil, fmt.Errorf("fakecloud: $%s: no misbehaviour %q (there are %v)", MisbehaveEnv, m, misbehaviours)
		}
		out[m] = true
	}
	return out, nil
}

var (
	_ cloudprovider.Interface    = (*Cloud)(nil)
	_ cloudprovider.InstancesV2  = (*Cloud)(nil)
	_ cloudprovider.Zones        = (*Cloud)(nil)
	_ cloudprovider.LoadBalancer = (*Cloud)(nil)
	_ cloudprovider.Routes       = (*Cloud)(nil)
)

// New reads the cloud config from r, the --cloud-config file (nil when the
// flag is not given), and checks that fakecloud answers.
func New(r io.Reader) (*Cloud, error) {
	cfg, err := ReadConfig(r)
	if err != nil {
		return nil, err
	}
	token, err := readToken(configName(r), cfg.TokenFile)
	if err != nil {
		return nil, err
	}
	misbehaves, err := readMisbehaviours(os.Getenv(MisbehaveEnv))
	if err != nil {
		return nil, err
	}
	c := &Cloud{cfg: *cfg, api: client.New(cfg.Endpoint, token), misbehaves: misbehaves}
	ctx, cancel := context.WithTimeout(context.Background(), reachTimeout)
	defer cancel()
	if err := c.api.Healthz(ctx); err != nil {
		return nil, fmt.Errorf("fakecloud: cannot reach the fakecloud API at %s: %v (is fakecloud running, and is \"endpoint\" in the cloud config right?)",
			cfg.Endpoint, reachError(err))
	}
	return c, nil
}

// reachError strips what the message around it already says.
func reachError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %v", reachTimeout)
	}
	var apiErr *client.APIError
	if errors.As(err, &apiErr) {
		return fmt.Errorf("/healthz answered %d %s", apiErr.Status, apiErr.Message)
	}
	// The client wraps the transport's error once, behind the method, path
	// and endpoint this message names already.
	if inner := errors.Unwrap(err); inner != nil {
		return inner
	}
	return err
}

// configName names the config for error messages: a file when the reader is
// one, as it is when the CCM opens --cloud-config.
func configName(r io.Reader) string {
	if f, ok := r.(interface{ Name() string }); ok {
		return "cloud config " + f.Name()
	}
	return "cloud config"
}

// ReadConfig decodes and checks a cloud config. Unknown fields are errors: a
// misspelt field silently ignored would leave the CCM talking to the wrong
// place.
func ReadConfig(r io.Reader) (*Config, error) {
	if r == nil {
		return nil, errors.New("fakecloud: --cloud-config is required (a YAML file with endpoint, tokenFile and region)")
	}
	name := configName(r)
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("fakecloud: cannot read %s: %v", name, err)
	}
	var cfg Config
	if err := yaml.UnmarshalStrict(b, &cfg); err != nil {
		// sigs.k8s.io/yaml's error names its conversion steps, which only
		// bury the part a user can act on.
		msg := err.Error()
		for _, p := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
			msg = strings.TrimPrefix(msg, p)
		}
		return nil, fmt.Errorf("fakecloud: %s: %s (it must be YAML with the fields endpoint, tokenFile and region)", name, msg)
	}
	missing := func(field, example string) error {
		return fmt.Errorf("fakecloud: %s: %q is missing (add e.g. %s: %s)", name, field, field, example)
	}
	switch {
	case cfg.Endpoint == "":
		return nil, missing("endpoint", "http://127.0.0.1:8080")
	case cfg.TokenFile == "":
		return nil, missing("tokenFile", "/path/to/cloud-token")
	case cfg.Region == "":
		return nil, missing("region", "fake-region-1")
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("fakecloud: %s: \"endpoint\" %q is not a URL like http://127.0.0.1:8080 (scheme, host and port, no path)", name, cfg.Endpoint)
	}
	return &cfg, nil
}

func readToken(configName, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("fakecloud: %s: cannot read \"tokenFile\" %s: %v (point tokenFile at the file holding fakecloud's cloud token)", configName, path, err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("fakecloud: %s: \"tokenFile\" %s is empty (write the cloud token fakecloud was started with into it)", configName, path)
	}
	return token, nil
}

// Initialize needs nothing: the provider runs no controllers of its own.
func (c *Cloud) Initialize(cloudprovider.ControllerClientBuilder, <-chan struct{}) {}

// ProviderName returns ProviderName.
func (c *Cloud) ProviderName() string { return ProviderName }

// HasClusterID is true: a fakecloud belongs to one cluster, so there is no
// sharing to tag for.
func (c *Cloud) HasClusterID() bool { return true }

// InstancesV2 is the instance interface this provider implements.
func (c *Cloud) InstancesV2() (cloudprovider.InstancesV2, bool) { return c, true }

// Instances (v1) is not implemented: InstancesV2 replaces it.
func (c *Cloud) Instances() (cloudprovider.Instances, bool) { return nil, false }

// Zones is implemented for CCM code paths that still ask, though InstancesV2
// makes the node controllers take zones from InstanceMetadata.
func (c *Cloud) Zones() (cloudprovider.Zones, bool) { return c, true }

// LoadBalancer is implemented in loadbalancer.go.
func (c *Cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool) { return c, true }

// Routes is implemented in routes.go.
func (c *Cloud) Routes() (cloudprovider.Routes, bool) { return c, true }

// Clusters is not part of what a CCM needs.
func (c *Cloud) Clusters() (cloudprovider.Clusters, bool) { return nil, false }
