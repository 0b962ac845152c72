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
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/options"
)

// newUp is `up`: a local cluster left running for kubectl.
func newUp(o *options.Options, name *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a local cluster with the provider's cloud and CCM, and leave it running",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cluster.CheckName(*name); err != nil {
				return fmt.Errorf("--name: %w", err)
			}
			opts := *o
			// Whatever $CLUSTER, $LIFECYCLE_NODES and $JOIN_HOOK say (a
			// suite's, for the cluster it judges).
			opts.Cluster, opts.LifecycleNodes, opts.JoinHook = options.Local, "", ""
			return up(cmd.Context(), opts, *name)
		},
	}
	// up leaves a cluster for kubectl: only the local runtime makes one
	// that outlives this process.
	o.Bind(cmd.Flags(), options.FlagCluster, options.FlagKubeconfig, options.FlagLifecycleNodes, options.FlagJoinHook)
	return cmd
}

// up brings a local cluster up and leaves it running for kubectl.
func up(ctx context.Context, o options.Options, name string) error {
	s, err := o.Resolve(logf)
	if err != nil {
		return err
	}
	start := time.Now()
	c, err := s.Up(ctx, name, options.Detached())
	if err != nil {
		return err
	}
	fmt.Printf("cluster %s is up in %.1fs: Kubernetes %s, provider %s (%s), %d nodes\n", c.Name, time.Since(start).Seconds(), c.KubernetesVersion, s.Profile.Name, s.Profile.CCM, s.Nodes)
	fmt.Printf("  kubectl --kubeconfig %s get nodes\n", c.Kubeconfig)
	fmt.Printf("  logs: %s\n", s.LogDir(c.Name))
	fmt.Printf("  ccm-harness down --name %s\n", c.Name)
	return nil
}
