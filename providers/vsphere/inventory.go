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
	"net"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	v1 "k8s.io/api/core/v1"

	"sigs.k8s.io/ccm-harness/internal/filelock"
	"sigs.k8s.io/ccm-harness/providers"
)

// inventory is the harness's administrator session with vcsim: it makes
// the topology and the VMs behind nodes, and reports what vCenter holds.
type inventory struct {
	config Config
	vim    *vim25.Client
	tags   *tags.Manager
	finder *find.Finder
	// names are the datacenter and the tag categories of regions and
	// zones: the harness's own in vcsim, a reached vCenter's as its CCM's
	// config names them.
	names names

	dc                           *object.Datacenter
	vmFolder                     *object.Folder
	datastore                    string
	zoneCategory, regionCategory string

	// zones[i] is where VMs of config.Zones[i] go.
	zones []placement
	// counter is the file that counts the VMs made, whichever process
	// made them (a parallel suite's); the count picks each one's zone,
	// host, size and address.
	counter string
}

type names struct{ datacenter, region, zone string }

type placement struct {
	pool  *object.ResourcePool
	hosts []*object.HostSystem
}

// sizes are handed out in turn, so that a CCM reporting one node's
// instance type for another is caught.
var sizes = []struct {
	cpus     int32
	memoryMB int64
	guestID  string
}{
	{2, 4096, "ubuntu64Guest"},
	{4, 8192, "centos7_64Guest"},
}

// guestOS is the vSphere CCM's short name of each guest ID the harness
// uses: its instance types are vsphere-vm.cpu-<n>.mem-<GiB>gb.os-<short>.
var guestOS = map[string]string{"ubuntu64Guest": "ubuntu", "centos7_64Guest": "centos7"}

// guestIP is the address of the n-th VM, from 198.18.0.0/15 (RFC 2544,
// benchmarking, never routed). Not loopback, unlike every other address the
// harness makes up, because the vSphere CCM drops loopback guest addresses
// (ErrOnLocalOnlyIPAddr). They are only data in API objects: the vSphere
// profile has no load balancers or routes, so nothing sends them a packet.
func guestIP(n int) string {
	k := n + 1
	return net.IPv4(198, byte(18+k>>16), byte(k>>8), byte(k)).String()
}

// guestIPv6 is the n-th VM's IPv6 address, from 2001:db8::/32 (RFC 3849,
// documentation), for the same reason.
func guestIPv6(n int) string {
	ip := make(net.IP, net.IPv6len)
	copy(ip, net.ParseIP("2001:db8::"))
	k := n + 1
	ip[13], ip[14], ip[15] = byte(k>>16), byte(k>>8), byte(k)
	return ip.String()
}

func familyOf(addr string) string {
	ip := net.ParseIP(addr)
	switch {
	case ip == nil:
		return ""
	case ip.To4() != nil:
		return ipv4
	default:
		return ipv6
	}
}

// connect logs in to the SOAP and the tagging APIs, verifying the server's
// certificate with caFile.
func connect(ctx context.Context, endpoint, caFile string, user *url.Userinfo, config Config) (*inventory, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	return dial(ctx, u, caFile, false, user, config)
}

// dial logs in to the SOAP and the tagging APIs at u, verifying the
// server's certificate with caFile if given, or not at all if insecure.
func dial(ctx context.Context, u *url.URL, caFile string, insecure bool, user *url.Userinfo, config Config) (*inventory, error) {
	sc := soap.NewClient(u, insecure)
	if caFile != "" {
		if err := sc.SetRootCAs(caFile); err != nil {
			return nil, err
		}
	}
	vc, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return nil, err
	}
	if err := session.NewManager(vc).Login(ctx, user); err != nil {
		return nil, &loginError{api: "vSphere", err: err}
	}
	rc := rest.NewClient(vc)
	if err := rc.Login(ctx, user); err != nil {
		return nil, &loginError{api: "tagging", err: err}
	}
	return &inventory{config: config, vim: vc, tags: tags.NewManager(rc), finder: find.NewFinder(vc),
		names: names{datacenter: datacenter, region: regionCategory, zone: zoneCategory}}, nil
}

// loginError is a server that answered, and refused the credentials.
type loginError struct {
	api string
	err error
}

func (e *loginError) Error() string { return "log in to the " + e.api + " API: " + e.err.Error() }
func (e *loginError) Unwrap() error { return e.err }

// shape tags the datacenter with the region and each cluster with its zone,
// as an administrator prepares vCenter for the CCM's zone support.
func (i *inventory) shape(ctx context.Context) error {
	for _, cat := range []string{regionCategory, zoneCategory} {
		if _, err := i.tags.CreateCategory(ctx, &tags.Category{Name: cat, Cardinality: "SINGLE", AssociableTypes: []string{}}); err != nil {
			return fmt.Errorf("create tag category %s: %w", cat, err)
		}
	}
	dc, err := i.finder.Datacenter(ctx, datacenter)
	if err != nil {
		return err
	}
	clusters, err := i.clusters(ctx, dc)
	if err != nil {
		return err
	}
	if err := i.tag(ctx, regionCategory, i.config.Region, dc); err != nil {
		return err
	}
	for n, cl := range clusters {
		if err := i.tag(ctx, zoneCategory, i.config.Zones[n], cl); err != nil {
			return err
		}
	}
	return i.load(ctx)
}

// load finds what the harness places VMs in and reads tags of.
func (i *inventory) load(ctx context.Context) error {
	dc, err := i.find(ctx)
	if err != nil {
		return err
	}
	folders, err := dc.Folders(ctx)
	if err != nil {
		return err
	}
	i.vmFolder = folders.VmFolder
	ds, err := i.finder.DefaultDatastore(ctx)
	if err != nil {
		return err
	}
	i.datastore = ds.Name()
	clusters, err := i.clusters(ctx, dc)
	if err != nil {
		return err
	}
	for _, cl := range clusters {
		pool, err := cl.ResourcePool(ctx)
		if err != nil {
			return err
		}
		hosts, err := cl.Hosts(ctx)
		if err != nil {
			return err
		}
		if len(hosts) == 0 {
			return fmt.Errorf("cluster %s has no hosts", cl.Name())
		}
		i.zones = append(i.zones, placement{pool: pool, hosts: hosts})
	}
	return nil
}

// find finds the datacenter and the tag categories of regions and zones:
// all the inspector needs.
func (i *inventory) find(ctx context.Context) (*object.Datacenter, error) {
	dc, err := i.finder.Datacenter(ctx, i.names.datacenter)
	if err != nil {
		return nil, err
	}
	i.finder.SetDatacenter(dc)
	for _, cat := range []struct {
		name string
		id   *string
	}{{i.names.region, &i.regionCategory}, {i.names.zone, &i.zoneCategory}} {
		c, err := i.tags.GetCategory(ctx, cat.name)
		if err != nil {
			return nil, fmt.Errorf("tag category %s: %w", cat.name, err)
		}
		*cat.id = c.ID
	}
	return dc, nil
}

// clusters are the datacenter's clusters in name order, one per zone.
func (i *inventory) clusters(ctx context.Context, dc *object.Datacenter) ([]*object.ClusterComputeResource, error) {
	i.finder.SetDatacenter(dc)
	clusters, err := i.finder.ClusterComputeResourceList(ctx, "*")
	if err != nil {
		return nil, err
	}
	if len(clusters) != len(i.config.Zones) {
		return nil, fmt.Errorf("%d clusters for %d zones", len(clusters), len(i.config.Zones))
	}
	sort.Slice(clusters, func(a, b int) bool { return clusters[a].Name() < clusters[b].Name() })
	return clusters, nil
}

func (i *inventory) tag(ctx context.Context, category, name string, on mo.Reference) error {
	cat, err := i.tags.GetCategory(ctx, category)
	if err != nil {
		return err
	}
	id, err := i.tags.CreateTag(ctx, &tags.Tag{Name: name, CategoryID: cat.ID})
	if err != nil {
		return fmt.Errorf("create tag %s: %w", name, err)
	}
	if err := i.tags.AttachTag(ctx, id, on); err != nil {
		return fmt.Errorf("attach tag %s to %s: %w", name, on.Reference(), err)
	}
	return nil
}

// next counts a VM made: the VMs before it.
func (i *inventory) next(ctx context.Context) (int, error) {
	unlock, err := filelock.Lock(ctx, i.counter+".lock", "the count of vcsim's VMs")
	if err != nil {
		return 0, err
	}
	defer unlock()
	n := 0
	if b, err := os.ReadFile(i.counter); err == nil {
		if n, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
			return 0, fmt.Errorf("vcsim's VM count %s: %w", i.counter, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	return n, os.WriteFile(i.counter, []byte(strconv.Itoa(n+1)), 0o600)
}

// Create makes the VM of a node, named after it, with the guest hostname
// and IP VMware Tools would report (vcsim takes them as SET.guest.*
// extraConfig keys), and powers it on.
func (i *inventory) Create(ctx context.Context, name string) (providers.Instance, error) {
	n, err := i.next(ctx)
	if err != nil {
		return providers.Instance{}, err
	}
	zone := i.zones[n%len(i.zones)]
	host := zone.hosts[n/len(i.zones)%len(zone.hosts)]
	size := sizes[n%len(sizes)]

	network, err := i.finder.Network(ctx, "VM Network")
	if err != nil {
		return providers.Instance{}, err
	}
	backing, err := network.EthernetCardBackingInfo(ctx)
	if err != nil {
		return providers.Instance{}, err
	}
	nic, err := object.EthernetCardTypes().CreateEthernetCard("vmxnet3", backing)
	if err != nil {
		return providers.Instance{}, err
	}
	spec := types.VirtualMachineConfigSpec{
		Name:     name,
		GuestId:  size.guestID,
		NumCPUs:  size.cpus,
		MemoryMB: size.memoryMB,
		Uuid:     uuid.NewString(), // the BIOS UUID: the CCM's provider ID
		Files:    &types.VirtualMachineFileInfo{VmPathName: "[" + i.datastore + "]"},
		DeviceChange: []types.BaseVirtualDeviceConfigSpec{&types.VirtualDeviceConfigSpec{
			Operation: types.VirtualDeviceConfigSpecOperationAdd,
			Device:    nic,
		}},
	}
	task, err := i.vmFolder.CreateVM(ctx, spec, zone.pool, host)
	if err != nil {
		return providers.Instance{}, err
	}
	res, err := task.WaitForResult(ctx)
	if err != nil {
		return providers.Instance{}, fmt.Errorf("create VM %s: %w", name, err)
	}
	vm := object.NewVirtualMachine(i.vim, res.Result.(types.ManagedObjectReference))

	guest, err := i.guestData(ctx, vm, n)
	if err != nil {
		return providers.Instance{}, fmt.Errorf("VM %s: %w", name, err)
	}
	if !slices.Contains(i.config.Faults.NoGuestHostname, name) {
		guest = append(guest, &types.OptionValue{Key: "SET.guest.hostName", Value: name})
	}
	if err := wait(ctx, "set the guest data of VM "+name, func() (*object.Task, error) {
		return vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{ExtraConfig: guest})
	}); err != nil {
		return providers.Instance{}, err
	}
	if err := wait(ctx, "power on VM "+name, func() (*object.Task, error) { return vm.PowerOn(ctx) }); err != nil {
		return providers.Instance{}, err
	}
	inst, err := i.Instance(ctx, name)
	if err != nil {
		return providers.Instance{}, err
	}
	// Otherwise a family vcsim dropped would pass [node-address] unseen.
	for _, f := range i.config.IPFamilies {
		if !slices.ContainsFunc(inst.Addresses, func(a v1.NodeAddress) bool { return familyOf(a.Address) == f }) {
			return providers.Instance{}, fmt.Errorf("VM %s: the guest reports no %s address (%s); vcsim did not take the guest data", name, f, formatAddresses(inst.Addresses))
		}
	}
	return inst, nil
}

// guestData are the extraConfig keys that make vcsim report the n-th VM's
// guest addresses as VMware Tools would: guest.ipAddress, the primary one,
// and every asked family's address on the VM's NIC in guest.net.
func (i *inventory) guestData(ctx context.Context, vm *object.VirtualMachine, n int) ([]types.BaseOptionValue, error) {
	var m mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"guest.net"}, &m); err != nil {
		return nil, err
	}
	if m.Guest == nil || len(m.Guest.Net) == 0 {
		return nil, errors.New("vcsim made no guest NIC for the VM's network card")
	}
	var ips []string
	for _, f := range i.config.IPFamilies {
		if f == ipv6 {
			ips = append(ips, guestIPv6(n))
		} else {
			ips = append(ips, guestIP(n))
		}
	}
	nics := m.Guest.Net
	nics[0].IpAddress = ips
	return []types.BaseOptionValue{
		&types.OptionValue{Key: "SET.guest.ipAddress", Value: ips[0]},
		// After guest.ipAddress, which sets the first NIC's addresses to
		// its one.
		&types.OptionValue{Key: "SET.guest.net", Value: types.ArrayOfGuestNicInfo{GuestNicInfo: nics}},
	}, nil
}

// Stop powers the VM off.
func (i *inventory) Stop(ctx context.Context, name string) error {
	return i.power(ctx, name, types.VirtualMachinePowerStatePoweredOff)
}

// Start powers the VM on.
func (i *inventory) Start(ctx context.Context, name string) error {
	return i.power(ctx, name, types.VirtualMachinePowerStatePoweredOn)
}

func (i *inventory) power(ctx context.Context, name string, want types.VirtualMachinePowerState) error {
	vm, err := i.vm(ctx, name)
	if err != nil {
		return err
	}
	state, err := vm.PowerState(ctx)
	if err != nil || state == want {
		return err
	}
	return wait(ctx, fmt.Sprintf("power VM %s %s", name, want), func() (*object.Task, error) {
		if want == types.VirtualMachinePowerStatePoweredOn {
			return vm.PowerOn(ctx)
		}
		return vm.PowerOff(ctx)
	})
}

// Terminate destroys the VM; one already gone is fine, so cleanup after
// a spec that terminated it succeeds.
func (i *inventory) Terminate(ctx context.Context, name string) error {
	vm, err := i.vm(ctx, name)
	var nf *find.NotFoundError
	if errors.As(err, &nf) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := i.power(ctx, name, types.VirtualMachinePowerStatePoweredOff); err != nil {
		return err
	}
	return wait(ctx, "destroy VM "+name, func() (*object.Task, error) { return vm.Destroy(ctx) })
}

// Instance reports what vCenter holds about the node's VM: the provider ID
// from its BIOS UUID, the instance type from its hardware and guest OS, the
// addresses its guest reports, its power state, and the zone and region
// tags on its host's ancestors.
func (i *inventory) Instance(ctx context.Context, name string) (providers.Instance, error) {
	vm, err := i.vm(ctx, name)
	if err != nil {
		return providers.Instance{}, err
	}
	var m mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"config.uuid", "summary.config", "guest", "runtime"}, &m); err != nil {
		return providers.Instance{}, fmt.Errorf("VM %s: %w", name, err)
	}
	inst := providers.Instance{
		Name:         name,
		ProviderID:   "vsphere://" + m.Config.Uuid,
		InstanceType: instanceType(m.Summary.Config),
		Addresses:    addresses(m.Guest, i.config.IPFamilies),
		Running:      m.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn,
		SystemUUID:   guestUUID(m.Config.Uuid),
	}
	if m.Runtime.Host == nil {
		return providers.Instance{}, fmt.Errorf("VM %s has no host", name)
	}
	inst.Zone, inst.Region, err = i.topology(ctx, *m.Runtime.Host)
	if err != nil {
		return providers.Instance{}, fmt.Errorf("VM %s: %w", name, err)
	}
	return inst, nil
}

func (i *inventory) vm(ctx context.Context, name string) (*object.VirtualMachine, error) {
	vm, err := i.finder.VirtualMachine(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("VM %s: %w", name, err)
	}
	return vm, nil
}

// guestUUID is the BIOS UUID as the guest reads it from SMBIOS, and its
// kubelet reports: the first three fields byte-swapped (SMBIOS 2.6 stores
// them little-endian), 422e4956-ad22-1139-... reading 56492e42-22ad-3911-...
// The vSphere CCM swaps them back to find the VM of a registered node.
func guestUUID(bios string) string {
	if len(bios) != 36 {
		return bios
	}
	b := bios
	return b[6:8] + b[4:6] + b[2:4] + b[0:2] + "-" + b[11:13] + b[9:11] + "-" + b[16:18] + b[14:16] + b[18:]
}

func instanceType(c types.VirtualMachineConfigSummary) string {
	os, ok := guestOS[c.GuestId]
	if !ok {
		os = "unknown"
	}
	return fmt.Sprintf("vsphere-vm.cpu-%d.mem-%dgb.os-%s", c.NumCpu, c.MemorySizeMB/1024, os)
}

// addresses are a VM's node addresses as vSphere defines them when the
// CCM's config selects no subnets or networks: the guest hostname, and for
// each of the config's IP families, in order, the first such address of its
// NICs as both the internal and the external IP. Loopback and link-local
// addresses are no node's.
func addresses(g *types.GuestInfo, families []string) []v1.NodeAddress {
	if g == nil {
		return nil
	}
	var out []v1.NodeAddress
	if g.HostName != "" {
		out = append(out, v1.NodeAddress{Type: v1.NodeHostName, Address: g.HostName})
	}
	for _, f := range families {
		if a := firstAddress(g.Net, f); a != "" {
			out = append(out, v1.NodeAddress{Type: v1.NodeInternalIP, Address: a}, v1.NodeAddress{Type: v1.NodeExternalIP, Address: a})
		}
	}
	return out
}

func firstAddress(nics []types.GuestNicInfo, family string) string {
	for _, nic := range nics {
		if nic.DeviceConfigId == -1 { // not a virtual NIC of the VM
			continue
		}
		for _, a := range nic.IpAddress {
			ip := net.ParseIP(a)
			if ip == nil || familyOf(a) != family || ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() {
				continue
			}
			return a
		}
	}
	return ""
}

func formatAddresses(addrs []v1.NodeAddress) string {
	s := make([]string, len(addrs))
	for k, a := range addrs {
		s[k] = string(a.Type) + "=" + a.Address
	}
	return strings.Join(s, ", ")
}

// topology reads the zone and region tags of a host and its ancestors
// (cluster, folders, datacenter), the nearest first. The harness's
// inventory has exactly one of each on that path.
func (i *inventory) topology(ctx context.Context, host types.ManagedObjectReference) (zone, region string, err error) {
	chain, err := mo.Ancestors(ctx, i.vim, i.vim.ServiceContent.PropertyCollector, host)
	if err != nil {
		return "", "", err
	}
	for k := len(chain) - 1; k >= 0 && (zone == "" || region == ""); k-- {
		attached, err := i.tags.GetAttachedTags(ctx, chain[k].Self)
		if err != nil {
			return "", "", fmt.Errorf("tags of %s: %w", chain[k].Name, err)
		}
		for _, t := range attached {
			switch {
			case t.CategoryID == i.zoneCategory && zone == "":
				zone = t.Name
			case t.CategoryID == i.regionCategory && region == "":
				region = t.Name
			}
		}
	}
	if zone == "" || region == "" {
		return "", "", fmt.Errorf("host %s and its ancestors lack a %s or %s tag (zone %q, region %q)", host.Value, i.names.zone, i.names.region, zone, region)
	}
	return zone, region, nil
}

// wait runs a vSphere task to its end.
func wait(ctx context.Context, what string, start func() (*object.Task, error)) error {
	task, err := start()
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
