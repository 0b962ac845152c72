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

// Command fakecloud serves the fakecloud API (package server) on a local
// port, for a cloud-controller-manager under test and for the harness.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/lbroute"
	"sigs.k8s.io/ccm-harness/fakecloud/machines"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

type options struct {
	listen, stateFile, tokenFile, adminTokenFile, auditLog string
	inspectorTokenFile, dnsListen                          string
	region, zones, faults                                  string
	noSync                                                 bool
	internalCIDR, internalCIDRv6, externalCIDR, lbCIDR     string
	lbCIDRv6                                               string
	backendCIDRs                                           cidrList
	proxyLBs, ignoreAffinity, unservedIPv6                 bool
	kwokKubeconfig, kwokLabel                              string
	dockerMachines, lbRoute                                bool
}

// cidrList is a repeatable CIDR flag.
type cidrList []netip.Prefix

func (l *cidrList) String() string { return fmt.Sprint([]netip.Prefix(*l)) }

func (l *cidrList) Set(v string) error {
	p, err := netip.ParsePrefix(v)
	if err != nil {
		return fmt.Errorf("%v (give a CIDR such as 172.18.0.0/16)", err)
	}
	*l = append(*l, p.Masked())
	return nil
}

// run is main without the process: it returns the exit code, and stops
// serving when ctx is done. Every failure before serving is one line on
// stderr that names the cause and the fix.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	logger := log.New(stderr, "fakecloud: ", 0)
	fs := flag.NewFlagSet("fakecloud", flag.ContinueOnError)
	// The flag package's own error output is a message plus the whole
	// usage; one line is easier to spot in a harness log.
	fs.SetOutput(io.Discard)
	var o options
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8080", "`address` to serve on")
	fs.StringVar(&o.stateFile, "state-file", "", "`file` keeping instances and faults across restarts (default: state is lost on exit)")
	fs.StringVar(&o.tokenFile, "token-file", "", "`file` holding the cloud API bearer token, the one the CCM sends (required)")
	fs.StringVar(&o.adminTokenFile, "admin-token-file", "", "`file` holding the admin API bearer token, the one tests send (required)")
	fs.StringVar(&o.inspectorTokenFile, "inspector-token-file", "", "`file` holding the inspector's secret: a second caller of the cloud API in every dialect (bearer token, AWS secret key of "+api.AWSInspectorAccessKeyID+", Keystone password of "+api.OpenStackInspectorUser+") whose calls no fault touches")
	fs.StringVar(&o.dnsListen, "dns-listen", "", "UDP `address` to answer DNS on: the A records of the load balancers' DNS names (AWS's), as the cloud's DNS would (default: none)")
	fs.StringVar(&o.auditLog, "audit-log", "", "`file` to append one JSON audit entry per API call to")
	fs.StringVar(&o.region, "region", "fake-region-1", "the cloud's `region`")
	fs.StringVar(&o.zones, "zones", "", "comma-separated `zones` instances are spread over (default: the region suffixed with a, b and c)")
	fs.StringVar(&o.internalCIDR, "internal-cidr", "127.1.0.0/16", "`CIDR` internal instance addresses come from")
	fs.StringVar(&o.internalCIDRv6, "internal-cidr-v6", "", "IPv6 `CIDR` each instance also gets an InternalIP from, after its IPv4 ones, as in a dual-stack cloud (default: none, an IPv4-only cloud)")
	fs.StringVar(&o.externalCIDR, "external-cidr", "127.2.0.0/16", "`CIDR` external instance addresses come from")
	fs.StringVar(&o.lbCIDR, "lb-cidr", "127.20.0.0/16", "`CIDR` load balancer IPs come from, loopback or, with --lb-route, any; fakecloud really listens on them")
	fs.StringVar(&o.lbCIDRv6, "lb-cidr-v6", "", "IPv6 `CIDR` a dual-stack load balancer's IPv6 address comes from: a unique local range, such as fd00:2::/64, routed here (--lb-route routes it too); fakecloud really listens on them (default: none, so a load balancer asked for IPv6 is refused)")
	fs.BoolVar(&o.lbRoute, "lb-route", false, "route --lb-cidr (and --lb-cidr-v6) to this machine while fakecloud runs (ip route add local CIDR dev lo; needs root or CAP_NET_ADMIN), so that its load balancers are reached from containers too, such as a kind cluster's pods, which a loopback range is not")
	fs.Var(&o.backendCIDRs, "backend-cidr", "`CIDR` off loopback that load balancers may forward to, such as a kind cluster's node network; repeatable")
	fs.BoolVar(&o.unservedIPv6, "unserved-ipv6", false, "dual-stack load balancers get and report their IPv6 address but listen on their IPv4 one alone (a cloud whose IPv6 frontend carries nothing; for negative controls)")
	fs.BoolVar(&o.ignoreAffinity, "ignore-client-affinity", false, "load balancers keep and report the client affinity they are given but balance every connection afresh (a cloud whose data plane does not do what its API says; for negative controls)")
	fs.BoolVar(&o.proxyLBs, "proxy-load-balancers", false, "fakecloud's own load balancers proxy, so backends see fakecloud's address rather than the client's (default: they keep the client's, as a pass-through network load balancer)")
	fs.BoolVar(&o.noSync, "unsafe-no-fsync", false, "do not fsync the state file, and share one write among the changes of up to 100 ms: faster for a throwaway cloud, unsafe on a crash")
	fs.StringVar(&o.kwokKubeconfig, "kwok-kubeconfig", "", "`kubeconfig` of a cluster whose nodes are this cloud's machines, simulated by kwok: an instance that stops or is terminated takes --kwok-label off the node of its name, and one that starts puts it back, as a real machine's kubelet stops and starts with it (default: instances are only data)")
	fs.StringVar(&o.kwokLabel, "kwok-label", "kwok.x-k8s.io/node=fake", "the `key=value` label kwok manages nodes by (with --kwok-kubeconfig)")
	fs.BoolVar(&o.dockerMachines, "docker-machines", false, "instances are the Docker containers of their names, such as a kind cluster's nodes: an instance that stops or is terminated stops its container at once, as a machine losing power, and one that starts starts it (default: instances are only data)")
	fs.StringVar(&o.faults, "faults", "", "JSON `file` holding a list of faults to start with, replacing those in the state file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintln(stderr, "Usage: fakecloud --token-file FILE --admin-token-file FILE [flags]")
			fs.PrintDefaults()
			return 0
		}
		logger.Printf("%v (see fakecloud --help)", err)
		return 1
	}
	if fs.NArg() > 0 {
		logger.Printf("unexpected argument %q: fakecloud takes only flags (see fakecloud --help)", fs.Arg(0))
		return 1
	}

	cfg, closeAudit, err := o.config()
	if err != nil {
		logger.Print(err)
		return 1
	}
	defer closeAudit()
	if o.kwokKubeconfig != "" && o.dockerMachines {
		logger.Print("--kwok-kubeconfig and --docker-machines both say what the machines are: give one")
		return 1
	}
	if o.dockerMachines {
		cfg.Machines = machines.Docker(logger)
	}
	if o.kwokKubeconfig != "" {
		if cfg.Machines, err = machines.Kwok(o.kwokKubeconfig, o.kwokLabel, logger); err != nil {
			logger.Printf("--kwok-label: %v", err)
			return 1
		}
	}
	if o.lbRoute {
		for _, cidr := range []string{cfg.LBCIDR, cfg.LBCIDRv6} {
			if cidr == "" {
				continue
			}
			removeRoute, err := lbroute.Add(netip.MustParsePrefix(cidr))
			if err != nil {
				logger.Print(err)
				return 1
			}
			// Before the listeners close (deferred after this): a
			// route outlives nothing that needs it.
			defer func() {
				if err := removeRoute(); err != nil {
					logger.Print(err)
				}
			}()
		}
	}
	srv, err := server.New(cfg)
	if err != nil {
		logger.Print(err)
		return 1
	}
	// Load balancer listeners are sockets of this process; they close with
	// it, but a clean close also ends their connections in order.
	defer srv.Close()
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		logger.Printf("cannot listen on %s: %v (pick a free port with --listen)", o.listen, listenCause(err))
		return 1
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ErrorLog: logger}
	served := make(chan error, 1)
	if o.dnsListen != "" {
		pc, err := net.ListenPacket("udp", o.dnsListen)
		if err != nil {
			l.Close()
			logger.Printf("cannot answer DNS on %s: %v (pick a free UDP port with --dns-listen)", o.dnsListen, listenCause(err))
			return 1
		}
		defer pc.Close()
		go func() { served <- srv.ServeDNS(pc) }()
		logger.Printf("answering DNS on udp://%s", pc.LocalAddr())
	}
	go func() { served <- hs.Serve(l) }()
	logger.Printf("serving on http://%s", l.Addr())

	select {
	case err := <-served:
		logger.Printf("serving stopped: %v", err)
		return 1
	case <-ctx.Done():
	}
	logger.Print("shutting down")
	// Calls held by injected latency would otherwise keep a test waiting
	// for the whole delay.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	return 0
}

// listenCause reduces a listen error to its reason ("address already in
// use"), since the message around it names the address already.
func listenCause(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err
	}
	return err
}

// config turns the flags into a server.Config. closeAudit is never nil.
func (o options) config() (cfg server.Config, closeAudit func(), err error) {
	closeAudit = func() {}
	cfg = server.Config{Region: o.region, StateFile: o.stateFile, NoSync: o.noSync}
	if cfg.CloudToken, err = readToken("--token-file", o.tokenFile, "a file holding the bearer token the CCM will send"); err != nil {
		return cfg, closeAudit, err
	}
	if cfg.AdminToken, err = readToken("--admin-token-file", o.adminTokenFile, "a file holding the bearer token tests will send to the admin API"); err != nil {
		return cfg, closeAudit, err
	}
	if o.inspectorTokenFile != "" {
		if cfg.InspectorToken, err = readToken("--inspector-token-file", o.inspectorTokenFile, "a file holding the inspector's secret"); err != nil {
			return cfg, closeAudit, err
		}
	}
	if o.region == "" {
		return cfg, closeAudit, errors.New("--region is empty (name a region, e.g. --region=fake-region-1)")
	}
	if o.zones != "" {
		for _, z := range strings.Split(o.zones, ",") {
			z = strings.TrimSpace(z)
			if z == "" {
				return cfg, closeAudit, fmt.Errorf("--zones %q has an empty zone (give a comma-separated list such as --zones=%sa,%sb)", o.zones, o.region, o.region)
			}
			cfg.Zones = append(cfg.Zones, z)
		}
	}
	for _, c := range []struct{ flag, value, example string }{
		{"--internal-cidr", o.internalCIDR, "127.1.0.0/16"},
		{"--external-cidr", o.externalCIDR, "127.2.0.0/16"},
		{"--lb-cidr", o.lbCIDR, "127.20.0.0/16"},
	} {
		if _, err := netip.ParsePrefix(c.value); err != nil {
			return cfg, closeAudit, fmt.Errorf("%s: %v (give a CIDR such as %s)", c.flag, err, c.example)
		}
	}
	for _, c := range []struct{ flag, value, example string }{
		{"--internal-cidr-v6", o.internalCIDRv6, "fd00:1::/64"},
		{"--lb-cidr-v6", o.lbCIDRv6, "fd00:2::/64"},
	} {
		if _, err := netip.ParsePrefix(c.value); c.value != "" && err != nil {
			return cfg, closeAudit, fmt.Errorf("%s: %v (give a CIDR such as %s)", c.flag, err, c.example)
		}
	}
	cfg.InternalCIDR, cfg.ExternalCIDR, cfg.LBCIDR = o.internalCIDR, o.externalCIDR, o.lbCIDR
	cfg.InternalCIDRv6, cfg.LBCIDRv6 = o.internalCIDRv6, o.lbCIDRv6
	cfg.BackendCIDRs = o.backendCIDRs
	cfg.ProxyLoadBalancers = o.proxyLBs
	cfg.IgnoreClientAffinity = o.ignoreAffinity
	cfg.UnservedIPv6 = o.unservedIPv6
	if o.faults != "" {
		if cfg.Faults, err = readFaults(o.faults); err != nil {
			return cfg, closeAudit, err
		}
	}
	if o.auditLog != "" {
		f, err := os.OpenFile(o.auditLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return cfg, closeAudit, fmt.Errorf("cannot open --audit-log: %v (give a writable file path)", err)
		}
		cfg.AuditLog, closeAudit = f, func() { f.Close() }
	}
	return cfg, closeAudit, nil
}

func readToken(flagName, path, what string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("%s is required (%s)", flagName, what)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v (%s is %s)", flagName, err, flagName, what)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("%s %s is empty (write the token into it)", flagName, path)
	}
	return token, nil
}

// readFaults reads a JSON list of faults, strictly, checking each as the
// admin API would, so a typo fails at start rather than never firing.
func readFaults(path string) ([]api.Fault, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read --faults: %v (give a JSON file holding a list of faults)", err)
	}
	var faults []api.Fault
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&faults); err != nil {
		where := ""
		var se *json.SyntaxError
		if errors.As(err, &se) {
			where = fmt.Sprintf(" line %d", 1+bytes.Count(b[:se.Offset], []byte("\n")))
		}
		return nil, fmt.Errorf("--faults %s%s: %v (it must hold a JSON list of faults, e.g. [{\"operation\":\"*\",\"kind\":\"throttle\"}])", path, where, err)
	}
	for i, f := range faults {
		if err := f.Validate(); err != nil {
			return nil, fmt.Errorf("--faults %s: fault %d: %v", path, i+1, err)
		}
	}
	return faults, nil
}
