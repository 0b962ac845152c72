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
