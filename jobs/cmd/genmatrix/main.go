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

// Command genmatrix writes the matrix periodics (jobs.MatrixFile) from the
// cells the harness computes. Run it from the jobs module's folder.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/ccm-harness/jobs"
)

func main() {
	out, err := jobs.MatrixJobs(func(p string) ([]jobs.Cell, error) { return jobs.HarnessCells("..", p) })
	if err == nil {
		err = os.WriteFile(jobs.MatrixFile, out, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genmatrix:", err)
		os.Exit(1)
	}
}
