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

package inspect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	v1 "k8s.io/api/core/v1"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/internal/depcheck"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/providers/aws/inspect"
)

// The inspector is tested against fakecloud's emulated AWS: what the CCM
// makes through the SDK (as the AWS CCM calls it), the inspector must read
// back through the public API alone as fakecloud's own truth (its admin
// API, which the inspector never uses) says it is.

const (
	cloudToken, adminToken, inspectorToken = "cloud", "admin", "inspector"
	region                                 = "fake-region-1"
)

type cloud struct {
	t    *testing.T
	url  string
	insp *inspect.Cloud
	// inspCfg is insp's config, for a test's inspector of another.
	inspCfg  inspect.Config
	ec2      *ec2.Client
	elb      *elb.Client
	elbv2    *elbv2.Client
	fakeTrue func(path string, out any)
}

func newCloud(t *testing.T) *cloud {
	srv, err := server.New(server.Config{CloudToken: cloudToken, AdminToken: adminToken, InspectorToken: inspectorToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.ServeDNS(pc)
	t.Cleanup(func() { pc.Close() })
	ccm := credentials.NewStaticCredentialsProvider(api.AWSAccessKeyID, cloudToken, "")
	c := &cloud{t: t, url: hs.URL,
		ec2:   ec2.New(ec2.Options{Region: region, BaseEndpoint: aws.String(hs.URL + api.AWSPath + "ec2/"), Credentials: ccm}),
		elb:   elb.New(elb.Options{Region: region, BaseEndpoint: aws.String(hs.URL + api.AWSPath + "elb/"), Credentials: ccm}),
		elbv2: elbv2.New(elbv2.Options{Region: region, BaseEndpoint: aws.String(hs.URL + api.AWSPath + "elbv2/"), Credentials: ccm}),
		inspCfg: inspect.Config{Region: region,
			EC2: hs.URL + api.AWSPath + "ec2/", ELB: hs.URL + api.AWSPath + "elb/", ELBv2: hs.URL + api.AWSPath + "elbv2/",
			Credentials: credentials.NewStaticCredentialsProvider(api.AWSInspectorAccessKeyID, inspectorToken, ""),
			ClusterID:   api.AWSClusterID,
			Resolver: &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "udp", pc.LocalAddr().String())
			}}},
	}
	c.insp = inspect.New(c.inspCfg)
	c.fakeTrue = func(path string, out any) { c.admin(http.MethodGet, path, nil, out) }
	return c
}

// admin is fakecloud's admin API: the test's way to make machines and to
// know the truth, never the inspector's.
func (c *cloud) admin(method, path string, body, out any) {
	c.t.Helper()
	var rd bytes.Buffer
	if body != nil {
		_ = json.NewEncoder(&rd).Encode(body)
	}
	req, _ := http.NewRequest(method, c.url+path, &rd)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		c.t.Fatalf("%s %s: %s", method, path, resp.Status)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			c.t.Fatal(err)
		}
	}
}

func (c *cloud) create(name string, addrs ...api.Address) api.Instance {
	var inst api.Instance
	c.admin(http.MethodPost, api.AdminPathInstances, api.CreateInstanceRequest{Name: name, Addresses: addrs}, &inst)
	return inst
}

func TestInstance(t *testing.T) {
	c := newCloud(t)
	ctx := context.Background()
	a := c.create("node-a", api.Address{Type: api.AddressInternalIP, Address: "10.0.0.5"}, api.Address{Type: api.AddressInternalIP, Address: "fd00::5"},
		api.Address{Type: api.AddressInternalIP, Address: "10.0.0.6"}, api.Address{Type: api.AddressExternalIP, Address: "203.0.113.5"},
		api.Address{Type: api.AddressExternalIP, Address: "203.0.113.6"}, api.Address{Type: api.AddressHostname, Address: "node-a"})
	got, err := c.insp.Instance(ctx, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	want := providers.Instance{Name: "node-a", ProviderID: "aws:///" + a.Zone + "/" + a.ID, InstanceType: a.InstanceType, Zone: a.Zone, Region: region, Running: true,
		Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.5"}, {Type: v1.NodeInternalIP, Address: "10.0.0.6"},
			{Type: v1.NodeExternalIP, Address: "203.0.113.5"}, {Type: v1.NodeInternalDNS, Address: "node-a"}, {Type: v1.NodeHostName, Address: "node-a"}}}
	if !equalInstance(got, want) {
		t.Errorf("instance\n%+v, want\n%+v", got, want)
	}
	// With NodeIPFamilies ipv6, ipv4, as the CCM so configured: the
	// network interface's first IPv6 address first, then the rest.
	dual := c.inspCfg
	dual.NodeIPFamilies = []string{inspect.FamilyIPv6, inspect.FamilyIPv4}
	got, err = inspect.New(dual).Instance(ctx, "node-a")
	want.Addresses = append([]v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "fd00::5"}}, want.Addresses...)
	if err != nil || !equalInstance(got, want) {
		t.Errorf("instance with NodeIPFamilies ipv6, ipv4\n%+v (%v), want\n%+v", got, err, want)
	}
	if err := c.insp.Stop(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	var truth api.Instance
	c.fakeTrue(api.AdminPathInstance+a.ID, &truth)
	stopped, err := c.insp.Instance(ctx, "node-a")
	if err != nil || truth.State != api.StateStopped || stopped.Running ||
		slices.ContainsFunc(stopped.Addresses, func(a v1.NodeAddress) bool { return a.Type == v1.NodeExternalIP }) {
		t.Errorf("stopped: %+v (%v), fakecloud says %s; want not running, without its public address", stopped, err, truth.State)
	}
	if err := c.insp.Start(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	if err := c.insp.Terminate(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	c.fakeTrue(api.AdminPathInstance+a.ID, &truth)
	if truth.State != api.StateTerminated {
		t.Errorf("terminated: fakecloud says %s", truth.State)
	}
	if _, err := c.insp.Instance(ctx, "node-a"); err == nil || !strings.Contains(err.Error(), "no live instance with private DNS name node-a") {
		t.Errorf("a terminated instance: %v", err)
	}
	if err := c.insp.Terminate(ctx, "node-a"); err != nil {
		t.Errorf("terminating again: %v, want none (cleanup calls it)", err)
	}
}

func equalInstance(a, b providers.Instance) bool {
	return a.Name == b.Name && a.ProviderID == b.ProviderID && a.InstanceType == b.InstanceType && a.Zone == b.Zone &&
		a.Region == b.Region && a.Running == b.Running && slices.Equal(a.Addresses, b.Addresses)
}

// TestLoadBalancersAndRoutes makes a classic and a network load balancer
// and a route as the AWS CCM does, breaks the CCM's view with faults, and
// compares the inspector's answer with fakecloud's truth.
func TestLoadBalancersAndRoutes(t *testing.T) {
	c := newCloud(t)
	ctx := context.Background()
	a, b := c.asTheCCM()

	// The CCM's view lies from here on: the inspector's must not.
	for _, op := range []string{api.OpListInstances, api.OpListLoadBalancers, api.OpGetLoadBalancer, api.OpListRoutes} {
		c.admin(http.MethodPost, api.AdminPathFaults, api.Fault{Operation: op, Kind: api.FaultError, Status: 500}, nil)
	}
	c.verify(ctx, a, b)
}

// asTheCCM makes two instances, and through AWS's API as the AWS CCM
// does: a classic load balancer with a security group, a health check and
// both instances; a network one (TCP_UDP) with a target group of one, and
// its clients' rule in the nodes' group; a route to the first.
func (c *cloud) asTheCCM() (a, b api.Instance) {
	t, ctx := c.t, context.Background()
	a, b = c.create("node-a"), c.create("node-b")
	sg, err := c.ec2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("k8s-elb-a1"), Description: aws.String("a1"), VpcId: aws.String(api.AWSVPCID)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ec2.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: sg.GroupId, IpPermissions: []ec2types.IpPermission{
		{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(80), ToPort: aws.Int32(80), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("192.0.2.0/24")}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.elb.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("a1"), Subnets: []string{api.AWSSubnetID(0)},
		SecurityGroups: []string{aws.ToString(sg.GroupId)},
		Listeners:      []elbtypes.Listener{{Protocol: aws.String("tcp"), LoadBalancerPort: 8080, InstanceProtocol: aws.String("tcp"), InstancePort: aws.Int32(30080)}},
		Tags:           []elbtypes.Tag{{Key: aws.String(inspect.TagServiceName), Value: aws.String("ns/web")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.elb.ConfigureHealthCheck(ctx, &elb.ConfigureHealthCheckInput{LoadBalancerName: aws.String("a1"), HealthCheck: &elbtypes.HealthCheck{
		Target: aws.String("HTTP:31000/healthz"), Interval: aws.Int32(10), Timeout: aws.Int32(5), HealthyThreshold: aws.Int32(2), UnhealthyThreshold: aws.Int32(6)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.elb.RegisterInstancesWithLoadBalancer(ctx, &elb.RegisterInstancesWithLoadBalancerInput{LoadBalancerName: aws.String("a1"),
		Instances: []elbtypes.Instance{{InstanceId: aws.String(a.ID)}, {InstanceId: aws.String(b.ID)}}}); err != nil {
		t.Fatal(err)
	}

	n, err := c.elbv2.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("n1"), Type: elbv2types.LoadBalancerTypeEnumNetwork,
		SubnetMappings: []elbv2types.SubnetMapping{{SubnetId: aws.String(api.AWSSubnetID(0))}}, SecurityGroups: []string{},
		Tags: []elbv2types.Tag{{Key: aws.String(inspect.TagServiceName), Value: aws.String("ns/dns")}}})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := c.elbv2.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String("k8s-ns-dns-0123456789"), Protocol: elbv2types.ProtocolEnumTcpUdp,
		Port: aws.Int32(30053), VpcId: aws.String(api.AWSVPCID), TargetType: elbv2types.TargetTypeEnumInstance,
		HealthCheckProtocol: elbv2types.ProtocolEnumHttp, HealthCheckPort: aws.String("31053"), HealthCheckPath: aws.String("/healthz")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.elbv2.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: tg.TargetGroups[0].TargetGroupArn,
		Targets: []elbv2types.TargetDescription{{Id: aws.String(b.ID), Port: aws.Int32(30053)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.elbv2.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: n.LoadBalancers[0].LoadBalancerArn, Port: aws.Int32(53), Protocol: elbv2types.ProtocolEnumTcpUdp,
		DefaultActions: []elbv2types.Action{{Type: elbv2types.ActionTypeEnumForward, TargetGroupArn: tg.TargetGroups[0].TargetGroupArn}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ec2.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(api.AWSNodeSecurityGroup), IpPermissions: []ec2types.IpPermission{
		{IpProtocol: aws.String("udp"), FromPort: aws.Int32(30053), ToPort: aws.Int32(30053),
			IpRanges: []ec2types.IpRange{{CidrIp: aws.String("198.51.100.0/24"), Description: aws.String("kubernetes.io/rule/nlb/client=n1")}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ec2.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: aws.String(api.AWSRouteTable), DestinationCidrBlock: aws.String("10.244.1.0/24"), InstanceId: aws.String(a.ID)}); err != nil {
		t.Fatal(err)
	}
	return a, b
}

func (c *cloud) verify(ctx context.Context, a, b api.Instance) {
	t := c.t

	var truth struct {
		LoadBalancers []api.LoadBalancer `json:"loadBalancers"`
	}
	c.fakeTrue(api.AdminPathLoadBalancers, &truth)
	names := map[string]string{a.ID: "node-a", b.ID: "node-b"}
	got, err := c.insp.LoadBalancers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(truth.LoadBalancers) {
		t.Fatalf("the inspector sees %d load balancers, fakecloud has %d", len(got), len(truth.LoadBalancers))
	}
	for _, want := range truth.LoadBalancers {
		i := slices.IndexFunc(got, func(lb providers.LoadBalancer) bool { return lb.Name == want.Name })
		if i < 0 {
			t.Errorf("load balancer %s: the inspector does not see it", want.Name)
			continue
		}
		lb := got[i]
		var backends []string
		for _, id := range want.Backends {
			backends = append(backends, names[id])
		}
		var listeners []providers.Listener
		for _, l := range want.Listeners {
			listeners = append(listeners, providers.Listener{Port: l.Port, Protocol: v1.Protocol(l.Protocol), NodePort: l.NodePort})
		}
		if lb.Service != want.Tags[api.TagService] || lb.IP != want.IP || lb.Hostname != want.Hostname || lb.HealthCheckNodePort != want.HealthCheckNodePort ||
			!sameSet(lb.Backends, backends) || !sameSet(lb.SourceRanges, want.SourceRanges) || !slices.Equal(lb.Listeners, listeners) {
			t.Errorf("load balancer %s:\n inspector %+v\n fakecloud %+v (backends %v)", want.Name, lb, want, backends)
		}
		if lb.IP == "" || len(lb.SourceRanges) != 1 {
			t.Errorf("load balancer %s: %+v, want its address resolved and one source range", want.Name, lb)
		}
	}

	routes, err := c.insp.Routes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 1 || routes[0].DestinationCIDR != "10.244.1.0/24" || routes[0].TargetNode != "node-a" || routes[0].Blackhole {
		t.Fatalf("routes %+v, want 10.244.1.0/24 to node-a", routes)
	}
	if err := c.insp.DeleteRoute(ctx, routes[0].Name); err != nil {
		t.Fatal(err)
	}
	var left struct {
		Routes []api.Route `json:"routes"`
	}
	c.fakeTrue(api.AdminPathRoutes, &left)
	if len(left.Routes) != 0 {
		t.Errorf("after DeleteRoute %s: fakecloud has %+v", routes[0].Name, left.Routes)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestImportsNoFakecloud: the inspector asks AWS as anyone would; nothing
// of the simulator may be built into it.
func TestImportsNoFakecloud(t *testing.T) {
	depcheck.Forbid(t, "sigs.k8s.io/ccm-harness/providers/aws/inspect", "sigs.k8s.io/ccm-harness/fakecloud")
}

// TestLoadBalancerGoneMeanwhile: a load balancer the CCM deletes between
// the inspector's listing and its question about it (its tags) is not an
// error of the inspector's: the listing is read again, without it.
func TestLoadBalancerGoneMeanwhile(t *testing.T) {
	c := newCloud(t)
	ctx := context.Background()
	c.asTheCCM()
	front := c.racingELB()
	insp := inspect.New(inspect.Config{Region: region, EC2: c.url + api.AWSPath + "ec2/", ELB: front + api.AWSPath + "elb/", ELBv2: c.url + api.AWSPath + "elbv2/",
		Credentials: credentials.NewStaticCredentialsProvider(api.AWSInspectorAccessKeyID, inspectorToken, "")})
	lbs, err := insp.LoadBalancers(ctx)
	if err != nil {
		t.Fatalf("a load balancer deleted meanwhile: %v", err)
	}
	if slices.ContainsFunc(lbs, func(lb providers.LoadBalancer) bool { return lb.Name == "a1" }) || len(lbs) != 1 {
		t.Errorf("load balancers %+v: want n1 alone, a1 deleted meanwhile", lbs)
	}
}

// racingELB is a URL in front of the cloud whose first DescribeTags the
// CCM's deletion of load balancer a1 overtakes.
func (c *cloud) racingELB() string {
	target, _ := url.Parse(c.url)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var once sync.Once
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "Action=DescribeTags") {
			once.Do(func() {
				if _, err := c.elb.DeleteLoadBalancer(r.Context(), &elb.DeleteLoadBalancerInput{LoadBalancerName: aws.String("a1")}); err != nil {
					c.t.Error(err)
				}
			})
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	c.t.Cleanup(front.Close)
	return front.URL
}
