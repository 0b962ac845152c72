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
