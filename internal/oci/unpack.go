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

package oci

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"sigs.k8s.io/ccm-harness/internal/filelock"
)

// An unpacked image's folder holds its root and, written last, the marker
// that says the unpacking completed.
const (
	rootfs   = "rootfs"
	unpacked = "unpacked"
)

// OCI whiteouts: a file that deletes its namesake of the layers below, and
// one that empties its folder of them.
const (
	whiteoutPrefix = ".wh."
	opaqueWhiteout = ".wh..wh..opq"
)

// unpackOnce unpacks img into dir/rootfs unless a completed unpacking is
// there, under a lock per digest, in a folder of its own that becomes the
// root only once every layer is applied.
func unpackOnce(ctx context.Context, img v1.Image, dir string) error {
	done := filepath.Join(dir, unpacked)
	if _, err := os.Stat(done); err == nil {
		return nil
	}
	unlock, err := filelock.Lock(ctx, dir+".lock", "the image's unpacking, which another process is doing")
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(done); err == nil {
		return nil // another process unpacked it while we waited
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root := filepath.Join(dir, rootfs)
	if err := os.RemoveAll(root); err != nil { // an unpacking that never completed
		return err
	}
	tmp, err := os.MkdirTemp(dir, rootfs+"-*.tmp")
	if err != nil {
		return err
	}
	if err := applyLayers(img, tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, root); err != nil {
		return err
	}
	return os.WriteFile(done, nil, 0o644)
}

// applyLayers applies the image's layers to dir in order, as a runtime's
// snapshotter does. Every write goes through an os.Root, so no entry (a
// "../" name, a file under a symbolic link that leads out, a hard link to
// a file outside) can touch anything outside dir: such an entry, or any
// error in a layer's stream, refuses the image, naming the entry.
func applyLayers(img v1.Image, dir string) error {
	layers, err := img.Layers()
	if err != nil {
		return fmt.Errorf("layers: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for i, l := range layers {
		if err := applyLayer(root, l); err != nil {
			return fmt.Errorf("layer %d of %d: %w", i+1, len(layers), err)
		}
	}
	return nil
}

func applyLayer(root *os.Root, l v1.Layer) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	// An opaque whiteout empties its folder of the layers below only:
	// what this layer wrote there stays.
	written := map[string]bool{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the layer: %w", err)
		}
		name, err := entryName(h.Name)
		if err != nil {
			return fmt.Errorf("entry %s: %w", h.Name, err)
		}
		if name == "." {
			continue
		}
		if err := applyEntry(root, tr, h, name, written); err != nil {
			return fmt.Errorf("entry %s: %w", h.Name, err)
		}
	}
}

// entryName is a layer entry's name relative to the root; a name that is
// absolute or climbs out with ".." is refused, as the image that holds it.
func entryName(name string) (string, error) {
	clean := path.Clean(strings.TrimPrefix(name, "./"))
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("the name leads out of the image's root")
	}
	return clean, nil
}

func applyEntry(root *os.Root, r io.Reader, h *tar.Header, name string, written map[string]bool) error {
	dir, base := path.Split(name)
	dir = path.Clean(dir)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	switch {
	case base == opaqueWhiteout:
		return emptyBelow(root, dir, written)
	case strings.HasPrefix(base, whiteoutPrefix):
		return root.RemoveAll(path.Join(dir, strings.TrimPrefix(base, whiteoutPrefix)))
	}
	for p := name; p != "."; p = path.Dir(p) {
		written[p] = true
	}
	perm := fs.FileMode(h.Mode) & fs.ModePerm
	// An entry replaces what lower layers left at its name, except a
	// folder, which a folder merges into.
	if fi, err := root.Lstat(name); err == nil && !(fi.IsDir() && h.Typeflag == tar.TypeDir) {
		if err := root.RemoveAll(name); err != nil {
			return err
		}
	}
	switch h.Typeflag {
	case tar.TypeDir:
		if err := root.MkdirAll(name, perm|0o700); err != nil {
			return err
		}
		return root.Chmod(name, perm|0o700)
	case tar.TypeReg:
		f, err := root.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_EXCL, perm)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	case tar.TypeSymlink:
		// The link is made as it is; it is followed only inside the root,
		// by a container's runtime or by InRoot.
		return root.Symlink(h.Linkname, name)
	case tar.TypeLink:
		target, err := entryName(h.Linkname)
		if err != nil {
			return fmt.Errorf("hard link to %s: %w", h.Linkname, err)
		}
		return root.Link(target, name)
	}
	// Devices and fifos are no part of a CCM's needs.
	return nil
}

// emptyBelow removes what the layers below left in dir.
func emptyBelow(root *os.Root, dir string, written map[string]bool) error {
	f, err := root.Open(dir)
	if err != nil {
		return err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, n := range names {
		if p := path.Join(dir, n); !written[p] {
			if err := root.RemoveAll(p); err != nil {
				return err
			}
		}
	}
	return nil
}
