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

// Package vsphere is the provider profile of the real vSphere CCM
// (k8s.io/cloud-provider-vsphere) against vcsim, govmomi's vCenter
// simulator, run by the harness on loopback over HTTPS with credentials.
//
// The harness shapes vcsim over the vSphere API as an administrator would
// shape a vCenter: a region tag on the datacenter, a zone tag on each
// cluster, and one VM per node, named after it, with the guest hostname
// and IP VMware Tools would report. The CCM finds the VMs, reads their
// hardware, power state and tags, and initializes and lifecycles the nodes.
// The vSphere CCM has no load balancers or routes without NSX-T, so the
// profile claims neither.
package vsphere

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/pki"
	"sigs.k8s.io/ccm-harness/internal/process"
	"sigs.k8s.io/ccm-harness/manifests"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/specs"
)

// Name selects this profile.
const Name = "vsphere"

// Manifests are cloud-provider-vsphere's own (manifests/, as its release
// ships them): its RBAC, and its DaemonSet, whose container a CCM from an
// image runs as, its cloud config in the ConfigMap the DaemonSet mounts.
var Manifests = manifests.Embedded(manifestDir, "manifests")

//go:embed manifests/*.yaml
var manifestDir embed.FS

// differences are what the vSphere CCM does otherwise than the suite asks.
var differences = []providers.Difference{
	{Spec: specs.LifecycleForeign, Step: providers.StepKeep,
		Shows: "expected kept, actual: deleted",
		Evidence: "it deletes a NotReady node whose provider ID is another owner's: InstanceExistsByProviderID trims the vsphere:// " +
			"prefix only if present, finds no VM by the rest as a UUID (ErrNoVMFound), and answers false, nil for a UUID it has not " +
			"registered (pkg/cloudprovider/vsphere/instances.go:153-194 of v1.31.0), so k8s.io/cloud-provider's node lifecycle " +
			"controller deletes the node; only the environment variable SKIP_NODE_DELETION stops it. Reported upstream: " +
			"cloud-provider-vsphere 538 (kubemark nodes deleted) and 677 (ignore nodes whose providerID is not vsphere://), both closed unfixed"},
}

// Profile returns the vSphere provider's profile.
func Profile() providers.Profile {
	return providers.Profile{
		Name:             Name,
		CloudProvider:    "vsphere",
		ProviderIDScheme: "vsphere",
		CCM:              CCM,
		CloudBinaries:    []binaries.Component{VCSim},
		Manifests:        Manifests,
		Capabilities:     providers.NewCapabilities(providers.Instances, providers.Zones, providers.NodeLifecycle),
		Differences:      differences,
		CloudFeatures:    featuresOf,
		Config:           Config{},
		NewCloud: func(config []byte) (providers.Cloud, error) {
			c := Config{}
			if len(config) > 0 {
				if err := yaml.UnmarshalStrict(config, &c); err != nil {
					return nil, fmt.Errorf("vsphere provider config: %w", err)
				}
			}
			if reach := c.Reach; reach != nil {
				// What shapes vcsim or the CCM's config means nothing to
				// a vCenter the harness does not run.
				families := c.IPFamilies
				c.IPFamilies, c.Reach = nil, nil
				if !reflect.ValueOf(c).IsZero() {
					return nil, fmt.Errorf("vsphere provider config: with reach, give only reach and ipFamilies: the rest shapes the vCenter the harness runs")
				}
				c.IPFamilies = families
				if err := c.complete(); err != nil {
					return nil, fmt.Errorf("vsphere provider config: %w", err)
				}
				return reached(*reach, c.IPFamilies), nil
			}
			if err := c.complete(); err != nil {
				return nil, fmt.Errorf("vsphere provider config: %w", err)
			}
			return &Cloud{config: c}, nil
		},
	}
}

func init() { providers.Register(Profile()) }

// featuresOf claims node-dual-stack where the guests report, and the CCM
// is told (ipFamily), both families: the CCM then reports an InternalIP of
// each, the first its guest reports that no excluded subnet holds
// (discoverIPs, pkg/cloudprovider/vsphere/nodemanager.go:321-354 of
// v1.31.0), behind its ENABLE_ALPHA_DUAL_STACK (CCMEnv).
// A vCenter the harness reaches claims nothing more: its CCM's config is
// its owner's.
func featuresOf(cloud providers.Cloud) providers.Features {
	if c, ok := cloud.(*Cloud); ok && slices.Contains(c.config.IPFamilies, ipv4) && slices.Contains(c.config.IPFamilies, ipv6) {
		return providers.NewFeatures(specs.NodeDualStack)
	}
	return providers.NewFeatures()
}

// Config is the vSphere provider's --provider-config file.
type Config struct {
	// Region names the region tag on the datacenter; default region-a.
	Region string `json:"region,omitempty"`
	// Zones name the zone tags, one per cluster; VMs are placed in them in
	// turn. Default zone-a1, zone-a2.
	Zones []string `json:"zones,omitempty"`
	// Credentials says where the CCM finds vCenter's credentials: "secret"
	// (default), a Secret in kube-system named by its cloud config, or
	// "inline", in the cloud config itself.
	Credentials string `json:"credentials,omitempty"`
	// IPFamilies are the address families each VM's guest reports and the
	// CCM is configured for, in the CCM's order of priority: "ipv4"
	// (default), "ipv6", or both.
	IPFamilies []string `json:"ipFamilies,omitempty"`
	// Faults break the cloud on purpose, for the negative controls.
	Faults Faults `json:"faults,omitempty"`
	// Reach, when set, is a vCenter the harness does not start but
	// reaches (a real one): give only reach and ipFamilies then.
	Reach *Reach `json:"reach,omitempty"`
}

// Faults make vcsim misbehave.
type Faults struct {
	// RenameTags makes the tag named by each key read as the value on the
	// CCM's endpoint only: a tagging API that lies to the CCM while the
	// inspector, on its own endpoint, reads the truth.
	RenameTags map[string]string `json:"renameTags,omitempty"`
	// NoGuestHostname leaves these nodes' VMs without guest.hostName, as
	// when VMware Tools do not report it.
	NoGuestHostname []string `json:"noGuestHostname,omitempty"`
	// WrongPassword gives the CCM a password vCenter rejects.
	WrongPassword bool `json:"wrongPassword,omitempty"`
}

// Where the CCM looks for tags, and where its credentials Secret is.
const (
	regionCategory  = "k8s-region"
	zoneCategory    = "k8s-zone"
	secretName      = "vsphere-credentials"
	secretNamespace = "kube-system"
	// datacenter is the one vcsim makes.
	datacenter = "DC0"
	// server is vCenter's address, and the key of its credentials in the
	// Secret; the CCM and the harness reach vcsim on different ports.
	server = "127.0.0.1"
	// The vSphere CCM's names of the address families.
	ipv4, ipv6 = "ipv4", "ipv6"
)

func (c *Config) complete() error {
	if c.Region == "" {
		c.Region = "region-a"
	}
	if len(c.Zones) == 0 {
		c.Zones = []string{"zone-a1", "zone-a2"}
	}
	switch c.Credentials {
	case "":
		c.Credentials = "secret"
	case "secret", "inline":
	default:
		return fmt.Errorf("credentials: %q is neither \"secret\" nor \"inline\"", c.Credentials)
	}
	if len(c.IPFamilies) == 0 {
		c.IPFamilies = []string{ipv4}
	}
	seenFamily := map[string]bool{}
	for _, f := range c.IPFamilies {
		if (f != ipv4 && f != ipv6) || seenFamily[f] {
			return fmt.Errorf("ipFamilies: %q is not \"ipv4\" or \"ipv6\", or is named twice", f)
		}
		seenFamily[f] = true
	}
	// One tag per zone in one category: names must differ.
	seen := map[string]bool{}
	for _, z := range c.Zones {
		if z == "" || seen[z] {
			return fmt.Errorf("zones: %q is empty or named twice", z)
		}
		seen[z] = true
	}
	return nil
}

// Cloud is a vcsim process and the harness's session with it.
type Cloud struct {
	config Config
	dir    string
	caFile string
	// user and password are the CCM's; admin the harness's, which only
	// the admin port takes.
	user, password string
	admin          *url.Userinfo
	// ccmPort serves the CCM (with faults), adminPort the harness.
	ccmPort, adminPort int
	inv                *inventory
}

// adminUser is the harness's user at the admin port.
const adminUser = "ccm-harness-admin@vsphere.local"

// Secrets are vCenter's passwords, the CCM's and the harness's.
func (c *Cloud) Secrets() []string {
	if c.admin == nil {
		return []string{c.password}
	}
	p, _ := c.admin.Password()
	return []string{c.password, p}
}

// Start runs vcsim, shapes its inventory and, unless credentials are
// inline, stores them in the Secret the CCM reads.
func (c *Cloud) Start(ctx context.Context, env providers.CloudEnv) error {
	bins, err := env.Binaries.Paths(ctx, VCSim)
	if err != nil {
		return err
	}
	c.dir = env.Dir
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	if err := c.writeTLS(); err != nil {
		return err
	}
	if env.AdminDir == "" {
		return fmt.Errorf("vcsim: no folder for the admin credentials (CloudEnv.AdminDir)")
	}
	c.user, c.password = "administrator@vsphere.local", token()
	creds := filepath.Join(c.dir, "credentials")
	if err := os.WriteFile(creds, []byte(c.user+"\n"+c.password+"\n"), 0o600); err != nil {
		return err
	}
	// The harness's own user, which the CCM cannot read: only it logs in
	// at the admin port, where no fault applies.
	c.admin = url.UserPassword(adminUser, token())
	adminPassword, _ := c.admin.Password()
	adminCreds := filepath.Join(env.AdminDir, "vcsim-admin-credentials")
	if err := os.WriteFile(adminCreds, []byte(adminUser+"\n"+adminPassword+"\n"), 0o600); err != nil {
		return err
	}
	if c.ccmPort, err = process.FreePort(); err != nil {
		return err
	}
	if c.adminPort, err = process.FreePort(); err != nil {
		return err
	}
	args := []string{
		"--listen=" + hostPort(c.ccmPort),
		"--admin-listen=" + hostPort(c.adminPort),
		"--tls-cert=" + filepath.Join(c.dir, "vcsim.crt"),
		"--tls-key=" + filepath.Join(c.dir, "vcsim.key"),
		"--credentials-file=" + creds,
		"--admin-credentials-file=" + adminCreds,
		"--clusters=" + strconv.Itoa(len(c.config.Zones)),
	}
	for from, to := range c.config.Faults.RenameTags {
		args = append(args, "--rename-tag="+from+"="+to)
	}
	if _, err := env.Processes.Start(ctx, process.Spec{
		Name:   "vcsim",
		Path:   bins[VCSim.Name],
		Args:   args,
		LogDir: env.LogDir,
		Ready:  c.ready,
	}); err != nil {
		return err
	}
	ports, err := json.Marshal(attachment{CCMPort: c.ccmPort, AdminPort: c.adminPort})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(env.AdminDir, attachmentFile), ports, 0o600); err != nil {
		return err
	}
	c.inv, err = connect(ctx, c.url(c.adminPort), c.caFile, c.admin, c.config)
	if err != nil {
		return fmt.Errorf("vcsim at %s: %w", c.url(c.adminPort), err)
	}
	c.inv.counter = filepath.Join(env.AdminDir, vmCounterFile)
	if err := c.inv.shape(ctx); err != nil {
		return fmt.Errorf("vcsim: shape the inventory: %w", err)
	}
	if c.config.Credentials == "secret" {
		return c.storeSecret(ctx, env.Kubeconfig)
	}
	return nil
}

// attachmentFile, in the admin folder, holds vcsim's ports, and
// vmCounterFile counts the VMs the harness made there, for the processes
// that join the cloud (Attach).
const (
	attachmentFile = "vcsim.json"
	vmCounterFile  = "vcsim-vms"
)

type attachment struct {
	CCMPort   int `json:"ccmPort"`
	AdminPort int `json:"adminPort"`
}

// Attach joins the vcsim another process started and shaped for the
// cluster whose cloud folders env names, as the harness's user.
func (c *Cloud) Attach(ctx context.Context, env providers.CloudEnv) error {
	c.dir = env.Dir
	c.caFile = filepath.Join(c.dir, "ca.crt")
	data, err := os.ReadFile(filepath.Join(env.AdminDir, attachmentFile))
	if err != nil {
		return fmt.Errorf("vcsim: join the cloud of %s: %w (is its cluster up?)", env.Dir, err)
	}
	var a attachment
	if err := json.Unmarshal(data, &a); err != nil {
		return fmt.Errorf("vcsim: %s: %w", filepath.Join(env.AdminDir, attachmentFile), err)
	}
	c.ccmPort, c.adminPort = a.CCMPort, a.AdminPort
	readPair := func(path string) (string, string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", "", fmt.Errorf("vcsim: join the cloud of %s: %w", env.Dir, err)
		}
		user, password, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
		return user, password, nil
	}
	if c.user, c.password, err = readPair(filepath.Join(c.dir, "credentials")); err != nil {
		return err
	}
	adminUser, adminPassword, err := readPair(filepath.Join(env.AdminDir, "vcsim-admin-credentials"))
	if err != nil {
		return err
	}
	c.admin = url.UserPassword(adminUser, adminPassword)
	if c.inv, err = connect(ctx, c.url(c.adminPort), c.caFile, c.admin, c.config); err != nil {
		return fmt.Errorf("vcsim at %s: %w", c.url(c.adminPort), err)
	}
	c.inv.counter = filepath.Join(env.AdminDir, vmCounterFile)
	return c.inv.load(ctx)
}

// writeTLS issues vcsim a serving certificate from a CA of its own, so
// the CCM and the harness verify whom they talk to.
func (c *Cloud) writeTLS() error {
	ca, err := pki.NewCA("vcsim-ca")
	if err != nil {
		return err
	}
	c.caFile = filepath.Join(c.dir, "ca.crt")
	if err := os.WriteFile(c.caFile, ca.CertPEM, 0o644); err != nil {
		return err
	}
	kp, err := ca.Issue(pki.Request{CommonName: "vcsim", DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP(server)}})
	if err != nil {
		return err
	}
	_, _, err = kp.Write(c.dir, "vcsim")
	return err
}

// ready wants both endpoints to answer /about over verified TLS.
func (c *Cloud) ready(ctx context.Context) error {
	pool := x509.NewCertPool()
	data, err := os.ReadFile(c.caFile)
	if err != nil {
		return err
	}
	pool.AppendCertsFromPEM(data)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	for _, port := range []int{c.ccmPort, c.adminPort} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+hostPort(port)+"/about", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", req.URL, resp.Status)
		}
	}
	return nil
}

func (c *Cloud) storeSecret(ctx context.Context, kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Secrets(secretNamespace).Create(ctx, &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: secretNamespace},
		// The CCM's credential manager reads <server>.username and
		// <server>.password.
		StringData: map[string]string{server + ".username": c.user, server + ".password": c.ccmPassword()},
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("store the vCenter credentials in Secret %s/%s: %w", secretNamespace, secretName, err)
	}
	return nil
}

// CCMConfig points the vSphere CCM at vcsim's CCM endpoint, verifying its
// certificate, with the tag categories of zones and regions.
func (c *Cloud) CCMConfig() ([]byte, error) {
	global := map[string]any{
		"port":     c.ccmPort,
		"caFile":   c.caFile,
		"ipFamily": c.config.IPFamilies,
	}
	if c.config.Credentials == "inline" {
		global["user"], global["password"] = c.user, c.ccmPassword()
	} else {
		global["secretName"], global["secretNamespace"] = secretName, secretNamespace
	}
	return yaml.Marshal(map[string]any{
		"global":  global,
		"vcenter": map[string]any{server: map[string]any{"server": server, "datacenters": []string{datacenter}}},
		"labels":  map[string]string{"region": regionCategory, "zone": zoneCategory},
	})
}

// Diagnose logs in to vcsim's CCM endpoint as the CCM does, with the
// credentials the CCM was given.
func (c *Cloud) Diagnose(ctx context.Context) error {
	if c.inv == nil {
		return nil
	}
	where := "its cloud config"
	if c.config.Credentials == "secret" {
		where = "Secret " + secretNamespace + "/" + secretName
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := connect(ctx, c.url(c.ccmPort), c.caFile, url.UserPassword(c.user, c.ccmPassword()), c.config)
	var login *loginError
	switch {
	case errors.As(err, &login):
		return fmt.Errorf("vCenter %s rejects the CCM's credentials (user %s, from %s): %v; fix the password there", c.url(c.ccmPort), c.user, where, login.err)
	case err != nil:
		return fmt.Errorf("the CCM cannot reach vCenter %s: %w; is vcsim running, and do the cloud config's server and port name it?", c.url(c.ccmPort), err)
	}
	return nil
}

// ccmPassword is the password the CCM is given: vCenter's, unless a fault
// says otherwise.
func (c *Cloud) ccmPassword() string {
	if c.config.Faults.WrongPassword {
		return "not-" + c.password
	}
	return c.password
}

// CCMEnv switches on the vSphere CCM's dual-stack support, which it keeps
// behind an environment variable and refuses a config with two IP
// families without.
func (c *Cloud) CCMEnv() []string {
	if len(c.config.IPFamilies) > 1 {
		return []string{"ENABLE_ALPHA_DUAL_STACK=true"}
	}
	return nil
}

// Instances makes VMs in vcsim.
func (c *Cloud) Instances() providers.InstanceControl {
	if c.inv == nil {
		return nil
	}
	return c.inv
}

// Inspector reads vcsim through the harness's endpoint, which faults never
// touch.
func (c *Cloud) Inspector() providers.Inspector {
	if c.inv == nil {
		return nil
	}
	return c.inv
}

func (c *Cloud) url(port int) string { return "https://" + hostPort(port) + "/sdk" }

func hostPort(port int) string { return net.JoinHostPort(server, strconv.Itoa(port)) }

func token() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// What the vSphere provider implements, checked at compile time: a
// drifted signature would otherwise turn the specs that ask for it into
// skips. vSphere claims no load balancers or routes, so it has no
// inspector for them.
var (
	_ providers.Cloud           = (*Cloud)(nil)
	_ providers.SecretKeeper    = (*Cloud)(nil)
	_ providers.Attacher        = (*Cloud)(nil)
	_ providers.Diagnoser       = (*Cloud)(nil)
	_ providers.CCMEnvironment  = (*Cloud)(nil)
	_ providers.InstanceControl = (*inventory)(nil)
	_ providers.Inspector       = (*inventory)(nil)
)
