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
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/cluster/existing"
	"sigs.k8s.io/ccm-harness/options"
)

// newJoin is `join NODE`: a node added to a cluster up started, a join hook of the suite.
func newJoin(o *options.Options, name *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "join NODE",
		Short: "Add a node to a cluster started with up, as a machine whose kubelet joins it: its instance made in the cloud, then the node registered (a --join-hook for the suite with --cluster=existing)",
		Long: "Add a node to a cluster started with up (the same --name, --provider and --provider-config), as a machine whose kubelet\n" +
			"joins it: its instance made in the cloud, then the node registered tainted uninitialized, with the labels in\n" +
			"$" + existing.NodeLabelsEnv + " (k=v,...). It is the join hook of a suite that judges such a cluster as someone else's:\n" +
			"  --join-hook='ccm-harness join --name NAME --provider=PROVIDER'",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cluster.CheckName(*name); err != nil {
				return fmt.Errorf("--name: %w", err)
			}
			opts := *o
			// As up: the hook runs in the environment of the suite it
			// serves, which sets these for the cluster it judges.
			opts.Cluster, opts.LifecycleNodes, opts.JoinHook = options.Local, "", ""
			return joinNode(cmd.Context(), opts, *name, args[0])
		},
	}
	o.Bind(cmd.Flags(), options.FlagCluster, options.FlagKubeconfig, options.FlagLifecycleNodes, options.FlagJoinHook, options.FlagNodes,
		options.FlagArtifacts, options.FlagWait, options.FlagAPIServerPort)
	return cmd
}

// joinNode adds node to the running cluster called name, with the labels
// a join hook is given.
func joinNode(ctx context.Context, o options.Options, name, node string) error {
	if errs := validation.IsDNS1123Subdomain(node); len(errs) > 0 {
		return fmt.Errorf("node name %q: %s", node, strings.Join(errs, "; "))
	}
	labels := map[string]string{}
	if v := os.Getenv(existing.NodeLabelsEnv); v != "" {
		for _, kv := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return fmt.Errorf("$%s: %q is not key=value", existing.NodeLabelsEnv, kv)
			}
			labels[k] = val
		}
	}
	s, err := o.Resolve(logf)
	if err != nil {
		return err
	}
	c, err := s.Attach(ctx, name)
	if errors.Is(err, cluster.ErrNoCluster) {
		return fmt.Errorf("no cluster %s is up to join (start one with ccm-harness up --name %s)", name, name)
	}
	if err != nil {
		return err
	}
	if c.Nodes == nil {
		return fmt.Errorf("cluster %s: provider %s makes no instances here, so no node can join", name, s.Profile.Name)
	}
	if _, err := c.Nodes.Add(ctx, node, cluster.WithLabels(labels)); err != nil {
		return err
	}
	fmt.Printf("node %s joined cluster %s\n", node, name)
	return nil
}
