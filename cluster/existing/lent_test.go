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

package existing

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"sigs.k8s.io/ccm-harness/providers"
)

// power records what it was asked, as "verb node".
type power struct{ calls []string }

func (p *power) Stop(_ context.Context, n string) error {
	p.calls = append(p.calls, "stop "+n)
	return nil
}
func (p *power) Start(_ context.Context, n string) error {
	p.calls = append(p.calls, "start "+n)
	return nil
}
func (p *power) Terminate(_ context.Context, n string) error {
	p.calls = append(p.calls, "terminate "+n)
	return nil
}

// powered is a reached cloud whose inspector powers machines.
type powered struct {
	providers.ReachedCloud
	p *power
}

func (c *powered) Power() providers.MachinePower {
	if c.p == nil {
		return nil
	}
	return c.p
}

func nodes(names ...string) *fake.Clientset {
	cs := fake.NewClientset()
	for _, n := range names {
		_, _ = cs.CoreV1().Nodes().Create(context.Background(), &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
	}
	return cs
}

// TestLentRefuses: lent nodes need a cloud that powers machines, nodes the
// cluster has, and one node left for the rest.
func TestLentRefuses(t *testing.T) {
	ctx := context.Background()
	cs := nodes("a", "b", "c")
	for _, tc := range []struct {
		name  string
		cloud providers.Cloud
		lend  []string
		want  string
	}{
		{"no cloud", nil, []string{"a"}, "no way to power those machines"},
		{"a cloud with no power", &powered{}, []string{"a"}, "give a profile that reaches the cluster's cloud"},
		{"an unknown node", &powered{p: &power{}}, []string{"a", "z"}, "names node z, which the cluster does not have (it has a, b, c)"},
		{"every node", &powered{p: &power{}}, []string{"a", "b", "c"}, "lends every node of the cluster"},
	} {
		_, err := newLent(ctx, cs, tc.cloud, tc.lend, "", false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: expected an error saying %q, actual %v", tc.name, tc.want, err)
		}
	}
}

// TestLentPowersOnlyItsOwn: a node is lent to one spec at a time, comes
// back started, is never lent again once terminated, and a node not lent
// is never powered.
func TestLentPowersOnlyItsOwn(t *testing.T) {
	ctx := context.Background()
	p := &power{}
	l, err := newLent(ctx, nodes("a", "b", "c"), &powered{p: p}, []string{"b", "c"}, "", false)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := l.Lend(ctx)
	second, _ := l.Lend(ctx)
	if first != "b" || second != "c" {
		t.Fatalf("expected b then c lent, actual %q and %q", first, second)
	}
	if _, err := l.Lend(ctx); err == nil || !strings.Contains(err.Error(), "in use or was terminated") {
		t.Errorf("expected a third loan refused, actual %v", err)
	}
	if err := l.PowerOff(ctx, "a"); err == nil || !strings.Contains(err.Error(), "node a was not lent") {
		t.Errorf("expected node a's machine refused, actual %v", err)
	}
	_ = l.PowerOff(ctx, "b")
	_ = l.Return(ctx, "b")
	_ = l.Terminate(ctx, "c")
	_ = l.Return(ctx, "c")
	if err := l.PowerOn(ctx, "c"); err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Errorf("expected a terminated machine refused, actual %v", err)
	}
	again, _ := l.Lend(ctx)
	if again != "b" {
		t.Errorf("expected b lent again, actual %q", again)
	}
	if _, err := l.Lend(ctx); err == nil {
		t.Error("expected terminated c not lent again")
	}
	want := "stop b,start b,terminate c"
	if got := strings.Join(p.calls, ","); got != want {
		t.Errorf("expected the cloud asked %q, actual %q", want, got)
	}
}

// TestLentAcrossProcesses: the suite's parallel processes, each with a
// lent of its own over one folder, never hold one node at once, wait for
// one another's, and none lends a node another terminated.
func TestLentAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "lent-nodes")
	cs := nodes("a", "b", "c")
	lend := func(attach bool) *lent {
		l, err := newLent(ctx, cs, &powered{p: &power{}}, []string{"b", "c"}, dir, attach)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	one, two := lend(false), lend(true)
	first, err := one.Lend(ctx)
	if err != nil || first != "b" {
		t.Fatalf("first process: expected b lent, actual %q (%v)", first, err)
	}
	second, err := two.Lend(ctx)
	if err != nil || second != "c" {
		t.Fatalf("second process: expected c lent while the first holds b, actual %q (%v)", second, err)
	}
	_ = two.Terminate(ctx, "c")
	_ = two.Return(ctx, "c")
	// b is the first's: the second waits for it, here until its spec's
	// context ends.
	short, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	if n, err := two.Lend(short); err == nil || !strings.Contains(err.Error(), "held by the suite's other processes") {
		t.Errorf("second process: expected to wait for b and give up, actual %q (%v)", n, err)
	}
	_ = one.Return(ctx, "b")
	if n, err := two.Lend(ctx); err != nil || n != "b" {
		t.Errorf("second process: expected b once returned, actual %q (%v)", n, err)
	}
	_ = two.Return(ctx, "b")
	// c, terminated by the second process, is lent to no process again.
	three := lend(true)
	if n, _ := three.Lend(ctx); n != "b" {
		t.Errorf("a third process: expected b, actual %q", n)
	}
	short, cancel = context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	if n, err := one.Lend(short); err == nil || !strings.Contains(err.Error(), "held by the suite's other processes") {
		t.Errorf("first process: expected to wait for b (c terminated) and give up, actual %q (%v)", n, err)
	}
	_ = three.Return(ctx, "b")
	_ = three.Terminate(ctx, "b")
	if n, err := one.Lend(ctx); err == nil || !strings.Contains(err.Error(), "in use or was terminated") {
		t.Errorf("first process: expected no node left (both terminated), actual %q (%v)", n, err)
	}
}
