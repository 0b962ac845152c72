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
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	vsession "github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/process"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/specs"
)

// TestCloud runs the real vcsim as the runtime does and drives it through
// the provider: the topology, the VMs behind nodes, their power, what the
// inspector reports, and the faults.
func TestCloud(t *testing.T) {
	// A first run builds vcsim (minutes on a cold cache, beside other
	// packages' tests): that is not what the deadline below is for.
	src := &binaries.Source{Logf: t.Logf}
	if _, err := src.Paths(context.Background(), Profile().CloudBinaries...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := "credentials: inline\nregion: r1\nzones: [za, zb]\nipFamilies: [ipv4, ipv6]\nfaults:\n  renameTags: {za: zz}\n  noGuestHostname: [n3]\n"
	cloud, err := Profile().NewCloud([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	var procs process.Group
	t.Cleanup(func() { procs.StopAll(5 * time.Second) })
	env := providers.CloudEnv{Dir: t.TempDir(), AdminDir: t.TempDir(), LogDir: t.TempDir(), Processes: &procs, Binaries: src}
	if err := cloud.Start(ctx, env); err != nil {
		t.Fatal(err)
	}
	// Another process's view (a parallel suite's): it joins the same
	// vcsim, and its VMs take the next places, not the first again.
	joined, err := Profile().NewCloud([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if err := joined.(providers.Attacher).Attach(ctx, env); err != nil {
		t.Fatalf("attach: %v", err)
	}

	var created []providers.Instance
	for _, name := range []string{"n1", "n2", "n3"} {
		vms := cloud.Instances()
		if name == "n3" {
			vms = joined.Instances()
		}
		inst, err := vms.Create(ctx, name)
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		created = append(created, inst)
	}
	want := []struct {
		zone, instanceType, ip, ip6 string
		hostname                    bool
	}{
		{"za", "vsphere-vm.cpu-2.mem-4gb.os-ubuntu", "198.18.0.1", "2001:db8::1", true},
		{"zb", "vsphere-vm.cpu-4.mem-8gb.os-centos7", "198.18.0.2", "2001:db8::2", true},
		{"za", "vsphere-vm.cpu-2.mem-4gb.os-ubuntu", "198.18.0.3", "2001:db8::3", false},
	}
	for i, inst := range created {
		w := want[i]
		if inst.Zone != w.zone || inst.Region != "r1" || inst.InstanceType != w.instanceType || !inst.Running {
			t.Errorf("%s: got zone %q region %q type %q running %t, want %q r1 %q true", inst.Name, inst.Zone, inst.Region, inst.InstanceType, inst.Running, w.zone, w.instanceType)
		}
		if !strings.HasPrefix(inst.ProviderID, "vsphere://") || len(inst.ProviderID) != len("vsphere://")+36 {
			t.Errorf("%s: provider ID %q is not vsphere://<BIOS UUID>", inst.Name, inst.ProviderID)
		}
		addrs := []v1.NodeAddress{
			{Type: v1.NodeInternalIP, Address: w.ip}, {Type: v1.NodeExternalIP, Address: w.ip},
			{Type: v1.NodeInternalIP, Address: w.ip6}, {Type: v1.NodeExternalIP, Address: w.ip6},
		}
		if w.hostname {
			addrs = append([]v1.NodeAddress{{Type: v1.NodeHostName, Address: inst.Name}}, addrs...)
		}
		if got, want := addressString(inst.Addresses), addressString(addrs); got != want {
			t.Errorf("%s: addresses %s, want %s", inst.Name, got, want)
		}
	}

	// The joined view stops and terminates what the first made.
	vms, insp := joined.Instances(), cloud.Inspector()
	if err := vms.Stop(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if inst, err := insp.Instance(ctx, "n1"); err != nil || inst.Running {
		t.Errorf("n1 after Stop: running %t, err %v; want stopped", inst.Running, err)
	}
	if err := vms.Start(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if inst, err := insp.Instance(ctx, "n1"); err != nil || !inst.Running {
		t.Errorf("n1 after Start: running %t, err %v; want running", inst.Running, err)
	}
	if err := vms.Terminate(ctx, "n2"); err != nil {
		t.Fatal(err)
	}
	if _, err := insp.Instance(ctx, "n2"); err == nil || !strings.Contains(err.Error(), "n2") {
		t.Errorf("n2 after Terminate: err %v, want one naming the VM", err)
	}
	if err := vms.Terminate(ctx, "n2"); err != nil {
		t.Errorf("terminating a terminated VM: %v, want nil", err)
	}

	// The CCM's endpoint renames za; the inspector's does not.
	c := cloud.(*Cloud)
	ccmView, err := connect(ctx, c.url(c.ccmPort), c.caFile, url.UserPassword(c.user, c.password), c.config)
	if err != nil {
		t.Fatal(err)
	}
	if err := ccmView.load(ctx); err != nil {
		t.Fatal(err)
	}
	if inst, err := ccmView.Instance(ctx, "n1"); err != nil || inst.Zone != "zz" {
		t.Errorf("n1 through the CCM's endpoint: zone %q, err %v; want the renamed zz", inst.Zone, err)
	}

	// Each port serves its own user: the CCM cannot reach the admin port,
	// where no fault applies, with its credentials or its session; each
	// is refused as vCenter refuses wrong ones.
	if _, err := connect(ctx, c.url(c.adminPort), c.caFile, url.UserPassword(c.user, c.password), c.config); err == nil || !strings.Contains(err.Error(), "Login failure") {
		t.Errorf("the admin port with the CCM's credentials: expected a login failure, actual %v", err)
	}
	if _, err := connect(ctx, c.url(c.ccmPort), c.caFile, url.UserPassword(c.user, "not-"+c.password), c.config); err == nil || !strings.Contains(err.Error(), "Login failure") {
		t.Errorf("the CCM's port with a wrong password: expected a login failure, actual %v", err)
	}
	if _, err := connect(ctx, c.url(c.ccmPort), c.caFile, c.admin, c.config); err == nil || !strings.Contains(err.Error(), "Login failure") {
		t.Errorf("the CCM's port with the admin's credentials: expected a login failure, actual %v", err)
	}
	ccmURL, _ := url.Parse(c.url(c.ccmPort))
	var session *http.Cookie
	for _, k := range ccmView.vim.Client.Jar.Cookies(ccmURL) {
		if k.Name == "vmware_soap_session" {
			session = k
		}
	}
	if session == nil {
		t.Fatalf("the CCM's session has no vmware_soap_session cookie")
	}
	for port, want := range map[int]bool{c.ccmPort: true, c.adminPort: false} {
		u, _ := url.Parse(c.url(port))
		sc := soap.NewClient(u, false)
		if err := sc.SetRootCAs(c.caFile); err != nil {
			t.Fatal(err)
		}
		sc.Jar.SetCookies(u, []*http.Cookie{{Name: session.Name, Value: session.Value}})
		vc, err := vim25.NewClient(ctx, sc)
		if err != nil {
			t.Fatal(err)
		}
		us, err := vsession.NewManager(vc).UserSession(ctx)
		if err != nil || (us != nil) != want {
			t.Errorf("the CCM's session at port %d: expected logged in %t, actual session %v, err %v", port, want, us, err)
		}
	}

	var ccm struct {
		Global  map[string]any
		Vcenter map[string]map[string]any
		Labels  map[string]string
	}
	data, err := cloud.CCMConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &ccm); err != nil {
		t.Fatal(err)
	}
	if ccm.Global["port"] != float64(c.ccmPort) || ccm.Global["user"] != c.user || ccm.Global["password"] != c.password || ccm.Global["caFile"] != c.caFile {
		t.Errorf("cloud config global section %v: want the CCM's port %d, inline credentials and the CA", ccm.Global, c.ccmPort)
	}
	if fam, _ := ccm.Global["ipFamily"].([]any); len(fam) != 2 || fam[0] != "ipv4" || fam[1] != "ipv6" {
		t.Errorf("cloud config ipFamily %v, want [ipv4 ipv6]", ccm.Global["ipFamily"])
	}
	if env := c.CCMEnv(); len(env) != 1 || env[0] != "ENABLE_ALPHA_DUAL_STACK=true" {
		t.Errorf("CCM environment %v: the vSphere CCM refuses two IP families without ENABLE_ALPHA_DUAL_STACK", env)
	}
	if ccm.Vcenter[server]["server"] != server || ccm.Labels["zone"] != zoneCategory || ccm.Labels["region"] != regionCategory {
		t.Errorf("cloud config %s: want vCenter %s and the zone and region categories", data, server)
	}

	reachedView(ctx, t, c)
}

// reachedView reaches c's vcsim as a vCenter the harness does not run,
// through govc's environment, with the harness's admin user as the
// inspector's own: it reports what the harness's view does and powers
// VMs, and each wrong setting is one line naming the fix.
func reachedView(ctx context.Context, t *testing.T, c *Cloud) {
	adminPassword, _ := c.admin.Password()
	env := map[string]string{
		"GOVC_URL": c.url(c.adminPort), "GOVC_USERNAME": c.admin.Username(), "GOVC_PASSWORD": adminPassword,
		"GOVC_TLS_CA_CERTS": c.caFile, "GOVC_DATACENTER": datacenter, "GOVC_INSECURE": "",
	}
	reach := func(change map[string]string, config string) (providers.Cloud, error) {
		for k, v := range env {
			t.Setenv(k, v)
		}
		for k, v := range change {
			t.Setenv(k, v)
		}
		cloud, err := Profile().NewCloud([]byte(config))
		if err != nil {
			t.Fatal(err)
		}
		return cloud, cloud.Start(ctx, providers.CloudEnv{})
	}
	cloud, err := reach(nil, "reach: {}\nipFamilies: [ipv4, ipv6]")
	if err != nil {
		t.Fatalf("reaching vcsim as govc's environment says: %v", err)
	}
	if where := cloud.(providers.Reached).Where(); !strings.Contains(where, "datacenter DC0, as "+adminUser) {
		t.Errorf("where: %q", where)
	}
	ours, _ := c.Inspector().Instance(ctx, "n1")
	theirs, err := cloud.Inspector().Instance(ctx, "n1")
	if err != nil || addressString(theirs.Addresses) != addressString(ours.Addresses) || theirs.Zone != ours.Zone ||
		theirs.Region != ours.Region || theirs.ProviderID != ours.ProviderID || theirs.InstanceType != ours.InstanceType {
		t.Errorf("n1 reached: %+v, %v; the harness's view: %+v", theirs, err, ours)
	}
	power := cloud.(providers.Powerer).Power()
	if err := power.Stop(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if inst, err := c.Inspector().Instance(ctx, "n1"); err != nil || inst.Running {
		t.Errorf("n1 after a reached Stop: running %t, err %v", inst.Running, err)
	}
	if err := power.Start(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if cloud.Instances() != nil {
		t.Errorf("a reached vCenter makes VMs: the harness makes none where it does not own the cloud")
	}
	for _, bad := range []struct {
		change map[string]string
		config string
		want   string
	}{
		{map[string]string{"GOVC_URL": ""}, "reach: {}", "vsphere: no vCenter for the harness's inspector: set GOVC_URL"},
		{map[string]string{"GOVC_USERNAME": ""}, "reach: {}", "vsphere: no user for the harness's inspector"},
		{map[string]string{"GOVC_PASSWORD": "wrong"}, "reach: {}", "rejects the inspector's credentials (user " + adminUser + "): log in to the vSphere API: ServerFaultCode: Login failure; fix GOVC_USERNAME and GOVC_PASSWORD"},
		{map[string]string{"GOVC_TLS_CA_CERTS": ""}, "reach: {}", "cannot reach vCenter " + c.url(c.adminPort) + ": "},
		{map[string]string{"GOVC_INSECURE": "maybe"}, "reach: {}", `GOVC_INSECURE "maybe" is not true or false`},
		{map[string]string{"GOVC_DATACENTER": ""}, "reach: {}", "no datacenter for the reached vCenter: set GOVC_DATACENTER"},
		{map[string]string{"GOVC_DATACENTER": "DC9"}, "reach: {}", "datacenter 'DC9' not found"},
		{nil, "reach: {zoneCategory: k8s-zones}", "tag category k8s-zones:"},
	} {
		_, err := reach(bad.change, bad.config)
		if err == nil || !strings.Contains(err.Error(), bad.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v %q: got %v, want one line containing %q", bad.change, bad.config, err, bad.want)
		}
	}
	// With no CA and GOVC_INSECURE, vcsim's certificate is not checked.
	if _, err := reach(map[string]string{"GOVC_TLS_CA_CERTS": "", "GOVC_INSECURE": "true"}, "reach: {}"); err != nil {
		t.Errorf("GOVC_INSECURE=true: %v", err)
	}
}

func TestConfig(t *testing.T) {
	for _, tt := range []struct{ config, err string }{
		{"", ""},
		{"zones: [a, b, c]\ncredentials: secret", ""},
		{"credentials: file", `credentials: "file" is neither "secret" nor "inline"`},
		{"zones: [a, a]", `zones: "a" is empty or named twice`},
		{"zones: [a, '']", `zones: "" is empty or named twice`},
		{"zone: a", `unknown field "zone"`},
		{"ipFamilies: [ipv6, ipv4]", ""},
		{"ipFamilies: [ipv4, ipv4]", `ipFamilies: "ipv4" is not "ipv4" or "ipv6", or is named twice`},
		{"ipFamilies: [IPv6]", `ipFamilies: "IPv6" is not`},
		{"reach: {datacenter: DC0}\nipFamilies: [ipv6]", ""},
		{"reach: {}\nzones: [a]", "with reach, give only reach and ipFamilies"},
		{"reach: {}\nipFamilies: [ipv5]", `ipFamilies: "ipv5" is not`},
	} {
		_, err := Profile().NewCloud([]byte(tt.config))
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("config %q: %v", tt.config, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "vsphere provider config: ")):
			t.Errorf("config %q: error %v, want one containing %q", tt.config, err, tt.err)
		}
	}
}

// TestDualStackClaim: node-dual-stack is claimed with guests, and a CCM,
// of both families, and not otherwise.
func TestDualStackClaim(t *testing.T) {
	for config, want := range map[string]bool{"": false, "ipFamilies: [ipv6]": false, "ipFamilies: [ipv6, ipv4]": true, "reach: {}\nipFamilies: [ipv4, ipv6]": false} {
		cloud, err := Profile().NewCloud([]byte(config))
		if err != nil {
			t.Fatal(err)
		}
		if got := Profile().FeaturesOf(cloud)[specs.NodeDualStack]; got != want {
			t.Errorf("config %q: claims node-dual-stack: %t, want %t", config, got, want)
		}
	}
}

func TestGuestIP(t *testing.T) {
	for n, want := range map[int]string{0: "198.18.0.1", 255: "198.18.1.0", 65535: "198.19.0.0", 131070: "198.19.255.255"} {
		if got := guestIP(n); got != want {
			t.Errorf("guestIP(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestGuestIPv6(t *testing.T) {
	for n, want := range map[int]string{0: "2001:db8::1", 255: "2001:db8::100", 65535: "2001:db8::1:0"} {
		if got := guestIPv6(n); got != want {
			t.Errorf("guestIPv6(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestGuestUUID(t *testing.T) {
	// The example of the vSphere CCM's ConvertK8sUUIDtoNormal.
	if got := guestUUID("422e4956-ad22-1139-6d72-59cc8f26bc90"); got != "56492e42-22ad-3911-6d72-59cc8f26bc90" {
		t.Errorf("guestUUID = %s", got)
	}
}

func addressString(addrs []v1.NodeAddress) string {
	var s []string
	for _, a := range addrs {
		s = append(s, string(a.Type)+"="+a.Address)
	}
	return "[" + strings.Join(s, " ") + "]"
}
