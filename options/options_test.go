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

package options

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/providers/aws"
	"sigs.k8s.io/ccm-harness/providers/fake"
	"sigs.k8s.io/ccm-harness/providers/openstack"
	"sigs.k8s.io/ccm-harness/providers/vsphere"
)

// Every door binds the same flags, from the same defaults, to its own
// parser: the standard library's (the suite) or pflag's (the CLI and the
// deployer).
func TestBindBothFlagSets(t *testing.T) {
	t.Setenv("PROVIDER", "vsphere")
	t.Setenv("NODES", "5")
	t.Setenv("CCM_IMAGE", "")
	args := []string{"--ccm-version=v1.30.1", "--nodes=2", "--wait=5s"}

	std := New()
	fs := flag.NewFlagSet("suite", flag.ContinueOnError)
	std.Bind(fs, FlagProvider)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if fs.Lookup(FlagProvider) != nil {
		t.Errorf("--provider bound though left out")
	}

	pf := New()
	pfs := pflag.NewFlagSet("cli", pflag.ContinueOnError)
	pf.Bind(pfs)
	if err := pfs.Parse(args); err != nil {
		t.Fatal(err)
	}
	for _, o := range []*Options{std, pf} {
		if o.Provider != vsphere.Name || o.CCMVersion != "v1.30.1" || o.Nodes != 2 || o.Wait != 5*time.Second || o.Cluster != Local {
			t.Errorf("options %+v: want the environment's provider and the flags' version, nodes and wait", *o)
		}
	}
	if n := New().Nodes; n != 5 {
		t.Errorf("$NODES=5: nodes %d", n)
	}
}

func TestResolveBadInput(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    Options
		want string
	}{
		{"unknown provider", Options{Provider: "nosuch", Cluster: Local}, `--provider "nosuch" is not a provider (known: aws, fake, openstack, vsphere, external; external takes a profile file as --provider-config)`},
		{"unknown runtime", Options{Provider: fake.Name, Cluster: "cloud"}, `--cluster "cloud" is not a runtime (known: local, kind, existing)`},
		{"image and a version that is no release", Options{Provider: vsphere.Name, Cluster: Local, CCMVersion: "1.30", CCMImage: "oci:/x"}, `--ccm-version "1.30" beside --ccm-image names the image's release: give it as vMAJOR.MINOR.PATCH`},
		{"unpinned version", Options{Provider: vsphere.Name, Cluster: Local, CCMVersion: "v0.0.1"}, "pin another in providers/vsphere/"},
		{"negative nodes", Options{Provider: fake.Name, Cluster: Local, Nodes: -1}, "--nodes -1: the node specs need nodes to check (give 1 or more)"},
		{"no nodes", Options{Provider: fake.Name, Cluster: Local, Nodes: -0}, "--nodes 0: the node specs need nodes to check (give 1 or more)"},
		{"unreadable config", Options{Provider: fake.Name, Cluster: Local, ProviderConfig: "/nonexistent.yaml"}, "--provider-config: open /nonexistent.yaml"},
		{"no profile file", Options{Provider: "external", Cluster: Local}, "provider external: no profile file given"},
		{"unserved release", Options{Provider: fake.Name, Cluster: Local, KubernetesVersion: "v1.33.13"},
			"--kubernetes-version v1.33.13 is not a Kubernetes release the harness builds (choose one of v1.37.2, v1.36.3, v1.35.4, v1.34.4, or its minor, e.g. v1.35; default v1.37.2)"},
		{"a CCM newer than the cluster", Options{Provider: aws.Name, Cluster: Local, KubernetesVersion: "v1.35", CCMVersion: "v1.36.2"},
			"aws-cloud-controller-manager v1.36.2 is newer than the cluster's kube-apiserver v1.35.4, and a cloud-controller-manager must not be newer than the kube-apiserver it talks to; it should match its minor version and may be one minor older (https://kubernetes.io/releases/version-skew-policy/); choose --ccm-version v1.35.x or older, or --allow-newer-ccm"},
		{"a release for an existing cluster", Options{Provider: fake.Name, Cluster: Existing, KubernetesVersion: "v1.35"}, "--kubernetes-version v1.35 picks the release of a cluster the harness makes"},
		{"lent nodes of a cluster the harness makes", Options{Provider: fake.Name, Cluster: Local, LifecycleNodes: "node-1"}, "--lifecycle-nodes names nodes of a cluster someone else made"},
		{"a join hook for a cluster the harness makes", Options{Provider: fake.Name, Cluster: Local, JoinHook: "true"}, "--join-hook makes nodes of a cluster someone else made"},
		{"coordinated leader election on kind", Options{Provider: fake.Name, Cluster: Kind, CoordinatedLeaderElection: true}, "--coordinated-leader-election is for a cluster the harness makes with --cluster=local"},
		{"dual-stack on a local cluster", Options{Provider: fake.Name, Cluster: Local, DualStack: true}, "--dual-stack is for a kind cluster the harness makes (--cluster=kind): a local cluster is dual-stack already"},
		{"dual-stack on an existing cluster", Options{Provider: fake.Name, Cluster: Existing, Kubeconfig: "/dev/null", DualStack: true}, "--dual-stack is for a kind cluster the harness makes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.o.Nodes == 0 && tt.name != "no nodes" {
				tt.o.Nodes = 3
			}
			_, err := tt.o.Resolve(nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%v, want one line containing %q", err, tt.want)
			}
		})
	}
}

// A profile file's image, relative to the file, is what the setup runs
// and what testgrid's column says.
func TestResolveProfileFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "my-ccm.yaml")
	if err := os.WriteFile(file, []byte("name: mine\ncloud: fake\nccm: {image: 'docker-archive:ccm.tar'}\ncapabilities: [instances]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Options{Provider: "external", ProviderConfig: file, Cluster: Local, Artifacts: "_artifacts", Nodes: 3}.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	image := "docker-archive:" + filepath.Join(dir, "ccm.tar")
	if s.Profile.Name != "mine" || s.Profile.CCM.Image != image || s.JobVersion() != "cloud-controller-manager@"+image {
		t.Errorf("profile %s, CCM %+v, job version %s", s.Profile.Name, s.Profile.CCM, s.JobVersion())
	}
	md := s.Metadata()
	if md["provider"] != "mine" || md["cluster"] != Local || md["job-version"] != s.JobVersion() {
		t.Errorf("metadata %v", md)
	}
	if !filepath.IsAbs(s.ArtifactsDir) || s.LogDir("c1") != filepath.Join(s.ArtifactsDir, "logs", "c1") {
		t.Errorf("artifacts %s, logs %s", s.ArtifactsDir, s.LogDir("c1"))
	}
	if md["ccm-version"] != "" || md["ccm-source"] != image || md["skew"] != "unknown" {
		t.Errorf("an image of no stated release: metadata %v", md)
	}
}

// An image's release, as its maker names it (a profile's ccm.version, or
// --ccm-version beside --ccm-image), is testgrid's column, the report's
// version and the skew verdict's; one that follows no Kubernetes minor
// has no verdict.
func TestImageVersion(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "my-ccm.yaml")
	if err := os.WriteFile(file, []byte("name: mine\ncloud: fake\nccm: {image: 'docker-archive:ccm.tar', version: v1.36.4}\ncapabilities: [instances]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		o                  Options
		job, version, skew string
	}{
		{Options{Provider: "external", ProviderConfig: file}, "cloud-controller-manager@v1.36.4", "v1.36.4", "CCM one minor older"},
		{Options{Provider: "fake", CCMImage: "docker-archive:/x.tar", CCMVersion: "v1.37.0"}, "fakecloud-ccm@v1.37.0", "v1.37.0", "same minor"},
		{Options{Provider: "fake", CCMImage: "docker-archive:/x.tar", CCMVersion: "v2.3.0"}, "fakecloud-ccm@v2.3.0", "v2.3.0", "unknown"},
	} {
		tt.o.Cluster, tt.o.Artifacts, tt.o.Nodes = Local, "_artifacts", 3
		s, err := tt.o.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		md := s.Metadata()
		if md["job-version"] != tt.job || md["ccm-version"] != tt.version || md["skew"] != tt.skew || !strings.HasPrefix(md["ccm-source"], "docker-archive:") {
			t.Errorf("%+v: metadata %v; want job-version %s, ccm-version %s, skew %q", tt.o, md, tt.job, tt.version, tt.skew)
		}
	}
}

// A profile file with no ccm judges the CCM an existing cluster runs, and
// only that: the runtimes that make a cluster would run none.
func TestResolveProfileFileWithoutCCM(t *testing.T) {
	file := filepath.Join(t.TempDir(), "theirs.yaml")
	if err := os.WriteFile(file, []byte("name: theirs\ncloud: none\ncapabilities: [load-balancers]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, runtime := range []string{Local, Kind} {
		_, err := Options{Provider: "external", ProviderConfig: file, Cluster: runtime, Artifacts: "_artifacts", Nodes: 3}.Resolve(nil)
		if err == nil || !strings.Contains(err.Error(), "the profile file names no ccm, so the harness would run none") {
			t.Errorf("--cluster=%s: %v, want the refusal of a profile with no ccm", runtime, err)
		}
	}
	s, err := Options{Provider: "external", ProviderConfig: file, Cluster: Existing, Artifacts: "_artifacts"}.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.JobVersion() != ClusterCCM || s.CCM() != "the CCM the cluster runs" {
		t.Errorf("job version %q, CCM %q", s.JobVersion(), s.CCM())
	}
	if _, err := (Options{Provider: "external", ProviderConfig: file, Cluster: Existing, Artifacts: "_artifacts", CCMVersion: "v1.0.0"}).Resolve(nil); err == nil {
		t.Error("--ccm-version with a profile that runs no CCM: resolved")
	}
}

// The components listed are the ones each runtime runs on this machine,
// and the leader-migration specs' managers only when asked for, and only
// where they can run: kind and an existing cluster have no control plane
// of the specs' own, so the specs skip there and nothing is built for them.
func TestComponents(t *testing.T) {
	names := func(cs []binaries.Component) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	for _, tt := range []struct {
		cluster   string
		migration bool
		want      []string
	}{
		{Local, false, []string{"etcd", "kube-apiserver", "kube-controller-manager", "kwok", "fakecloud-ccm", "fakecloud"}},
		{Local, true, []string{"etcd", "kube-apiserver", "kube-controller-manager", "kwok", "fakecloud-ccm", "fakecloud", "kube-controller-manager-fakecloud", "fakecloud-ccm-older"}},
		{Kind, false, []string{"fakecloud-ccm", "fakecloud"}},
		{Kind, true, []string{"fakecloud-ccm", "fakecloud"}},
		{Existing, false, nil},
		{Existing, true, nil},
	} {
		s, err := Options{Provider: fake.Name, Cluster: tt.cluster, Artifacts: "_artifacts", Nodes: 3}.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(s.Components(tt.migration)); !slices.Equal(got, tt.want) {
			t.Errorf("%s (migration %t): %v, want %v", tt.cluster, tt.migration, got, tt.want)
		}
	}
	s, err := Options{Provider: vsphere.Name, Cluster: Local, CCMVersion: "v1.30.1", Artifacts: "_artifacts", Nodes: 3}.Resolve(nil)
	if err != nil || s.JobVersion() != "vsphere-cloud-controller-manager@v1.30.1" {
		t.Errorf("vsphere v1.30.1: job version %q, %v", s.JobVersion(), err)
	}
}

// The cluster's release picks the control plane's components and, unless
// the user chose one, the CCM of the same minor, else one older; the
// metadata says both and where they stand under the skew policy.
func TestKubernetesRelease(t *testing.T) {
	for _, tt := range []struct {
		name                    string
		o                       Options
		release, ccm, apiserver string
		skew                    string
	}{
		{"the default", Options{Provider: fake.Name}, "v1.37.2", "v1.37.2", "v1.37.2", "same minor"},
		{"a minor", Options{Provider: fake.Name, KubernetesVersion: "1.34"}, "v1.34.4", "v1.34.4", "v1.34.4", "same minor"},
		{"openstack: the CCM one older where none is of the minor", Options{Provider: openstack.Name, KubernetesVersion: "v1.37.2"}, "v1.37.2", "v1.36.0", "v1.37.2", "CCM one minor older"},
		{"aws: the CCM of the newest minor", Options{Provider: aws.Name, KubernetesVersion: "v1.37"}, "v1.37.2", "v1.37.1", "v1.37.2", "same minor"},
		{"aws: the CCM of the minor", Options{Provider: aws.Name, KubernetesVersion: "v1.35"}, "v1.35.4", "v1.35.3", "v1.35.4", "same minor"},
		{"newer, allowed", Options{Provider: aws.Name, KubernetesVersion: "v1.35", CCMVersion: "v1.36.2", AllowNewerCCM: true}, "v1.35.4", "v1.36.2", "v1.35.4", "outside the skew policy: CCM newer than the kube-apiserver"},
		{"vsphere: too old, run", Options{Provider: vsphere.Name}, "v1.37.2", "v1.31.0", "v1.37.2", "outside the skew policy: CCM more than one minor older"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Cluster, tt.o.Artifacts, tt.o.Nodes = Local, "_artifacts", 3
			s, err := tt.o.Resolve(nil)
			if err != nil {
				t.Fatal(err)
			}
			var apiserver string
			for _, c := range s.Components(false) {
				if c.Name == binaries.KubeAPIServer.Name {
					apiserver = c.Release()
				}
			}
			md := s.Metadata()
			if s.Release != tt.release || s.Profile.CCM.Release() != tt.ccm || apiserver != tt.apiserver || md["skew"] != tt.skew || md["ccm-version"] != tt.ccm {
				t.Errorf("release %s, CCM %s, kube-apiserver %s, metadata %v; want %s, %s, %s, skew %q", s.Release, s.Profile.CCM.Release(), apiserver, md, tt.release, tt.ccm, tt.apiserver, tt.skew)
			}
		})
	}
}

// Args round-trips through the flags every door binds.
func TestArgs(t *testing.T) {
	o := Options{Provider: aws.Name, ProviderConfig: "/p.yaml", CCMVersion: "v1.35.3", Cluster: Kind, BinDir: "/bin", Nodes: 4,
		Artifacts: "/a", KubernetesVersion: "v1.36", AllowNewerCCM: true, Wait: time.Minute}
	got := Options{Wait: time.Minute}
	fs := pflag.NewFlagSet("suite", pflag.ContinueOnError)
	got.Bind(fs)
	if err := fs.Parse(o.Args()); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, o) {
		t.Errorf("parsed %+v\nwant   %+v", got, o)
	}
}

// secretRuntime brings up clusters whose clouds know one secret each.
type secretRuntime struct{ n int }

type secretCloud struct {
	providers.Cloud
	secret string
}

func (c secretCloud) Secrets() []string { return []string{c.secret} }

func (r *secretRuntime) Up(_ context.Context, spec cluster.Spec) (*cluster.Cluster, error) {
	r.n++
	return &cluster.Cluster{Name: spec.Name, Cloud: secretCloud{secret: fmt.Sprintf("secret-of-cluster-%d", r.n)}}, nil
}

func (r *secretRuntime) Down(context.Context, string) error { return nil }

// TestSecretsOfEveryCluster: the secrets a run redacts are those of every
// cluster it brought up, a suite's leader-migration clusters too, not only
// its first.
func TestSecretsOfEveryCluster(t *testing.T) {
	s := &Setup{Options: Options{Nodes: 0}, Runtime: &secretRuntime{}, Profile: providers.Profile{Name: "p"}, ArtifactsDir: t.TempDir(), Logf: t.Logf}
	for _, name := range []string{"main", "migration-1", "migration-2"} {
		if _, err := s.Up(context.Background(), name); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := strings.Join(s.Secrets(), ","), "secret-of-cluster-1,secret-of-cluster-2,secret-of-cluster-3"; got != want {
		t.Errorf("expected the secrets %s, actual %s", want, got)
	}
}

// The flags' help lists the values valid now, read from the registry: each
// provider, its pinned CCM versions and its config's keys, and only the
// runtimes the door offers.
func TestHelpReadsTheRegistry(t *testing.T) {
	o := New()
	o.Runtimes = []string{Local}
	fs := pflag.NewFlagSet("door", pflag.ContinueOnError)
	o.Bind(fs)
	usage := func(name string) string { return fs.Lookup(name).Usage }
	for _, name := range providers.Names() {
		p, err := providers.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(usage(FlagProvider), name) {
			t.Errorf("--%s's help lacks provider %s: %s", FlagProvider, name, usage(FlagProvider))
		}
		if vs := p.CCM.Choices(); len(vs) > 0 && !strings.Contains(usage(FlagCCMVersion), name+": "+strings.Join(vs, ", ")) {
			t.Errorf("--%s's help lacks %s's versions %v: %s", FlagCCMVersion, name, vs, usage(FlagCCMVersion))
		}
		if keys := providers.ConfigKeys(p.Config); len(keys) > 0 && !strings.Contains(usage(FlagProviderConfig), name+": "+strings.Join(keys, ", ")) {
			t.Errorf("--%s's help lacks %s's keys %v: %s", FlagProviderConfig, name, keys, usage(FlagProviderConfig))
		}
	}
	if u := usage(FlagCluster); !strings.Contains(u, Local+" (") || strings.Contains(u, Kind+" (") || strings.Contains(u, Existing+" (") {
		t.Errorf("--%s's help offers other runtimes than the door's: %s", FlagCluster, u)
	}
}
