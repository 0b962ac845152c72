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
	"context"
	"errors"
	"io"
	"maps"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindexec "sigs.k8s.io/kind/pkg/exec"

	"sigs.k8s.io/ccm-harness/providers"
)

// goneNode is a node container that stopped or went while the fabric
// programmed it: every command fails, and with stops its address is gone
// after the first time it is read.
type goneNode struct {
	name  string
	stops bool
	reads *int
}

func (n goneNode) Command(string, ...string) kindexec.Cmd { return failingCmd{} }
func (n goneNode) CommandContext(context.Context, string, ...string) kindexec.Cmd {
	return failingCmd{}
}
func (n goneNode) String() string             { return n.name }
func (n goneNode) Role() (string, error)      { return "worker", nil }
func (n goneNode) SerialLogs(io.Writer) error { return nil }
func (n goneNode) IP() (string, string, error) {
	*n.reads++
	if n.stops && *n.reads > 1 {
		return "", "", errors.New("container is not running")
	}
	return "172.18.0.9", "", nil
}

type failingCmd struct{}

func (failingCmd) Run() error                         { return errors.New("exit status 1") }
func (c failingCmd) SetEnv(...string) kindexec.Cmd    { return c }
func (c failingCmd) SetStdin(io.Reader) kindexec.Cmd  { return c }
func (c failingCmd) SetStdout(io.Writer) kindexec.Cmd { return c }
func (c failingCmd) SetStderr(io.Writer) kindexec.Cmd { return c }

type routes []providers.Route

func (r routes) Instance(context.Context, string) (providers.Instance, error) {
	return providers.Instance{}, nil
}
func (r routes) Routes(context.Context) ([]providers.Route, error) { return r, nil }

// TestFabricNodeGoing: a node removed or powered off while the fabric
// programs it is no failure of the fabric (a spec's node going at its end
// failed the next spec's health check in make test); a running node the
// fabric cannot program is one.
func TestFabricNodeGoing(t *testing.T) {
	rt := routes{{Name: "r", DestinationCIDR: "10.244.1.0/24", TargetNode: "b"}}
	b := goneNode{name: "b", reads: new(int)}
	for _, tc := range []struct {
		name    string
		a       goneNode
		listed  bool // still in the node list after the failure
		wantErr string
	}{
		{"removed", goneNode{name: "a", reads: new(int)}, false, ""},
		{"powered off", goneNode{name: "a", stops: true, reads: new(int)}, true, ""},
		{"running", goneNode{name: "a", reads: new(int)}, true, "node a: ip -4 route show"},
	} {
		calls := 0
		list := func() map[string]nodes.Node {
			calls++
			if calls > 1 && !tc.listed {
				return map[string]nodes.Node{"b": b}
			}
			return map[string]nodes.Node{"a": tc.a, "b": b}
		}
		f := newFabric(list, rt, t.Logf)
		f.readAddresses = addressesOf(map[string]nodes.Node{"a": tc.a, "b": b})
		err := f.sync(context.Background())
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: expected an error with %q, actual %v", tc.name, tc.wantErr, err)
		}
	}
}

// addressesOf reads the nodes' addresses as nodecontainer.Addresses reads
// their containers', from each node's IP.
func addressesOf(all map[string]nodes.Node) func(context.Context, []string) (map[string][]string, error) {
	return func(_ context.Context, names []string) (map[string][]string, error) {
		out := map[string][]string{}
		for _, name := range names {
			if n, ok := all[name]; ok {
				out[name] = nil
				ip4, ip6, _ := n.IP()
				if ip4 != "" {
					out[name] = append(out[name], ip4)
				}
				if ip6 != "" {
					out[name] = append(out[name], ip6)
				}
			}
		}
		return out, nil
	}
}

// TestFabricReadsAddressesSeldom: the nodes' addresses are read again
// only when the nodes listed change or addressesEvery has passed, not at
// every sync (a docker command for each node twice a second took half a
// core through make test's e2e-kind), and a node that comes up with an
// address gets its routes once they are read.
func TestFabricReadsAddressesSeldom(t *testing.T) {
	rt := routes{{Name: "r", DestinationCIDR: "10.244.1.0/24", TargetNode: "b"}}
	a, b, c := goneNode{name: "a", reads: new(int)}, goneNode{name: "b", reads: new(int)}, goneNode{name: "c", reads: new(int)}
	listed := map[string]nodes.Node{"a": a, "b": b}
	reads := 0
	f := newFabric(func() map[string]nodes.Node { return maps.Clone(listed) }, rt, t.Logf)
	read := addressesOf(map[string]nodes.Node{"a": a, "b": b, "c": c})
	f.readAddresses = func(ctx context.Context, names []string) (map[string][]string, error) {
		reads++
		return read(ctx, names)
	}
	sync := func() {
		t.Helper()
		// goneNode's commands fail: no table can be programmed, and the
		// fabric says so.
		if err := f.sync(context.Background()); err == nil || !strings.Contains(err.Error(), ": ip -4 route show") {
			t.Fatalf("expected a node's table to fail, actual %v", err)
		}
	}
	for range 5 {
		sync()
	}
	if reads != 1 {
		t.Errorf("five syncs of the same nodes within %s read their addresses %d times, expected once", addressesEvery, reads)
	}
	listed["c"] = c
	sync()
	if reads != 2 {
		t.Errorf("a node joining: the addresses were read %d times in all, expected again (2)", reads)
	}
	f.addressesAt = f.addressesAt.Add(-addressesEvery)
	sync()
	if reads != 3 {
		t.Errorf("after %s: the addresses were read %d times in all, expected again (3)", addressesEvery, reads)
	}
}

// TestAddressOfFamily: a pod CIDR goes via the target node's address of
// its own family, and nowhere when the node has none of it.
func TestAddressOfFamily(t *testing.T) {
	dual := []string{"172.18.0.3", "fc00:f853:ccd:e793::3"}
	for _, tc := range []struct {
		ips        []string
		cidr, want string
	}{
		{dual, "10.244.1.0/24", "172.18.0.3"},
		{dual, "fd00:10:244:1::/64", "fc00:f853:ccd:e793::3"},
		{dual[:1], "fd00:10:244:1::/64", ""},
		{dual, "not a cidr", ""},
		{nil, "10.244.1.0/24", ""},
	} {
		if got := addressOfFamily(tc.ips, tc.cidr); got != tc.want {
			t.Errorf("addressOfFamily(%v, %q) = %q, want %q", tc.ips, tc.cidr, got, tc.want)
		}
	}
}
