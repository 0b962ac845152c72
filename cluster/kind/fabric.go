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

package kind

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"sigs.k8s.io/ccm-harness/internal/nodecontainer"
	"sigs.k8s.io/ccm-harness/providers"
)

// routeProto marks the routes the fabric puts in a node's table, so it
// removes its own and nothing else (the range 250-254 is unassigned).
const routeProto = "252"

// fabricInterval is how often the cloud's route table is read: a route
// the CCM makes carries traffic within about this long, as in a cloud.
const fabricInterval = 500 * time.Millisecond

// addressesEvery is how often the fabric reads the nodes' addresses again,
// and at once when the nodes listed change: an address changes only when
// a node's container starts again. Read for each node at each
// fabricInterval (kind's Node.IP, a docker inspect, about a tenth of a
// second of CPU each), they took half a core through make test's e2e-kind:
// six docker commands a second, in process accounting.
const addressesEvery = 3 * time.Second

// fabric is the network between the nodes as a cloud's would be: it
// carries a pod CIDR to a node only when the cloud's route table says so.
// The nodes share one Docker bridge, so each node gets a route for every
// other node's pod CIDRs that the cloud holds, via that node's address,
// and loses it when the cloud's route goes.
type fabric struct {
	nodes func() map[string]nodes.Node
	insp  providers.RouteInspector
	logf  func(string, ...any)

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	applied map[string][]string // node -> "cidr via ip" lines in its table
	lastErr error

	// readAddresses is nodecontainer.Addresses but in tests; the last
	// read, of the nodes named, at addressesAt.
	readAddresses func(context.Context, []string) (map[string][]string, error)
	addresses     map[string][]string
	addressesOf   []string
	addressesAt   time.Time
}

func newFabric(ns func() map[string]nodes.Node, insp providers.RouteInspector, logf func(string, ...any)) *fabric {
	ctx, cancel := context.WithCancel(context.Background())
	return &fabric{nodes: ns, insp: insp, logf: logf, applied: map[string][]string{}, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		readAddresses: nodecontainer.Addresses}
}

func (f *fabric) run() {
	ctx := f.ctx
	defer close(f.done)
	t := time.NewTicker(fabricInterval)
	defer t.Stop()
	for {
		err := f.sync(ctx)
		if ctx.Err() != nil {
			return // stopped mid-sync: the cluster is going down
		}
		f.mu.Lock()
		if err != nil && (f.lastErr == nil || f.lastErr.Error() != err.Error()) {
			f.logf("network fabric: %v", err)
		}
		f.lastErr = err
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// stop ends run and waits for it; run must have been started.
func (f *fabric) stop() {
	f.cancel()
	<-f.done
}

// err is the last sync's failure, if it has not since succeeded.
func (f *fabric) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lastErr != nil {
		return fmt.Errorf("the network fabric cannot copy the cloud's routes into the nodes: %w", f.lastErr)
	}
	return nil
}

// sync makes every node's table hold what the cloud's routes say.
func (f *fabric) sync(ctx context.Context) error {
	routes, err := f.insp.Routes(ctx)
	if err != nil {
		return fmt.Errorf("reading the cloud's routes: %w", err)
	}
	current := f.nodes()
	ips := f.nodeAddresses(ctx, current)
	for name := range current {
		// A node powered off has no address and no table: traffic to it
		// goes nowhere, and its table is written afresh when it boots.
		if len(ips[name]) == 0 {
			delete(current, name)
		}
	}
	for name := range f.applied {
		if current[name] == nil {
			delete(f.applied, name)
		}
	}
	for name, n := range current {
		var want []string
		for _, r := range routes {
			// A pod CIDR goes via the target's address of its family: a
			// dual-stack cluster's nodes have a pod CIDR of each.
			via := addressOfFamily(ips[r.TargetNode], r.DestinationCIDR)
			if r.Blackhole || via == "" || r.TargetNode == name {
				continue
			}
			want = append(want, r.DestinationCIDR+" via "+via)
		}
		sort.Strings(want)
		if slices.Equal(want, f.applied[name]) {
			continue
		}
		if err := program(n, want); err != nil {
			// Removed or powered off since the nodes were read (a spec's
			// node going, at its end): no table to program.
			if _, still := f.nodes()[name]; !still {
				continue
			}
			if ip, _, ierr := n.IP(); ierr != nil || ip == "" {
				f.addressesOf = nil // read again: its address is gone
				continue
			}
			return fmt.Errorf("node %s: %w", name, err)
		}
		f.applied[name] = want
	}
	return nil
}

// addressOfFamily is the one of ips of cidr's family, "" if none.
func addressOfFamily(ips []string, cidr string) string {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return ""
	}
	for _, ip := range ips {
		if a, err := netip.ParseAddr(ip); err == nil && a.Is4() == p.Addr().Is4() {
			return ip
		}
	}
	return ""
}

// nodeAddresses are the addresses of the nodes current, read again
// when they are not the nodes last read or addressesEvery has passed. A
// Docker that does not answer leaves every node without one, as though
// powered off, until it does.
func (f *fabric) nodeAddresses(ctx context.Context, current map[string]nodes.Node) map[string][]string {
	names := slices.Sorted(maps.Keys(current))
	if slices.Equal(names, f.addressesOf) && time.Since(f.addressesAt) < addressesEvery {
		return f.addresses
	}
	ips, err := f.readAddresses(ctx, names)
	if err != nil {
		f.addressesOf = nil
		return nil
	}
	f.addresses, f.addressesOf, f.addressesAt = ips, names, time.Now()
	return ips
}

// program replaces the fabric's routes in node n's table with want, of
// both families.
func program(n nodes.Node, want []string) error {
	var batch strings.Builder
	for _, family := range []string{"-4", "-6"} {
		var have bytes.Buffer
		if err := n.Command("ip", family, "route", "show", "proto", routeProto).SetStdout(&have).Run(); err != nil {
			return fmt.Errorf("ip %s route show: %w", family, err)
		}
		sc := bufio.NewScanner(&have)
		for sc.Scan() {
			dst, _, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
			if dst != "" && !slices.ContainsFunc(want, func(w string) bool { return strings.HasPrefix(w, dst+" ") }) {
				// (ip takes the family from the prefix)
				fmt.Fprintf(&batch, "route del %s proto %s\n", dst, routeProto)
			}
		}
	}
	for _, w := range want {
		fmt.Fprintf(&batch, "route replace %s proto %s\n", w, routeProto)
	}
	if batch.Len() == 0 {
		return nil
	}
	var out bytes.Buffer
	if err := n.Command("ip", "-batch", "-").SetStdin(strings.NewReader(batch.String())).SetStderr(&out).Run(); err != nil {
		return fmt.Errorf("ip -batch (%s): %w: %s", strings.ReplaceAll(strings.TrimSpace(batch.String()), "\n", "; "), err, strings.TrimSpace(out.String()))
	}
	return nil
}
