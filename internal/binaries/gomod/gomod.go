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

// Package gomod generates the Go module a component is built in when it
// cannot be built with this repository's go.mod: an upstream CCM whose
// dependencies conflict with ours, a Kubernetes release other than
// go.mod's, or sources of this repository built against such a release.
// The go.sum there is filled and checked against the checksum database by
// `go build -mod=mod`, as any module's is.
package gomod

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"go/version"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// Spec is a module to generate.
type Spec struct {
	// Path is the generated module's path; Dir, the folder it is written
	// to (emptied first).
	Path, Dir string
	// Module is required at Version: the module whose main packages are
	// built.
	Module, Version string
	// Withheld are the modules Module's go.mod replaces with a fork the
	// module proxy refuses, each with the version of the module itself to
	// require instead.
	Withheld map[string]string
	// Ours is this repository's checkout, and OursPath its module path:
	// Align and Sources read them.
	Ours, OursPath string
	// Align requires this repository's dependency versions where they are
	// at least the component's own, and takes its replacements of
	// Kubernetes' staging modules: the packages shared with the harness
	// then come from the Go build cache.
	Align bool
	// Own are the modules (a path, or a prefix ending in "/") Align leaves
	// at Module's versions.
	Own []string
	// Sources are folders of this repository copied in, their imports of
	// this repository rewritten to Path.
	Sources []string
	// Floor are modules ("path version") required at least at these
	// versions, so that builds of one Kubernetes minor resolve one version
	// set (pins.Floors); Own's are left alone.
	Floor []string
}

// Generate writes the module: a go.mod that requires Module at Version and
// repeats the replace directives of Module's own go.mod (they apply only
// where it is the main module, and some modules build only with them;
// Kubernetes' staging modules required at the release's version) and
// its go version (which sets the binary's GODEBUG defaults, as upstream's
// own build does); with Sources, those copied in and the modules they
// import required at this repository's versions.
func Generate(ctx context.Context, s Spec) error {
	if err := os.RemoveAll(s.Dir); err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return err
	}
	gomod := filepath.Join(s.Dir, "go.mod")
	if err := os.WriteFile(gomod, []byte("module "+s.Path+"\n"), 0o644); err != nil {
		return err
	}
	out, err := Command(ctx, s.Dir, "mod", "download", "-json", s.Module+"@"+s.Version).Output()
	var dl struct{ GoMod, Error string }
	if jerr := json.Unmarshal(out, &dl); jerr != nil || dl.GoMod == "" {
		return fmt.Errorf("download %s@%s: %v %s", s.Module, s.Version, err, dl.Error)
	}
	upstream, err := os.ReadFile(dl.GoMod)
	if err != nil {
		return err
	}
	up, err := modfile.Parse(dl.GoMod, upstream, nil)
	if err != nil {
		return err
	}
	f := &modfile.File{}
	_ = f.AddModuleStmt(s.Path)
	if up.Go != nil {
		_ = f.AddGoStmt(up.Go.Version)
	}
	_ = f.AddRequire(s.Module, s.Version)
	repeatReplaces(f, up, s)
	if s.Align {
		if err := align(s.Ours, f, s.Own); err != nil {
			return err
		}
	}
	if len(s.Sources) > 0 {
		if err := copySources(s.Ours, s.Dir, s.OursPath, s.Path, s.Sources, f); err != nil {
			return err
		}
	}
	if err := raise(f, s.Floor, s.Own); err != nil {
		return err
	}
	data, err := f.Format()
	if err != nil {
		return err
	}
	return os.WriteFile(gomod, data, 0o644)
}

// repeatReplaces repeats in f the replace directives of up, Module's
// go.mod, as Generate says.
func repeatReplaces(f, up *modfile.File, s Spec) {
	for _, r := range up.Replace {
		if w, ok := s.Withheld[r.Old.Path]; ok {
			_ = f.AddRequire(r.Old.Path, w)
			continue
		}
		switch {
		case r.New.Version != "":
			_ = f.AddReplace(r.Old.Path, r.Old.Version, r.New.Path, r.New.Version)
		case strings.HasPrefix(r.New.Path, "./staging/"):
			// Kubernetes' staging modules live in its checkout; outside
			// it, they are the published modules of the same release.
			_ = f.AddReplace(r.Old.Path, "", r.Old.Path, StagingVersion(s.Version))
			// Required at that version too, not left at the v0.0.0
			// Kubernetes' go.mod requires: with -trimpath a package's
			// place in the Go build cache is keyed by its module's
			// version, and a release's control plane and the CCM built on
			// it from this repository's sources (whose go.mod requires
			// the staging modules at the release's version, as
			// k8s.io/cloud-provider's own go.mod does) must key them
			// alike to share them. Left at v0.0.0 in one, every package
			// of the release was compiled twice on empty caches. The
			// code generator and the samples link into no component (and
			// a proxy may not serve them); an aligned build keeps this
			// repository's versions.
			if !s.Align && !unlinked(r.Old.Path) {
				_ = f.AddRequire(r.Old.Path, StagingVersion(s.Version))
			}
		}
		// Another directory in upstream's checkout has nothing to repeat.
	}
}

// unlinked reports whether staging module path is one no Kubernetes
// component links: the code generator and the sample programs.
func unlinked(path string) bool {
	return path == "k8s.io/code-generator" || strings.HasPrefix(path, "k8s.io/sample-")
}

// StagingVersion is the version of Kubernetes' staging modules (k8s.io/api,
// ...) published with release v: v1.30.14 has v0.30.14.
func StagingVersion(v string) string { return "v0" + strings.TrimPrefix(v, "v1") }

// align adds this repository's requirements to f, but for own's, and its
// replacements of Kubernetes' staging modules in place of f's.
func align(ours string, f *modfile.File, own []string) error {
	mod, err := readGoMod(ours)
	if err != nil {
		return err
	}
	for _, r := range mod.Require {
		if owned(r.Mod.Path, own) {
			continue
		}
		if r.Mod.Version != "v0.0.0" && !slices.ContainsFunc(f.Require, func(q *modfile.Require) bool { return q.Mod.Path == r.Mod.Path }) {
			_ = f.AddRequire(r.Mod.Path, r.Mod.Version)
		}
	}
	for _, r := range mod.Replace {
		if strings.HasPrefix(r.Old.Path, "k8s.io/") && r.New.Version != "" {
			_ = f.AddReplace(r.Old.Path, r.Old.Version, r.New.Path, r.New.Version)
		}
	}
	return nil
}

// raise requires each module of floor ("path version") at least at its
// version, but for own's. A requirement at v0.0.0 stands for a replaced
// one (the replacement names the version) and is left alone.
func raise(f *modfile.File, floor, own []string) error {
	for _, line := range floor {
		path, v, ok := strings.Cut(line, " ")
		if !ok || !semver.IsValid(v) {
			return fmt.Errorf("floor %q: expected a module path and a version", line)
		}
		if owned(path, own) {
			continue
		}
		i := slices.IndexFunc(f.Require, func(r *modfile.Require) bool { return r.Mod.Path == path })
		if i >= 0 && (f.Require[i].Mod.Version == "v0.0.0" || semver.Compare(f.Require[i].Mod.Version, v) >= 0) {
			continue
		}
		if err := f.AddRequire(path, v); err != nil {
			return err
		}
	}
	return nil
}

// owned reports whether module path is one of own: the path itself, or
// under a prefix ending in "/".
func owned(path string, own []string) bool {
	return slices.ContainsFunc(own, func(o string) bool {
		return path == o || (strings.HasSuffix(o, "/") && strings.HasPrefix(path, o))
	})
}

func readGoMod(dir string) (*modfile.File, error) {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, err
	}
	return modfile.Parse("go.mod", data, nil)
}

// copySources copies the non-test Go files of dirs from this repository
// (ours, module oursPath) into the generated module at dir, rewriting
// imports of this repository to modPath, and requires in f each module
// they import at this repository's version, unless f replaces it already.
func copySources(ours, dir, oursPath, modPath string, dirs []string, f *modfile.File) error {
	mod, err := readGoMod(ours)
	if err != nil {
		return err
	}
	// Our sources may use language features newer than the release's go
	// version.
	if mod.Go != nil && (f.Go == nil || version.Compare("go"+mod.Go.Version, "go"+f.Go.Version) > 0) {
		_ = f.AddGoStmt(mod.Go.Version)
	}
	replaced := map[string]bool{}
	for _, r := range f.Replace {
		replaced[r.Old.Path] = true
	}
	required := map[string]bool{}
	for _, r := range f.Require {
		required[r.Mod.Path] = true
	}
	for _, d := range dirs {
		files, err := goFiles(ours, d)
		if err != nil {
			return err
		}
		if len(files) == 0 {
			return fmt.Errorf("no Go files in %s", filepath.Join(ours, d))
		}
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
		for _, file := range files {
			code, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), file, code, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range parsed.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if m := moduleOf(path, mod.Require); m != nil && !replaced[m.Path] && !required[m.Path] {
					_ = f.AddRequire(m.Path, m.Version)
					required[m.Path] = true
				}
			}
			code = bytes.ReplaceAll(code, []byte(`"`+oursPath+`/`), []byte(`"`+modPath+`/`))
			if err := os.WriteFile(filepath.Join(dir, d, filepath.Base(file)), code, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// goFiles are the non-test Go files of folder d of the checkout src.
func goFiles(src, d string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(src, d, "*.go"))
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "_test.go") }), nil
}

// moduleOf is the required module that provides package path, or nil.
func moduleOf(path string, reqs []*modfile.Require) *module.Version {
	var best *module.Version
	for _, r := range reqs {
		if (path == r.Mod.Path || strings.HasPrefix(path, r.Mod.Path+"/")) && (best == nil || len(r.Mod.Path) > len(best.Path)) {
			m := r.Mod
			best = &m
		}
	}
	return best
}

// SourcesHash digests the Go files of dirs of the checkout src, to key a
// build from them.
func SourcesHash(src string, dirs []string) (string, error) {
	h := sha256.New()
	for _, d := range dirs {
		files, err := goFiles(src, d)
		if err != nil {
			return "", err
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s %d\n", filepath.Join(d, filepath.Base(file)), len(data))
			h.Write(data)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// Command runs go in dir as its own main module, whatever go.work the
// user has.
func Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	return cmd
}
