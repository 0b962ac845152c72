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
	"slices"

	"github.com/spf13/cobra"

	"sigs.k8s.io/ccm-harness/cluster/kind/nodeimage"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/options"
	"sigs.k8s.io/ccm-harness/scenarios/labels"
)

// newBinaries is `binaries`: the components a cluster of the provider runs, built into the cache.
func newBinaries(o *options.Options) *cobra.Command {
	var labelFilter string
	var migrationOnly, upstreamE2E bool
	cmd := &cobra.Command{
		Use:   "binaries",
		Short: "Build the components a cluster of the provider runs into the cache, and print their paths (with --cluster=kind, the node image's tag too)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Nodes of an existing cluster build nothing.
			opts := *o
			opts.LifecycleNodes, opts.JoinHook = "", ""
			s, err := opts.Resolve(logf)
			if err != nil {
				return err
			}
			// What the leader-migration specs run besides, if the filter
			// selects one.
			migration, err := labels.MigrationSelected(labelFilter)
			if err != nil {
				return err
			}
			comps := s.Components(migration)
			if migrationOnly {
				// Only what the migration specs add: a build beside the
				// cluster's own, which another process makes meanwhile.
				own := s.Components(false)
				comps = slices.DeleteFunc(comps, func(c binaries.Component) bool {
					return slices.ContainsFunc(own, func(o binaries.Component) bool { return o.Name == c.Name })
				})
			}
			if upstreamE2E {
				e2e, err := binaries.UpstreamE2E.At(s.Release)
				if err != nil {
					return err
				}
				// And Ginkgo's command line, which runs it in parallel
				// (upstream --procs).
				comps = append(comps, e2e, binaries.GinkgoCLI)
			}
			paths, err := s.Binaries.Paths(cmd.Context(), comps...)
			if err != nil {
				return err
			}
			for _, c := range comps {
				fmt.Printf("%-32s %s\n", c.Name, paths[c.Name])
			}
			if opts.Cluster == options.Kind && !migrationOnly {
				// What a kind cluster made with kind's own command line
				// runs with no registry (kind create cluster --image).
				ref, err := nodeimage.Ensure(cmd.Context(), nodeimage.Options{Binaries: s.Binaries, Logf: logf, KubernetesVersion: s.Spec("components").KubernetesVersion})
				if err != nil {
					return err
				}
				fmt.Printf("%-32s %s\n", "kind-node-image", ref)
			}
			return nil
		},
	}
	o.Bind(cmd.Flags(), options.FlagKubeconfig, options.FlagLifecycleNodes, options.FlagJoinHook, options.FlagNodes, options.FlagArtifacts, options.FlagWait, options.FlagAPIServerPort)
	cmd.Flags().StringVar(&labelFilter, "label-filter", "", "the suite's Ginkgo label filter: the leader-migration specs' managers are built only if it selects one of them (empty selects every spec)")
	cmd.Flags().BoolVar(&upstreamE2E, "upstream-e2e", false, "also build Kubernetes' own e2e.test of the release, which `upstream` runs, and Ginkgo's command line, which runs it in parallel")
	cmd.Flags().BoolVar(&migrationOnly, "leader-migration-only", false, "build only the leader-migration specs' managers, not the cluster's components: a build beside theirs (make e2e runs it in the background)")
	return cmd
}
