// Package oci runs a container image's entrypoint as a host process, with
// no container runtime: the local runtime has none, and a CCM is a static
// Go binary that needs nothing of its image but itself. The image is read
// with go-containerregistry from a docker-archive tarball (`docker save`),
// an OCI layout directory, or a registry, flattened into a folder keyed by
// its digest, and its entrypoint checked: for this machine's architecture,
// and statically linked, since it runs against the host's libraries.
package oci

import (
	"archive/tar"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Reference prefixes for images that are files rather than in a registry.
const (
	DockerArchive = "docker-archive:"
	OCILayout     = "oci:"
)

// Entrypoint is an unpacked image's command.
type Entrypoint struct {
	// Path is the executable inside the unpacked root.
	Path string
	// Args are the entrypoint's own arguments; the image's Cmd is not
	// used: the harness gives the flags, as a pod's args replace Cmd.
	Args []string
	// Env is the image's environment.
	Env []string
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

// Unpack flattens the image ref into cacheDir/<digest>/rootfs, once per
// digest, and returns its entrypoint.
func Unpack(ref, cacheDir string) (*Entrypoint, error) {
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
	command := cfg.Config.Entrypoint
	if len(command) == 0 {
		command = cfg.Config.Cmd
	}
	if len(command) == 0 {
		return nil, fmt.Errorf("image %s has no entrypoint or cmd: set one to the CCM binary (e.g. ENTRYPOINT [\"/bin/ccm\"])", ref)
	}
	root := filepath.Join(cacheDir, digest.Hex, "rootfs")
	if _, err := os.Stat(root); err != nil {
		if err := unpack(img, root); err != nil {
			return nil, fmt.Errorf("image %s: unpack: %w", ref, err)
		}
	}
	exe, err := resolve(root, command[0], cfg.Config.Env)
	if err != nil {
		return nil, fmt.Errorf("image %s: entrypoint %s: %w", ref, command[0], err)
	}
	if err := checkStatic(exe); err != nil {
		return nil, fmt.Errorf("image %s: entrypoint %s: %w", ref, command[0], err)
	}
	return &Entrypoint{Path: exe, Args: command[1:], Env: cfg.Config.Env, Digest: digest.String()}, nil
}

// unpack writes the flattened filesystem to a temporary folder beside root
// and renames it into place, so a half-written root is never used.
func unpack(img v1.Image, root string) error {
	tmp := root + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		target := filepath.Join(tmp, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, target); err != nil && !os.IsExist(err) {
				return err
			}
		}
		// Devices, fifos and hard links are no part of a CCM's needs.
	}
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, root)
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
		p, err := inRoot(root, c)
		if err != nil {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("no such executable in the image")
}

// inRoot follows symlinks of p as the image would see them, never leaving
// root.
func inRoot(root, p string) (string, error) {
	cur := "/"
	parts := strings.Split(strings.Trim(filepath.Clean(p), "/"), "/")
	for hops := 0; len(parts) > 0; {
		next := filepath.Join(cur, parts[0])
		parts = parts[1:]
		st, err := os.Lstat(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		if st.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("too many symlinks")
		}
		link, err := os.Readlink(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(cur, link)
		}
		parts = append(strings.Split(strings.Trim(filepath.Clean(link), "/"), "/"), parts...)
		cur = "/"
	}
	return filepath.Join(root, cur), nil
}

// checkStatic refuses a dynamically linked executable: on the host it would
// load the host's libraries, not the image's.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("not an ELF executable: %w", err)
	}
	defer f.Close()
	if want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[runtime.GOARCH]; want != 0 && f.Machine != want {
		return fmt.Errorf("built for %s, this machine is %s: build the image for linux/%s", f.Machine, runtime.GOARCH, runtime.GOARCH)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("dynamically linked; the local runtime runs a CCM image's entrypoint on the host, so it must be static (build it with CGO_ENABLED=0)")
		}
	}
	return nil
}
