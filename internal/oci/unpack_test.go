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
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// entry is one entry of a crafted layer.
type entry struct {
	name string
	typ  byte
	link string // a link's target
	body string
}

func file(name, body string) entry   { return entry{name: name, typ: tar.TypeReg, body: body} }
func symlink(name, to string) entry  { return entry{name: name, typ: tar.TypeSymlink, link: to} }
func hardlink(name, to string) entry { return entry{name: name, typ: tar.TypeLink, link: to} }
func dir(name string) entry          { return entry{name: name, typ: tar.TypeDir} }

// craftedImage writes an image of the given layers, each a list of entries
// in the order its tar holds them, as a docker-archive.
func craftedImage(t *testing.T, layers ...[]entry) string {
	t.Helper()
	img := empty.Image
	for _, es := range layers {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, e := range es {
			h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: 0o755, Size: int64(len(e.body)), Format: tar.FormatPAX}
			if err := tw.WriteHeader(h); err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(tw, e.body); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
		if err != nil {
			t.Fatal(err)
		}
		if img, err = mutate.AppendLayers(img, l); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Config = "linux", runtime.GOARCH, v1.Config{Entrypoint: []string{"/ccm"}}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "img.tar")
	tag, _ := name.NewTag("example.com/crafted:v1")
	if err := tarball.WriteToFile(archive, tag, img); err != nil {
		t.Fatal(err)
	}
	return DockerArchive + archive
}

// TestUnpackContainsEveryEntry feeds layers that try to write outside the
// root: each image is refused, naming the entry, and nothing appears
// outside the root nor stays in the cache.
func TestUnpackContainsEveryEntry(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	climb := strings.Repeat("../", 20) + strings.TrimPrefix(outside, "/")
	for _, tc := range []struct {
		name   string
		layers [][]entry
		want   string
	}{
		{"a symlink out and a file through it, in one layer",
			[][]entry{{symlink("esc", outside), file("esc/pwned", "x")}}, "layer 1 of 1: entry esc/pwned: "},
		{"a file through a symlink out, the file first",
			[][]entry{{file("ccm", "x"), symlink("esc", outside)}, {file("esc/pwned", "x")}}, "layer 2 of 2: entry esc/pwned: "},
		{"a symlink out and a file through it, across two layers",
			[][]entry{{symlink("esc", outside)}, {file("esc/pwned", "x")}}, "layer 2 of 2: entry esc/pwned: "},
		{"a relative symlink that climbs out, and a file through it",
			[][]entry{{dir("a"), symlink("a/esc", climb)}, {file("a/esc/pwned", "x")}}, "layer 2 of 2: entry a/esc/pwned: "},
		{"a ../ name",
			[][]entry{{file("ccm", "x"), file("../../pwned", "x")}}, "layer 1 of 1: entry ../../pwned: the name leads out of the image's root"},
		{"an absolute name",
			[][]entry{{file(outside+"/pwned", "x")}}, "entry " + outside + "/pwned: the name leads out of the image's root"},
		{"a hard link to a file outside",
			[][]entry{{hardlink("pwned", secret)}}, "entry pwned: hard link to " + secret + ": the name leads out of the image's root"},
		{"a hard link that climbs out",
			[][]entry{{hardlink("pwned", climb+"/secret")}}, "entry pwned: hard link to " + climb + "/secret: the name leads out"},
		{"a hard link through a symlink out",
			[][]entry{{symlink("esc", outside)}, {hardlink("pwned", "esc/secret")}}, "layer 2 of 2: entry pwned: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := craftedImage(t, tc.layers...)
			cache := t.TempDir()
			_, err := Unpack(context.Background(), ref, cache)
			t.Logf("refused: %v", err)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("expected the image refused in one line holding %q, actual: %v", tc.want, err)
			}
			assertOnly(t, outside, "secret")
			if st, err := os.Stat(secret); err != nil || st.Sys().(*syscall.Stat_t).Nlink != 1 {
				t.Fatalf("the file outside was linked to or lost: %v", err)
			}
			assertNoRoot(t, cache)
			// Refused again, not taken from the cache.
			if _, again := Unpack(context.Background(), ref, cache); again == nil {
				t.Errorf("a second unpack of the refused image succeeded")
			}
		})
	}
}

// assertOnly fails unless dir holds exactly names.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("expected %s to hold only %v, actual %v: an entry escaped the root", dir, names, got)
	}
}

// assertNoRoot fails if the cache holds a root or a temporary folder.
func assertNoRoot(t *testing.T, cache string) {
	t.Helper()
	_ = filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == rootfs || strings.HasSuffix(d.Name(), ".tmp")) {
			t.Errorf("the refused image left %s in the cache", p)
		}
		return nil
	})
}

// TestUnpackLayers: layers apply in order, whiteouts delete what the
// layers below left, and a link inside the root is kept.
func TestUnpackLayers(t *testing.T) {
	ref := craftedImage(t,
		[]entry{dir("a"), file("a/x", "1"), file("b/y", "1"), file("c", "1"), file("usr/bin/ccm", "1"), symlink("bin", "usr/bin")},
		[]entry{file("a/.wh.x", ""), dir("b"), file("b/z", "2"), file("b/.wh..wh..opq", ""), dir("c"), file("c/d", "2"), file("bin/tool", "2"), hardlink("ccm2", "usr/bin/ccm")},
	)
	img, err := Unpack(context.Background(), ref, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	assertOnly(t, filepath.Join(img.Root, "a"))
	assertOnly(t, filepath.Join(img.Root, "b"), "z")
	assertOnly(t, filepath.Join(img.Root, "c"), "d")
	assertOnly(t, filepath.Join(img.Root, "usr", "bin"), "ccm", "tool")
	if data, err := os.ReadFile(filepath.Join(img.Root, "ccm2")); err != nil || string(data) != "1" {
		t.Errorf("the hard link inside the root: %q, %v", data, err)
	}
}

// TestUnpackOnlyWhenComplete: a root whose unpacking never completed (no
// marker) is unpacked again, and processes that unpack at once share one.
func TestUnpackOnlyWhenComplete(t *testing.T) {
	ref := craftedImage(t, []entry{file("ccm", "1")})
	cache := t.TempDir()
	img, err := Unpack(context.Background(), ref, cache)
	if err != nil {
		t.Fatal(err)
	}
	// As an unpacking cut short leaves it: a root without its marker.
	if err := os.Remove(filepath.Join(filepath.Dir(img.Root), unpacked)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(img.Root, "ccm")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = Unpack(context.Background(), ref, cache) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(img.Root, "ccm")); err != nil {
		t.Errorf("the unfinished root was used as it was: %v", err)
	}
	assertOnly(t, filepath.Dir(img.Root), rootfs, unpacked)
}
