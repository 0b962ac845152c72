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
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/cluster/local"
)

// newDown is `down`: a cluster up started, stopped and its state removed.
func newDown(name *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop a cluster started with up and remove its state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cluster.CheckName(*name); err != nil {
				return fmt.Errorf("--name: %w", err)
			}
			err := local.New().Down(cmd.Context(), *name)
			if errors.Is(err, cluster.ErrNoCluster) {
				// As `kind delete cluster`: taking down what is not up
				// is done, but the user hears which clusters there are.
				fmt.Println(err)
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Printf("cluster %s is down\n", *name)
			return nil
		},
	}
	return cmd
}
