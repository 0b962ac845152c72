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
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"sigs.k8s.io/ccm-harness/conformance"
)

// newReport is `report DIR`: a run's conformance report checked and printed.
func newReport() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report ARTIFACTS_DIR",
		Short: "Check a run's conformance report against its JUnit, and print it",
		Long: "Check the conformance report a run wrote (ARTIFACTS_DIR/" + conformance.File + ", the --artifacts or $ARTIFACTS of the run)\n" +
			"against conformance/schema.json and against the run's own JUnit and metadata, so that a report edited by hand is caught,\n" +
			"then print it: a row per capability, each failure and known difference by spec ID.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := conformance.Check(args[0]); err != nil {
				return fmt.Errorf("report: %w", err)
			}
			r, err := conformance.Read(filepath.Join(args[0], conformance.File))
			if err != nil {
				return fmt.Errorf("report: %w", err)
			}
			r.WriteTable(os.Stdout)
			return nil
		},
	}
	return cmd
}
