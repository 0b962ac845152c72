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
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The user a packed image runs as, as distroless's nonroot images do: a
// CCM needs no root, and a manifest's runAsNonRoot then holds.
const (
	packUser = "nonroot"
	packUID  = "65532"
	packHome = "/home/nonroot"
)

// Pack writes a docker-archive tarball, as `docker save` would, of an image
// holding binary at /usr/local/bin/<base> as its entrypoint, the shared
// libraries it links (its ELF closure, from this machine's root), and an
// /etc/passwd naming the user it runs as: a CCM image made with no Docker,
// for the harness's own tests and for users who have a binary and want the
// image path exercised.
func Pack(binary, base, tag, dest string) error {
	path := "/usr/local/bin/" + base
	files := map[string]string{path: binary}
	if err := Closure("/", files); err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	var mkdirs func(string) error
	mkdirs = func(dir string) error {
		if dir == "/" || dirs[dir] {
			return nil
		}
		if err := mkdirs(filepath.Dir(dir)); err != nil {
			return err
		}
		dirs[dir] = true
		return tw.WriteHeader(&tar.Header{Name: dir[1:] + "/", Typeflag: tar.TypeDir, Mode: 0o755})
	}
	add := func(name string, mode int64, data []byte) error {
		if err := mkdirs(filepath.Dir(name)); err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: name[1:], Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(data))}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		data, err := os.ReadFile(files[n])
		if err != nil {
			return err
		}
		if err := add(n, 0o755, data); err != nil {
			return err
		}
	}
	if err := add("/etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/sbin/nologin\n"+packUser+":x:"+packUID+":"+packUID+":"+packUser+":"+packHome+":/sbin/nologin\n")); err != nil {
		return err
	}
	if err := add("/etc/group", 0o644, []byte("root:x:0:\n"+packUser+":x:"+packUID+":\n")); err != nil {
		return err
	}
	for _, d := range []string{packHome, "/tmp"} {
		if err := mkdirs(d); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layer := func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }
	return Write(dest, tag, layer, v1.Config{
		Entrypoint: []string{path},
		Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		User:       packUser,
		WorkingDir: packHome,
	})
}

// Write saves an image of one layer, whose tar stream layer writes, with
// config as its runtime settings, as a docker-archive tarball tagged tag at
// dest, as `docker save` would.
func Write(dest, tag string, layer func(io.Writer) error, config v1.Config) error {
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(layer(pw)) }()
		return pr, nil
	})
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Config = config
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("tag %q: %w", tag, err)
	}
	return tarball.WriteToFile(dest, ref, img)
}
