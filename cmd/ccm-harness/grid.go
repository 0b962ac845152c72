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

	"github.com/spf13/cobra"

	"sigs.k8s.io/ccm-harness/reports"
)

// newGrid is `grid`: several runs side by side, a row per spec.
func newGrid() *cobra.Command {
	var gridOut string
	cmd := &cobra.Command{
		Use:   "grid --out grid.html ARTIFACTS_DIR...",
		Short: "Write a testgrid-like page of several runs: a row per spec, a column per run",
		Long: "Write a testgrid-like page of several runs from their artifact folders (each the --artifacts or $ARTIFACTS of\n" +
			"one run, holding its junit*.xml and metadata.json): a row per spec, a column per run, oldest first.",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("grid: no artifact folders given (name one or more, e.g. ccm-harness grid --out grid.html _artifacts /tmp/run2)")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, dirs []string) error {
			if err := reports.WriteGrid(gridOut, dirs); err != nil {
				return fmt.Errorf("grid: %w", err)
			}
			fmt.Printf("grid of %d runs: %s\n", len(dirs), gridOut)
			return nil
		},
	}
	cmd.Flags().StringVar(&gridOut, "out", "grid.html", "the page to write")
	return cmd
}
