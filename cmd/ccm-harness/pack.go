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
	"path/filepath"

	"github.com/spf13/cobra"

	"sigs.k8s.io/ccm-harness/internal/oci"
)

// newPack is `pack BINARY`: a container image tarball of one executable, with no Docker.
func newPack() *cobra.Command {
	var packTag, packOut string
	cmd := &cobra.Command{
		Use:   "pack BINARY",
		Short: "Write a container image tarball (docker save format) whose entrypoint is BINARY, with no Docker",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := oci.Pack(args[0], filepath.Base(args[0]), packTag, packOut); err != nil {
				return fmt.Errorf("pack %s: %w", args[0], err)
			}
			fmt.Printf("image %s: docker-archive:%s\n", packTag, packOut)
			return nil
		},
	}
	cmd.Flags().StringVar(&packTag, "tag", "ccm-harness.local/ccm:dev", "the image's tag")
	cmd.Flags().StringVar(&packOut, "out", "ccm.tar", "the tarball to write")
	return cmd
}
