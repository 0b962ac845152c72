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

// Package oci reads container images with go-containerregistry, from a
// docker-archive tarball (`docker save`), an OCI layout directory or a
// registry, and unpacks each into a root file system keyed by its digest,
// for an OCI runtime to run (internal/container); no entry of a layer can
// write outside that root (unpack.go). Pack writes images, with
// no Docker, of a binary and the libraries it links.
package oci

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Reference prefixes for images that are files rather than in a registry.
const (
	DockerArchive = "docker-archive:"
	OCILayout     = "oci:"
)

// Image is an unpacked image: its root file system and what its config
// says of how to run it.
type Image struct {
	// Ref is the reference it was read from.
	Ref string
	// Root is the flattened root file system, shared by every container
	// of the image: containers mount it read-only.
	Root string
	// Entrypoint and Cmd are the image's; a pod's command replaces the
	// one and its args the other.
	Entrypoint, Cmd []string
	// Env is the image's environment.
	Env []string
	// User is the user the process runs as: a name or uid, with an
	// optional group; empty for root.
	User string
	// WorkingDir is the process's working directory; empty for /.
	WorkingDir string
	// Digest identifies the image.
	Digest string
}

// Open reads the image ref names: docker-archive:PATH, oci:DIR, or a
// registry reference.
func Open(ref string) (v1.Image, error) {
	switch {
	case strings.HasPrefix(ref, DockerArchive):
		path := strings.TrimPrefix(ref, DockerArchive)
		img, err := tarball.ImageFromPath(path, nil)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w (want a `docker save` tarball holding one image)", ref, err)
		}
		return img, nil
	case strings.HasPrefix(ref, OCILayout):
		path := strings.TrimPrefix(ref, OCILayout)
		idx, err := layout.ImageIndexFromPath(path)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w (want an OCI image layout directory)", ref, err)
		}
		m, err := idx.IndexManifest()
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", ref, err)
		}
		if len(m.Manifests) != 1 {
			return nil, fmt.Errorf("image %s: the layout holds %d manifests; want exactly one image", ref, len(m.Manifests))
		}
		return idx.Image(m.Manifests[0].Digest)
	default:
		r, err := name.ParseReference(ref)
		if err != nil {
			return nil, fmt.Errorf("image %q: %w (or give docker-archive:PATH or oci:DIR)", ref, err)
		}
		img, err := remote.Image(r, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH}))
		if err != nil {
			return nil, fmt.Errorf("image %s: %w (is the registry reachable? a tarball works offline: docker-archive:PATH)", ref, err)
		}
		return img, nil
	}
}

// Unpack unpacks the image ref into cacheDir/<digest>/rootfs, once per
// digest however many processes ask at once, and checks that it is for
// this machine and has a command. A root is used only if its unpacking
// completed; one that did not is unpacked again.
func Unpack(ctx context.Context, ref, cacheDir string) (*Image, error) {
	img, err := Open(ref)
	if err != nil {
		return nil, err
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", ref, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image %s: config: %w", ref, err)
	}
	if cfg.OS != "" && cfg.OS != "linux" || cfg.Architecture != "" && cfg.Architecture != runtime.GOARCH {
		return nil, fmt.Errorf("image %s is for %s/%s, this machine is linux/%s: build or pull the image for linux/%s", ref, cfg.OS, cfg.Architecture, runtime.GOARCH, runtime.GOARCH)
	}
	if len(cfg.Config.Entrypoint) == 0 && len(cfg.Config.Cmd) == 0 {
		return nil, fmt.Errorf("image %s has no entrypoint or cmd: set one to the CCM binary (e.g. ENTRYPOINT [\"/bin/ccm\"])", ref)
	}
	dir := filepath.Join(cacheDir, digest.Hex)
	if err := unpackOnce(ctx, img, dir); err != nil {
		return nil, fmt.Errorf("image %s: %w", ref, err)
	}
	return &Image{
		Ref: ref, Root: filepath.Join(dir, rootfs), Digest: digest.String(),
		Entrypoint: cfg.Config.Entrypoint, Cmd: cfg.Config.Cmd, Env: cfg.Config.Env,
		User: cfg.Config.User, WorkingDir: cfg.Config.WorkingDir,
	}, nil
}

// Command is what a container of the image runs: command and args replace
// the image's entrypoint and cmd as a pod's do (a command alone drops the
// image's cmd). Its first word is found in the image's PATH, as a runtime
// would, and checked to be an executable for this machine.
func (img *Image) Command(command, args []string) ([]string, error) {
	argv := append(append([]string(nil), img.Entrypoint...), img.Cmd...)
	switch {
	case len(command) > 0:
		argv = append(append([]string(nil), command...), args...)
	case len(args) > 0:
		argv = append(append([]string(nil), img.Entrypoint...), args...)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("image %s: no command: the image has no entrypoint and the container gives none", img.Ref)
	}
	exe, err := resolve(img.Root, argv[0], img.Env)
	if err != nil {
		return nil, fmt.Errorf("image %s: command %s: %w", img.Ref, argv[0], err)
	}
	if err := checkArch(exe); err != nil {
		return nil, fmt.Errorf("image %s: command %s: %w", img.Ref, argv[0], err)
	}
	return argv, nil
}

// resolve finds command in the root: an absolute path, or a name looked up
// in the image's PATH. Symlinks resolve inside the root.
func resolve(root, command string, env []string) (string, error) {
	candidates := []string{command}
	if !strings.HasPrefix(command, "/") {
		candidates = nil
		path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
		for _, e := range env {
			if v, ok := strings.CutPrefix(e, "PATH="); ok {
				path = v
			}
		}
		for _, dir := range filepath.SplitList(path) {
			candidates = append(candidates, filepath.Join(dir, command))
		}
	}
	for _, c := range candidates {
		p, err := InRoot(root, c)
		if err != nil {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("no such executable in the image")
}

// checkArch refuses an ELF executable built for another machine; scripts
// and other files are the runtime's business.
func checkArch(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[runtime.GOARCH]; want != 0 && f.Machine != want {
		return fmt.Errorf("built for %s, this machine is %s: build the image for linux/%s", f.Machine, runtime.GOARCH, runtime.GOARCH)
	}
	return nil
}
