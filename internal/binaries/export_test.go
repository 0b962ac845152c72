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

package binaries

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/ccm-harness/internal/binaries/gomod"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
)

// OnFloor reports whether c's build takes a floor pinned for its minor
// (even an empty one).
func OnFloor(c Component) bool {
	_, ok := pins.Floors[pins.Minor(c.version())]
	return c.Floored && !c.aligned() && ok
}

// BuildList generates, in dir, the module c is built in, and returns what
// its build links: for each module one of its packages comes from, the
// version that keys those packages in the Go build cache (the required
// one) and, if replaced, the code that is built instead.
func (s *Source) BuildList(ctx context.Context, c Component, dir string) (map[string]string, error) {
	spec, err := s.generate(ctx, c, []string{c.buildName()}, dir)
	if err != nil {
		return nil, err
	}
	pkg := c.Package
	if len(c.Sources) > 0 {
		pkg = spec.Path + strings.TrimPrefix(c.Package, pins.ModulePath)
	}
	args := []string{"list", "-mod=mod", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{with .Replace}} => {{.Path}} {{.Version}}{{end}}{{end}}"}
	if len(c.Tags) > 0 {
		args = append(args, "-tags", strings.Join(c.Tags, ","))
	}
	out, err := gomod.Command(ctx, dir, append(args, pkg)...).Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %v", dir, err)
	}
	mods := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, v, ok := strings.Cut(line, " ")
		if !ok || path == spec.Path {
			continue
		}
		// Replaced by itself at the version required (Kubernetes' staging
		// modules): the same key, the same code.
		if req, repl, ok := strings.Cut(v, " => "); ok && repl == path+" "+req {
			v = req
		}
		mods[path] = v
	}
	return mods, nil
}
