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

package nodeimage

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"sigs.k8s.io/ccm-harness/internal/oci"
)

// image is a container image the nodes need, made from files of the host
// (binaries) and of the node's root file system (their libraries).
type image struct {
	// Ref is the name kubeadm, the kubelet or the e2e framework asks for.
	Ref string
	// Files maps paths in the image to files on disk; links maps paths in
	// the image to symbolic link targets.
	Files map[string]string
	Links map[string]string
	// Entrypoint and Cmd are the image's; PATH is set for all.
	Entrypoint, Cmd []string
}

// write saves img as a docker-archive tarball at dest, as `docker save`
// would, after adding the libraries its files need from root.
func (img image) write(root, dest string) error {
	if err := oci.Closure(root, img.Files); err != nil {
		return fmt.Errorf("image %s: %w", img.Ref, err)
	}
	return oci.Write(dest, img.Ref, img.tar, v1.Config{
		Entrypoint: img.Entrypoint, Cmd: img.Cmd,
		Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
	})
}

// tar writes the image's one layer: its files, links and the directories
// above them, in a stable order so equal inputs make equal layers.
func (img image) tar(w io.Writer) error {
	tw := tar.NewWriter(w)
	dirs := map[string]bool{}
	var entries []string
	for p := range img.Files {
		entries = append(entries, p)
	}
	for p := range img.Links {
		entries = append(entries, p)
	}
	sort.Strings(entries)
	for _, p := range entries {
		for d := path.Dir(p); d != "/" && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var dirList []string
	for d := range dirs {
		dirList = append(dirList, d)
	}
	sort.Strings(dirList)
	for _, d := range dirList {
		if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(d, "/") + "/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
			return err
		}
	}
	for _, p := range entries {
		name := strings.TrimPrefix(p, "/")
		if target, ok := img.Links[p]; ok {
			if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: target, Mode: 0o777}); err != nil {
				return err
			}
			continue
		}
		if err := copyInto(tw, name, img.Files[p]); err != nil {
			return err
		}
	}
	return tw.Close()
}

func copyInto(tw *tar.Writer, name, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: int64(fi.Mode().Perm()), Size: fi.Size()}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}
