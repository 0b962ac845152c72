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

// Command ccm-harness brings test clusters up and down outside the e2e
// suite: `up` leaves a cluster running with a kubeconfig for kubectl,
// `join` adds a node to it, `down` removes it, `binaries` builds the cached
// components, `pack` makes an image of a binary, `grid` puts several runs'
// results side by side, `report` checks and prints a run's conformance
// report, and `matrix` runs the suite for every Kubernetes release and CCM
// version the skew policy allows. Each command is in a file of its name.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"sigs.k8s.io/ccm-harness/options"
)

func main() {
	// Ctrl-C and SIGTERM cancel the context: a bring-up in progress then
	// fails and cleans up what it started.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "ccm-harness: %v\n", err)
		os.Exit(1)
	}
}

func newRoot() *cobra.Command {
	o := options.New()
	var name string
	root := &cobra.Command{
		Use:           "ccm-harness",
		Short:         "Bring up clusters to test cloud-controller-managers against",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&name, "name", "ccm-harness", "cluster name")
	root.AddCommand(newUp(o, &name), newJoin(o, &name), newDown(&name), newBinaries(o), newGrid(), newPack(), newReport(), newMatrix(o), newUpstream(o, &name))
	return root
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
