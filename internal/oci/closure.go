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
	"debug/elf"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// LibDirs are where a Debian root file system keeps shared libraries, in
// the order its dynamic loader searches them.
func LibDirs() []string {
	triplet := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[runtime.GOARCH]
	return []string{"/lib/" + triplet, "/usr/lib/" + triplet, "/lib", "/usr/lib"}
}

// Closure adds to files (image path -> file on disk) what the ELF
// executables and libraries among them need to run, taken from the root
// file system root: their interpreter and shared libraries, recursively.
// The images it feeds have no distribution of their own, so a binary
// linked against the node's glibc brings that glibc along.
func Closure(root string, files map[string]string) error {
	todo := make([]string, 0, len(files))
	for p := range files {
		todo = append(todo, p)
	}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		f, err := elf.Open(files[p])
		if err != nil {
			continue // not an ELF file: a script or data
		}
		interp, needed, err := dynamic(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", files[p], err)
		}
		if interp != "" {
			if _, ok := files[interp]; !ok {
				src, err := InRoot(root, interp)
				if err != nil {
					return fmt.Errorf("%s needs its interpreter %s: %w", p, interp, err)
				}
				files[interp] = src
				todo = append(todo, interp)
			}
		}
		for _, lib := range needed {
			if have(files, lib) {
				continue
			}
			found := false
			for _, dir := range LibDirs() {
				src, err := InRoot(root, path.Join(dir, lib))
				if err != nil {
					continue
				}
				dst := path.Join(LibDirs()[0], lib)
				files[dst] = src
				todo = append(todo, dst)
				found = true
				break
			}
			if !found {
				return fmt.Errorf("%s needs %s, which the node's root file system %s lacks", p, lib, root)
			}
		}
	}
	return nil
}

func have(files map[string]string, lib string) bool {
	for _, dir := range LibDirs() {
		if _, ok := files[path.Join(dir, lib)]; ok {
			return true
		}
	}
	return false
}

// dynamic returns an ELF file's interpreter and DT_NEEDED libraries; a
// static binary has neither.
func dynamic(f *elf.File) (interp string, needed []string, err error) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return "", nil, err
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	if f.Section(".dynamic") == nil {
		return interp, nil, nil
	}
	needed, err = f.ImportedLibraries()
	return interp, needed, err
}

// InRoot resolves p inside root as the root's own processes would see it:
// absolute symbolic links lead back into root, never to the host's files.
func InRoot(root, p string) (string, error) {
	cur := "/"
	parts := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	for hops := 0; len(parts) > 0; {
		next := path.Join(cur, parts[0])
		parts = parts[1:]
		fi, err := os.Lstat(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("%s: too many symbolic links", p)
		}
		target, err := os.Readlink(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		if !path.IsAbs(target) {
			target = path.Join(cur, target)
		}
		parts = append(strings.Split(strings.TrimPrefix(path.Clean(target), "/"), "/"), parts...)
		cur = "/"
	}
	return filepath.Join(root, cur), nil
}
