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

package reports

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2/reporters"
)

// ExcerptEntry names the Ginkgo report entry that carries a failed spec's
// log excerpt to the JUnit file, where FoldExcerpts moves it into the
// failure body.
const ExcerptEntry = "ccm-harness log excerpt"

// Excerpt is the value of an ExcerptEntry. Ginkgo renders an entry's
// String() into the spec's timeline (stdout and JUnit system-err) but
// writes its JSON into the JUnit properties: the lines then appear once,
// in the failure body, and not three times.
type Excerpt string

func (Excerpt) String() string { return "(in the JUnit failure body)" }

// Longer lines are cut: one line of a dumped object would push every other
// line out of view.
const maxExcerptLine = 400

// tailWindow bounds how much of a log is read for its last lines, so a
// spec that ran for minutes against a chatty component costs no more.
const tailWindow = 256 << 10

// LogMarks holds how far each log file under a folder was written when a
// spec started, so that what the components wrote while it ran can be cut
// out once it failed.
type LogMarks struct {
	dir     string
	keep    func(name string) bool
	offsets map[string]int64
}

// MarkLogs records the size of every file under dir whose base name keep
// accepts (nil keeps all).
func MarkLogs(dir string, keep func(name string) bool) *LogMarks {
	m := &LogMarks{dir: dir, keep: keep, offsets: map[string]int64{}}
	for _, name := range m.files() {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil {
			m.offsets[name] = st.Size()
		}
	}
	return m
}

// files are the kept files under dir, as paths relative to it: a cluster a
// spec brought up for itself logs to a folder of its own.
func (m *LogMarks) files() []string {
	var out []string
	_ = filepath.WalkDir(m.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || (m.keep != nil && !m.keep(d.Name())) {
			return nil
		}
		if rel, err := filepath.Rel(m.dir, p); err == nil {
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// Excerpt returns, for every kept file, the last maxLines lines written
// since the marks were taken; a file that appeared since counts from its
// start.
func (m *LogMarks) Excerpt(maxLines int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Logs written while the spec ran (last %d lines of each, under %s):\n", maxLines, filepath.Base(m.dir))
	for _, name := range m.files() {
		lines, err := tail(filepath.Join(m.dir, name), m.offsets[name], maxLines)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "--- %s: %v\n", name, err)
		case len(lines) == 0:
			fmt.Fprintf(&b, "--- %s: nothing\n", name)
		default:
			fmt.Fprintf(&b, "--- %s\n%s\n", name, strings.Join(lines, "\n"))
		}
	}
	return b.String()
}

// tail returns the last n lines of path after byte offset from.
func tail(path string, from int64, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < from {
		from = 0 // truncated or replaced since the mark
	}
	start, partial := from, false
	if st.Size()-from > tailWindow {
		start, partial = st.Size()-tailWindow, true
	}
	data := make([]byte, st.Size()-start)
	if _, err := f.ReadAt(data, start); err != nil && err != io.EOF {
		return nil, err
	}
	text := strings.TrimRight(string(data), "\n")
	if text == "" {
		return nil, nil
	}
	lines := strings.Split(text, "\n")
	if partial {
		lines = lines[1:] // the window began mid-line
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, line := range lines {
		if len(line) > maxExcerptLine {
			lines[i] = line[:maxExcerptLine] + " [...]"
		}
	}
	return lines, nil
}

// FoldExcerpts moves the ExcerptEntry of every failed testcase in dir's
// junit*.xml files into its failure (or error) body, after the failure
// Ginkgo wrote there, and drops it from the testcase's properties. It
// returns how many testcases it changed. Files are read and written with
// Ginkgo's own JUnit types, so they keep the shape testgrid parses.
func FoldExcerpts(dir string) (int, error) {
	files := junitFiles(dir)
	total := 0
	for _, path := range files {
		n, err := foldFile(path)
		if err != nil {
			return total, fmt.Errorf("fold log excerpts into %s: %w", path, err)
		}
		total += n
	}
	return total, nil
}

func foldFile(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var doc reporters.JUnitTestSuites
	if err := xml.Unmarshal(data, &doc); err != nil {
		return 0, err
	}
	changed := 0
	for i := range doc.TestSuites {
		for j := range doc.TestSuites[i].TestCases {
			if foldCase(&doc.TestSuites[i].TestCases[j]) {
				changed++
			}
		}
	}
	if changed == 0 {
		return 0, nil
	}
	// Encoded as Ginkgo encodes it, so the file differs only where folded.
	var b strings.Builder
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("  ", "    ")
	if err := enc.Encode(doc); err != nil {
		return 0, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return 0, err
	}
	return changed, os.Rename(tmp, path)
}

func foldCase(tc *reporters.JUnitTestCase) bool {
	if tc.Properties == nil {
		return false
	}
	var excerpt string
	found := false
	kept := tc.Properties.Properties[:0]
	for _, p := range tc.Properties.Properties {
		if p.Name != ExcerptEntry {
			kept = append(kept, p)
			continue
		}
		found = true
		if err := json.Unmarshal([]byte(p.Value), &excerpt); err != nil {
			excerpt = p.Value
		}
	}
	if !found {
		return false
	}
	tc.Properties.Properties = kept
	if len(kept) == 0 {
		tc.Properties = nil
	}
	switch {
	case tc.Failure != nil:
		tc.Failure.Description = joinBody(tc.Failure.Description, excerpt)
	case tc.Error != nil:
		tc.Error.Description = joinBody(tc.Error.Description, excerpt)
	}
	return true
}

func joinBody(body, excerpt string) string {
	if body != "" && !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return body + "\n" + excerpt
}
