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

package upstream

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/providers"
	_ "sigs.k8s.io/ccm-harness/providers/aws"
	_ "sigs.k8s.io/ccm-harness/providers/fake"
	_ "sigs.k8s.io/ccm-harness/providers/openstack"
	_ "sigs.k8s.io/ccm-harness/providers/vsphere"
	"sigs.k8s.io/ccm-harness/reports"
)

const (
	tcp      = "[sig-network] LoadBalancers [Feature:LoadBalancer] should be able to change the type and ports of a TCP service [Slow]"
	affinity = "[sig-network] LoadBalancers [Feature:LoadBalancer] should be able to switch session affinity for LoadBalancer service with Local traffic policy [Slow]"
	udp      = "[sig-network] LoadBalancers [Feature:LoadBalancer] should be able to change the type and ports of a UDP service [Slow]"
	ipv6     = "[sig-network] LoadBalancers ExternalTrafficPolicy: Local [Feature:LoadBalancer] [Slow] should work for type=LoadBalancer"
)

// byChance lists the affinity spec as one that fails or passes by where
// the scheduler puts its pods.
var byChance = Expectations{CannotPass: []Exception{{Spec: "switch session affinity for LoadBalancer service with Local traffic policy",
	Reason: "the CCM keeps a pool's persistence", Race: "which node holds how many pods", DecidedBy: "loadbalancer/session-affinity"}}}

func run(cases ...reports.Case) *reports.Run { return &reports.Run{Cases: cases} }

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name   string
		run    *reports.Run
		expect Expectations
		// wrong is what Err must say, each part; none for a verdict that
		// holds.
		wrong []string
	}{
		{name: "every spec passed", run: run(reports.Case{Name: tcp, Outcome: reports.Passed}, reports.Case{Name: udp, Outcome: reports.Passed})},
		{name: "a listed spec failed", run: run(reports.Case{Name: tcp, Outcome: reports.Passed}, reports.Case{Name: udp, Outcome: reports.Failed, Message: "no UDP"}),
			expect: Expectations{CannotPass: []Exception{{Spec: "ports of a UDP service", Reason: "no UDP here"}}}},
		{name: "an unlisted spec failed", run: run(reports.Case{Name: tcp, Outcome: reports.Passed}, reports.Case{Name: udp, Outcome: reports.Failed, Message: "timed out\nstack"}),
			wrong: []string{`"` + udp + `" failed: timed out`}},
		{name: "an unlisted spec skipped", run: run(reports.Case{Name: tcp, Outcome: reports.Passed}, reports.Case{Name: ipv6, Outcome: reports.Skipped, Message: "LoadBalancer uses 'Proxy' IPMode"}),
			wrong: []string{"skipped (LoadBalancer uses 'Proxy' IPMode), and not listed"}},
		{name: "a listed spec passed", run: run(reports.Case{Name: tcp, Outcome: reports.Passed}, reports.Case{Name: udp, Outcome: reports.Passed}),
			expect: Expectations{CannotPass: []Exception{{Spec: "ports of a UDP service", Reason: "no UDP here"}}},
			wrong:  []string{"passed, though listed as one that cannot: drop it from the list"}},
		{name: "a stale entry", run: run(reports.Case{Name: tcp, Outcome: reports.Passed}),
			expect: Expectations{CannotPass: []Exception{{Spec: "a spec upstream renamed", Reason: "why"}}},
			wrong:  []string{`cannotPass names "a spec upstream renamed", which no upstream spec's name holds`}},
		{name: "a listed spec left out", run: run(reports.Case{Name: tcp, Outcome: reports.Passed}, reports.Case{Name: udp, Outcome: reports.Skipped}),
			expect: Expectations{CannotPass: []Exception{{Spec: "ports of a UDP service", Reason: "no UDP here"}}}},
		{name: "an entry naming two specs", run: run(reports.Case{Name: tcp, Outcome: reports.Failed}, reports.Case{Name: udp, Outcome: reports.Failed}),
			expect: Expectations{CannotPass: []Exception{{Spec: "change the type and ports", Reason: "why"}}},
			wrong:  []string{`cannotPass names "change the type and ports", which 2 specs' names hold: make it name one alone`}},
		{name: "two entries naming one spec", run: run(reports.Case{Name: tcp, Outcome: reports.Passed}, reports.Case{Name: udp, Outcome: reports.Failed}),
			expect: Expectations{CannotPass: []Exception{{Spec: "UDP", Reason: "why"}, {Spec: "ports of a UDP", Reason: "why"}}},
			wrong:  []string{"named by 2 cannotPass entries"}},
		{name: "nothing selected", run: run(reports.Case{Name: tcp, Outcome: reports.Skipped}),
			wrong: []string{"no upstream spec passed: the focus selected none"}},
		{name: "every spec listed", run: run(reports.Case{Name: tcp, Outcome: reports.Failed}),
			expect: Expectations{CannotPass: []Exception{{Spec: "TCP service", Reason: "why"}}},
			wrong:  []string{"no upstream spec passed"}},
		{name: "a spec listed as failing by chance failed", run: run(reports.Case{Name: tcp, Outcome: reports.Passed}, reports.Case{Name: affinity, Outcome: reports.Failed, Message: "Affinity shouldn't hold but did"}),
			expect: byChance},
		{name: "a spec listed as failing by chance passed", run: run(reports.Case{Name: tcp, Outcome: reports.Passed}, reports.Case{Name: affinity, Outcome: reports.Passed}),
			expect: byChance},
		{name: "a spec listed as failing by chance skipped", run: run(reports.Case{Name: tcp, Outcome: reports.Passed}, reports.Case{Name: affinity, Outcome: reports.Skipped, Message: "Requires at least 2 nodes"}),
			expect: byChance, wrong: []string{"skipped (Requires at least 2 nodes), though listed as one that fails by chance: it must run"}},
		{name: "only a pass by chance", run: run(reports.Case{Name: affinity, Outcome: reports.Passed}),
			expect: byChance, wrong: []string{"no upstream spec passed"}},
		{name: "the suite's setup failed", run: run(reports.Case{Name: "[SynchronizedBeforeSuite]", Outcome: reports.Failed, Message: "nodes not ready"}),
			wrong: []string{`"[SynchronizedBeforeSuite]" failed: nodes not ready`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(tc.run, &tc.expect)
			err := v.Err()
			if len(tc.wrong) == 0 {
				if err != nil {
					t.Fatalf("Err: %v, want none", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Err: none, want one saying %q", tc.wrong)
			}
			for _, w := range tc.wrong {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Err: %v\nwant it to say %q", err, w)
				}
			}
		})
	}
}

func TestMarkdown(t *testing.T) {
	v := Judge(run(reports.Case{Name: tcp, Outcome: reports.Passed}, reports.Case{Name: udp, Outcome: reports.Failed, Message: "no | UDP"}),
		&Expectations{CannotPass: []Exception{{Spec: "ports of a UDP service", Reason: "fakecloud | serves no UDP"}}})
	md := v.Markdown("title")
	for _, want := range []string{"## title", "2 upstream specs: 1 passed, 1 cannot pass here (listed, with why), 0 wrong.",
		"| " + tcp + " | passed |  |", `| fakecloud \| serves no UDP |`} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown:\n%s\nwant it to hold %q", md, want)
		}
	}
}

// TestMarkdownByChance: a spec that passes or fails by chance is counted
// apart, with its race, in both outcomes.
func TestMarkdownByChance(t *testing.T) {
	for _, o := range []reports.Outcome{reports.Passed, reports.Failed} {
		v := Judge(run(reports.Case{Name: tcp, Outcome: reports.Passed}, reports.Case{Name: affinity, Outcome: o}), &byChance)
		md := v.Markdown("title")
		for _, want := range []string{"2 upstream specs: 1 passed, 0 cannot pass here (listed, with why), 1 pass or fail by chance (listed, not judged: a spec of ours judges the same fault), 0 wrong.",
			"| " + string(o) + " | by chance, not judged: which node holds how many pods the CCM keeps"} {
			if !strings.Contains(md, want) {
				t.Errorf("Markdown of a %s:\n%s\nwant it to hold %q", o, md, want)
			}
		}
	}
}

func TestDecided(t *testing.T) {
	if err := byChance.Decided([]string{"loadbalancer/backends", "loadbalancer/session-affinity"}); err != nil {
		t.Errorf("Decided by a known difference: %v", err)
	}
	err := byChance.Decided([]string{"loadbalancer/backends"})
	if err == nil || !strings.Contains(err.Error(), `names "loadbalancer/session-affinity" as the spec that fails every run, which is none of the provider's known differences (loadbalancer/backends)`) {
		t.Errorf("Decided by a spec that is no known difference: %v", err)
	}
}

// TestMarkdownLeftOut: the listed specs --skip-listed leaves out are
// counted, not read as none listed.
func TestMarkdownLeftOut(t *testing.T) {
	v := Judge(run(reports.Case{Name: tcp, Outcome: reports.Passed}, reports.Case{Name: udp, Outcome: reports.Skipped}),
		&Expectations{CannotPass: []Exception{{Spec: "ports of a UDP service", Reason: "fakecloud serves no UDP"}}})
	if err := v.Err(); err != nil {
		t.Fatalf("Err: %v, want none: a listed spec left out is not judged", err)
	}
	md := v.Markdown("title")
	if want := "1 upstream specs: 1 passed, 0 cannot pass here (listed, with why), 0 wrong. Left out, not run: 1 listed as unable to pass here."; !strings.Contains(md, want) {
		t.Errorf("Markdown:\n%s\nwant it to hold %q", md, want)
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	e, err := Read(write("ok.yaml", "cannotPass:\n- spec: UDP service\n  reason: no UDP\n"))
	if err != nil || len(e.CannotPass) != 1 || e.CannotPass[0].Reason != "no UDP" {
		t.Fatalf("Read: %+v, %v", e, err)
	}
	for name, text := range map[string]string{
		"unknown field":   "cannotPas: []\n",
		"no reason":       "cannotPass:\n- spec: UDP service\n",
		"no spec":         "cannotPass:\n- reason: why\n",
		"both":            "unsupported: why\ncannotPass:\n- spec: UDP service\n  reason: no UDP\n",
		"race alone":      "cannotPass:\n- spec: UDP service\n  reason: why\n  race: placement\n",
		"decidedBy alone": "cannotPass:\n- spec: UDP service\n  reason: why\n  decidedBy: loadbalancer/udp\n",
	} {
		if _, err := Read(write(name, text)); err == nil {
			t.Errorf("Read of %s: no error", name)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "upstream.yaml") {
		t.Errorf("Read of a missing file: %v, want it to name upstream.yaml", err)
	}
}

// Every provider's list reads, and names only its provider's known
// differences, so that a broken one shows here rather than after a
// bring-up.
func TestProvidersLists(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "providers", "*", "upstream.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no providers/*/upstream.yaml (%v)", err)
	}
	for _, f := range files {
		e, err := Read(f)
		if err != nil {
			t.Error(err)
			continue
		}
		p, err := providers.Get(filepath.Base(filepath.Dir(f)))
		if err != nil {
			t.Error(err)
			continue
		}
		var known []string
		for _, d := range p.Differences {
			known = append(known, d.Spec.String())
		}
		if err := e.Decided(known); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestSkip(t *testing.T) {
	e := Expectations{CannotPass: []Exception{{Spec: "ports of a UDP service", Reason: "why"}, {Spec: "type=LoadBalancer [Slow]", Reason: "why"}}}
	skip := regexp.MustCompile(e.Skip())
	for name, want := range map[string]bool{tcp: false, udp: true, ipv6 + " [Slow]": true} {
		if got := skip.MatchString(name); got != want {
			t.Errorf("Skip %q matches %q: %t, want %t", skip, name, got, want)
		}
	}
	if s := (&Expectations{}).Skip(); s != "" {
		t.Errorf("Skip of an empty list: %q, want none", s)
	}
}
