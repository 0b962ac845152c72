package oci

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Pack writes a docker-archive tarball, as `docker save` would, of an image
// holding only binary, at /usr/local/bin/<base>, as its entrypoint: a CCM
// image made with no Docker, for the harness's own tests and for users who
// have a binary and want the image path exercised.
func Pack(binary, base, tag, dest string) error {
	data, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	path := "/usr/local/bin/" + base
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, dir := range []string{"usr/", "usr/local/", "usr/local/bin/"} {
		if err := tw.WriteHeader(&tar.Header{Name: dir, Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
			return err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Name: path[1:], Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(data))}); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layer := func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }
	return Write(dest, tag, layer, v1.Config{Entrypoint: []string{path}, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}})
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
