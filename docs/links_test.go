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

// Package docs holds the test that the repository's Markdown links hold:
// a doc whose link leads nowhere is worse than none.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// link is a Markdown link's target: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// heading is a Markdown heading.
var heading = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*$`)

// TestLinksResolve checks every relative link of every Markdown file of
// the repository: its file exists and, for one with a #fragment into a
// Markdown file, a heading there makes that anchor.
func TestLinksResolve(t *testing.T) {
	root := ".."
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "_output", "_artifacts", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d Markdown files; the repository has more", len(files))
	}
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := stripCode(string(data))
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			dest := f
			if path != "" {
				dest = filepath.Join(filepath.Dir(f), path)
			}
			checked++
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s: link %q: %s does not exist", f, target, dest)
				continue
			}
			if frag != "" && strings.HasSuffix(dest, ".md") && !hasAnchor(dest, frag) {
				t.Errorf("%s: link %q: no heading of %s makes anchor #%s", f, target, dest, frag)
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked %d links; the docs have more", checked)
	}
}

// stripCode drops fenced code blocks, whose brackets are code, not links.
func stripCode(s string) string {
	var out []string
	in := false
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if !in {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// hasAnchor reports whether a heading of the Markdown file path makes the
// anchor frag, as GitHub makes them: lower case, spaces to hyphens,
// punctuation but hyphens and underscores dropped.
func hasAnchor(path, frag string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, m := range heading.FindAllStringSubmatch(stripCode(string(data)), -1) {
		if anchor(m[1]) == frag {
			return true
		}
	}
	return false
}

func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestMakeTestGroups checks that development.md lists make test's groups
// as the Makefile's TEST_TARGETS has them, in order.
func TestMakeTestGroups(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^TEST_TARGETS := ((?:.*\\\n)*.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("no TEST_TARGETS in the Makefile")
	}
	targets := strings.Join(strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " ")), " ")
	var want []string
	for _, g := range strings.Fields(targets) {
		want = append(want, strings.ReplaceAll(g, "+", " + "))
	}
	doc, err := os.ReadFile("development.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	i := strings.Index(text, "```\n"+want[0]+"\n")
	if i < 0 {
		t.Fatalf("development.md has no code block beginning with make test's first group %q", want[0])
	}
	block, _, _ := strings.Cut(text[i+4:], "```")
	if got := strings.Fields(strings.ReplaceAll(block, " + ", "+")); strings.Join(got, " ") != targets {
		t.Errorf("development.md lists make test's groups as\n%s\nthe Makefile's TEST_TARGETS:\n%s", strings.Join(got, " "), targets)
	}
}
