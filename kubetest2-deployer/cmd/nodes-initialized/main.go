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

// Command nodes-initialized checks the cluster in $KUBECONFIG once, without
// waiting: at least --nodes nodes, each with a provider ID and without the
// uninitialized taint, that is, each initialized by the CCM. It is a test
// for kubetest2's exec tester (`--test=exec -- nodes-initialized`), which
// finds it in the run dir that --build stages.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/ccm-harness/internal/nodewait"
)

func main() {
	want := flag.Int("nodes", 1, "nodes the cluster must have at least")
	flag.Parse()
	if err := check(os.Getenv("KUBECONFIG"), *want); err != nil {
		fmt.Fprintf(os.Stderr, "nodes-initialized: %v\n", err)
		os.Exit(1)
	}
}

func check(kubeconfig string, want int) error {
	if kubeconfig == "" {
		return fmt.Errorf("KUBECONFIG is not set (run it under kubetest2, which sets it, or set it to the cluster's kubeconfig)")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	nodes, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes of %s: %w", cfg.Host, err)
	}
	if len(nodes.Items) < want {
		return fmt.Errorf("expected at least %d nodes, actual %d", want, len(nodes.Items))
	}
	var bad, good []string
	for i := range nodes.Items {
		n := &nodes.Items[i]
		switch err := nodewait.Initialized(n); {
		case err != nil:
			bad = append(bad, err.Error())
		case n.Spec.ProviderID == "":
			bad = append(bad, fmt.Sprintf("node %s: expected a provider ID set by the CCM, actual none", n.Name))
		default:
			good = append(good, n.Name+" ("+n.Spec.ProviderID+")")
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("%d of %d nodes not initialized: %s", len(bad), len(nodes.Items), strings.Join(bad, "; "))
	}
	sort.Strings(good)
	fmt.Printf("%d nodes initialized: %s\n", len(good), strings.Join(good, ", "))
	return nil
}
