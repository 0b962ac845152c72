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

package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Verbose Ginkgo as Kubernetes' e2e.test v1.37 writes it: a line for each
// spec as it ends, with its name from where it began.
func TestProgress(t *testing.T) {
	out := `Will run 3 of 3206 specs
------------------------------
[SynchronizedBeforeSuite]
k8s.io/kubernetes/test/e2e/e2e.go:69
[SynchronizedBeforeSuite] PASSED [0.049 seconds]
------------------------------
[sig-network] LoadBalancers [Feature:LoadBalancer] should be able to change the type and ports of a TCP service [Slow] [sig-network, Feature:LoadBalancer, Slow]
k8s.io/kubernetes/test/e2e/network/loadbalancer.go:132
  STEP: creating a TCP service mutability-test with type=ClusterIP
• [FAILED] [124.587 seconds]
[sig-network] LoadBalancers [Feature:LoadBalancer] [It] should be able to change the type and ports of a TCP service [Slow] [sig-network, Feature:LoadBalancer, Slow]
------------------------------
[sig-network] LoadBalancers ExternalTrafficPolicy: Local [Feature:LoadBalancer] should target all nodes with endpoints [Slow] [sig-network, Feature:LoadBalancer, Slow]
k8s.io/kubernetes/test/e2e/network/loadbalancer.go:1174
• [6.149 seconds]
------------------------------
[sig-network] LoadBalancers ExternalTrafficPolicy: Local [Feature:LoadBalancer] should work for type=LoadBalancer [Slow] [sig-network, Feature:LoadBalancer, Slow]
S [SKIPPED] [3.100 seconds]
`
	if got := progressOf(out); strings.Join(got, "\n") != strings.Join(wantProgress, "\n") {
		t.Errorf("progress said:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantProgress, "\n"))
	}

	// The same specs in parallel, under Ginkgo's command line (v2.34): each
	// report whole as its spec ends, the end line before the name.
	out = `Will run 3 of 3206 specs
Running in parallel across 8 processes
------------------------------
[SynchronizedBeforeSuite] PASSED [0.060 seconds]
[SynchronizedBeforeSuite]
k8s.io/kubernetes/test/e2e/e2e.go:69
------------------------------
• [FAILED] [124.587 seconds]
[sig-network] LoadBalancers [Feature:LoadBalancer] [It] should be able to change the type and ports of a TCP service [Slow] [sig-network, Feature:LoadBalancer, Slow]
k8s.io/kubernetes/test/e2e/network/loadbalancer.go:132

  Timeline >>
  STEP: creating a TCP service mutability-test with type=ClusterIP
  [FAILED] in [It] - k8s.io/kubernetes/test/e2e/network/loadbalancer.go:190
  << Timeline
------------------------------
• [6.149 seconds]
[sig-network] LoadBalancers ExternalTrafficPolicy: Local [Feature:LoadBalancer] should target all nodes with endpoints [Slow] [sig-network, Feature:LoadBalancer, Slow]
k8s.io/kubernetes/test/e2e/network/loadbalancer.go:1174
------------------------------
S [SKIPPED] [3.100 seconds]
[sig-network] LoadBalancers ExternalTrafficPolicy: Local [Feature:LoadBalancer] [It] should work for type=LoadBalancer [Slow] [sig-network, Feature:LoadBalancer, Slow]
k8s.io/kubernetes/test/e2e/network/loadbalancer.go:1016
`
	if got := progressOf(out); strings.Join(got, "\n") != strings.Join(wantProgress, "\n") {
		t.Errorf("progress of a parallel run said:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantProgress, "\n"))
	}
}

// progressOf is what progress says of out, without the time since the
// start.
func progressOf(out string) []string {
	var got []string
	progress(strings.NewReader(out), time.Now(), func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		if i := strings.LastIndex(line, " ("); i > 0 {
			line = line[:i] // the time since the start
		}
		got = append(got, line)
	})
	return got
}

var wantProgress = []string{
	"upstream e2e: Will run 3 of 3206 specs",
	"upstream e2e: failed    124.6s  [sig-network] LoadBalancers [Feature:LoadBalancer] should be able to change the type and ports of a TCP service [Slow]",
	"upstream e2e: passed      6.1s  [sig-network] LoadBalancers ExternalTrafficPolicy: Local [Feature:LoadBalancer] should target all nodes with endpoints [Slow]",
	"upstream e2e: skipped     3.1s  [sig-network] LoadBalancers ExternalTrafficPolicy: Local [Feature:LoadBalancer] should work for type=LoadBalancer [Slow]",
}
