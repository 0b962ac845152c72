package providers_test

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/providers/fake"
	"sigs.k8s.io/ccm-harness/providers/vsphere"
)

// TestBuiltinProfilesAsFiles loads the built-in profiles written as
// profile files: they must describe the same provider.
func TestBuiltinProfilesAsFiles(t *testing.T) {
	for _, name := range []string{fake.Name, vsphere.Name} {
		data, err := os.ReadFile(name + "/profile.yaml")
		if err != nil {
			t.Fatal(err)
		}
		got, cfg, err := providers.Resolve(providers.External, data, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := providers.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != want.Name || got.CloudProvider != want.CloudProvider || got.ProviderIDScheme != want.ProviderIDScheme ||
			got.Capabilities.String() != want.Capabilities.String() || got.CCM.String() != want.CCM.String() ||
			got.InTreeKCM.String() != want.InTreeKCM.String() || strings.Join(got.CCMArgs, " ") != strings.Join(want.CCMArgs, " ") {
			t.Errorf("%s as a file: %+v\nbuilt in: %+v", name, got, want)
		}
		if _, err := got.NewCloud(cfg); err != nil {
			t.Errorf("%s: its cloud config: %v", name, err)
		}
	}
}

func TestProfileFileBadInput(t *testing.T) {
	dir := t.TempDir()
	workloads := map[string]string{
		"nocontainer.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ccm, namespace: kube-system}\n",
		"twocontainers.yaml": "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ccm, namespace: kube-system}\n" +
			"spec: {template: {spec: {containers: [{name: a, image: img-a}, {name: b, image: img-b}]}}}\n",
		"hostpath.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: ccm, namespace: kube-system}\n" +
			"spec: {containers: [{name: ccm, image: x, args: [--cloud-config=/etc/kubernetes/cloud.conf], volumeMounts: [{name: k8s, mountPath: /etc/kubernetes}]}], volumes: [{name: k8s, hostPath: {path: /etc/kubernetes}}]}\n",
		"unmounted.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: ccm, namespace: kube-system}\n" +
			"spec: {containers: [{name: ccm, image: x, env: [{name: CFG, value: /etc/config/cloud.conf}], args: [--cloud-config=$(CFG)]}]}\n",
	}
	for f, data := range workloads {
		if err := os.WriteFile(dir+"/"+f, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(dir+"/bad.yaml", []byte("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n---\nkind: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ file, want string }{
		{"", "provider external: no profile file given"},
		{"cloud: fake\nccm: {builtin: true}\ncapabilities: [instances]\nextra: 1\n", `unknown field "extra"`},
		{"ccm: {builtin: true}\n", "cloud: not set (name a built-in cloud: fake, vsphere, or none)"},
		{"cloud: aws\nccm: {builtin: true}\n", `cloud: unknown provider "aws"`},
		{"cloud: fake\nccm: {builtin: true, image: x}\n", "ccm: give exactly one of image, binary and builtin"},
		{"cloud: fake\nccm: {binary: /nonexistent}\n", "ccm: binary /nonexistent is not an executable file"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar', version: v1}\n", "ccm: version is for builtin"},
		{"cloud: none\nccm: {image: 'docker-archive:x.tar'}\n", "ccm: cloudProvider: not set"},
		{"cloud: fake\nccm: {builtin: true}\ncapabilities: [teleport]\n", `capabilities: "teleport" is none of`},
		{"cloud: none\nccm: {image: 'docker-archive:x.tar', cloudProvider: x}\ncapabilities: [instances]\n", "providerIDScheme: not set"},
		{"cloud: none\nccm: {image: 'docker-archive:x.tar', cloudProvider: x}\ncapabilities: [instances]\nproviderIDScheme: x\n", "instances with cloud: none"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\nmanifests: bad.yaml\n", "manifests " + dir + "/bad.yaml: document 2 does not parse"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\nmanifests: missing\n", "manifests " + dir + "/missing: stat"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\nmanifests: nocontainer.yaml\n", "manifests " + dir + "/nocontainer.yaml: Deployment kube-system/ccm has no container to run the CCM's image in"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\nmanifests: twocontainers.yaml\n", "DaemonSet kube-system/ccm has containers a, b and not one alone named *cloud-controller-manager*"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\nmanifests: hostpath.yaml\n", "reads --cloud-config=/etc/kubernetes/cloud.conf from volume k8s, which is neither a ConfigMap nor a Secret"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\nmanifests: unmounted.yaml\n", "its container ccm reads --cloud-config=/etc/config/cloud.conf from none of its volumes"},
	} {
		_, _, err := providers.Resolve(providers.External, []byte(tt.file), dir)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "provider external: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want an error containing %q", tt.file, err, tt.want)
		}
	}
	// An image CCM against fakecloud: the cloud's provider name and scheme.
	// Its relative archive path is taken from the file's folder.
	p, _, err := providers.Resolve(providers.External, []byte("name: mine\ncloud: fake\nccm: {image: 'docker-archive:ccm.tar', args: [--v=4]}\ncapabilities: [instances]\n"), "/profiles")
	if err != nil || p.Name != "mine" || p.CCM.Image != "docker-archive:/profiles/ccm.tar" || p.CloudProvider != "fakecloud" || p.InTreeKCM.Name != "" || p.CCMArgs[len(p.CCMArgs)-1] != "--v=4" {
		t.Errorf("image profile: %+v, %v", p, err)
	}
}

// TestProfileFileRelativePaths: a profile file's relative paths are its
// folder's, wherever the harness runs from; absolute paths and registry
// references are kept.
func TestProfileFileRelativePaths(t *testing.T) {
	for _, tt := range []struct{ image, want string }{
		{"oci:layout", "oci:/p/layout"},
		{"docker-archive:/abs/ccm.tar", "docker-archive:/abs/ccm.tar"},
		{"registry.example/ccm:v1", "registry.example/ccm:v1"},
	} {
		p, _, err := providers.Resolve(providers.External, []byte("cloud: fake\nccm: {image: '"+tt.image+"', cloudConfig: cloud.conf}\n"), "/p")
		if err != nil || p.CCM.Image != tt.want || p.CCMConfigFile != "/p/cloud.conf" {
			t.Errorf("image %s: %q, cloud config %q, %v; want %q and /p/cloud.conf", tt.image, p.CCM.Image, p.CCMConfigFile, err, tt.want)
		}
	}
}
