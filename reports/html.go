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
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"sigs.k8s.io/ccm-harness/skew"
)

// The pages are single static files: styles inline, links relative to the
// artifacts folder, nothing fetched.
var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"dur":  func(d time.Duration) string { return d.Round(10 * time.Millisecond).String() },
	"join": func(s []string) string { return strings.Join(s, ", ") },
	"rel": func(base, target string) string {
		if r, err := filepath.Rel(base, target); err == nil {
			return r
		}
		return target
	},
}).Parse(`
{{define "style"}}<style>
body{font-family:sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
.passed{background:#c8e6c9}.failed{background:#e53935;color:#fff}.skipped{background:#eee;color:#555}
.missing{background:#fff}.outside{background:#fff3cd;color:#555}
.success{background:#c8e6c9}.failure{background:#e53935;color:#fff}.partial{background:#fff3cd}.not-run,.not-claimed{background:#eee;color:#555}
pre{white-space:pre-wrap;font-size:12px;background:#f7f7f7;padding:6px;max-height:20em;overflow:auto}
.summary span{display:inline-block;margin-right:1.5em;font-weight:bold}
.fig{font-size:12px;color:#333;white-space:nowrap}
.known{font-size:12px;color:#8a5a00;white-space:pre-wrap}
.timeline svg{max-width:100%;height:auto;border:1px solid #ccc}
</style>{{end}}

{{define "run"}}<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>ccm-harness run: {{index .Run.Metadata "provider"}} {{index .Run.Metadata "job-version"}}</title>{{template "style"}}</head><body>
<h1>ccm-harness run</h1>
<table>{{range $k, $v := .Run.Metadata}}<tr><th>{{$k}}</th><td>{{$v}}</td></tr>{{end}}</table>
<p class="summary"><span id="passed">{{.Passed}} passed</span><span id="failed">{{.Failed}} failed</span><span id="skipped">{{.Skipped}} skipped</span>{{if .NotSelected}}<span id="notselected">{{.NotSelected}} not selected</span>{{end}}</p>
{{if or .BringUpText .Run.BringUp}}<h2>Bring-up</h2>
{{if .Run.BringUp}}<table id="bringup">{{range .Run.BringUp}}<tr><th>{{.Name}}</th><td>{{.Duration}}</td></tr>{{end}}</table>{{end}}
{{if .BringUpText}}<pre id="bringup-steps">{{.BringUpText}}</pre>{{end}}{{end}}
{{with .Conformance}}<h2>Conformance</h2>
<p>Result: <span class="{{.Result}}">{{.Result}}</span> (<a href="conformance-report.yaml">conformance-report.yaml</a>)</p>
<table id="conformance"><tr><th>capability</th><th>claimed</th><th>result</th><th>passed</th><th>failed</th><th>skipped</th><th>not selected</th><th>not claimed</th><th>known differences</th><th>extended features claimed</th><th>not claimed</th></tr>
{{range .Capabilities}}<tr><td>{{.Name}}</td><td>{{.Claimed}}</td><td class="{{.Result}}">{{.Result}}</td><td>{{.Statistics.Passed}}</td><td>{{.Statistics.Failed}}</td><td>{{.Statistics.Skipped}}</td><td>{{.Statistics.NotSelected}}</td><td>{{.Statistics.NotClaimed}}</td><td>{{.Statistics.KnownDifferences}}</td><td>{{join .ClaimedFeatures}}</td><td>{{join .UnclaimedFeatures}}</td></tr>
{{end}}</table>{{end}}
<h2>Scenarios</h2>
<table id="matrix"><tr><th>tag</th><th>spec</th><th>{{index .Run.Metadata "provider"}}</th><th>time</th><th>measured</th><th>why</th></tr>
{{range .Run.Cases}}{{if not .NotSelected}}<tr><td>{{range .Tags}}[{{.}}] {{end}}</td><td>{{.Name}}</td><td class="{{.Outcome}}">{{.Outcome}}</td><td>{{dur .Duration}}</td><td>{{range .Measured}}<div class="fig">{{.Name}}: {{.Duration}}</div>{{end}}</td><td>{{if ne .Outcome "passed"}}{{.Message}}{{end}}{{range .KnownDifferences}}<div class="known">known difference: {{.}}</div>{{end}}</td></tr>
{{end}}{{end}}</table>
{{if .NotSelected}}<p>{{.NotSelected}} specs not selected by the label filter or focus are not listed.</p>{{end}}
{{if .Failures}}<h2>Failures</h2>{{range .Failures}}<h3 class="failed">{{.Name}}</h3><pre>{{.Message}}</pre>{{if .Detail}}<p>Where it failed, and what the CCM and the cloud logged meanwhile:</p><pre class="excerpt">{{.Detail}}</pre>{{end}}{{end}}{{end}}
<h2>Leader migration</h2>
{{if .Timelines}}<div id="timelines">{{range .Timelines}}<h3><a href="{{rel $.Run.Dir .SVG}}">{{rel $.Run.Dir .SVG}}</a>{{if .JSON}} (<a href="{{rel $.Run.Dir .JSON}}">data</a>){{end}}</h3><div class="timeline">{{.Inline}}</div>{{end}}</div>
{{else}}<p id="timelines">No timeline in this run: the leader-migration scenario writes leader-migration/timeline.svg.</p>{{end}}
{{if .Links}}<h2>Logs</h2><ul>{{range .Links}}<li><a href="{{rel $.Run.Dir .}}">{{rel $.Run.Dir .}}</a></li>{{end}}</ul>{{end}}
</body></html>{{end}}

{{define "grid"}}<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>ccm-harness grid</title>{{template "style"}}</head><body>
<h1>ccm-harness: {{len .Runs}} runs</h1>
{{if .Capabilities}}<table id="capabilities"><tr><th>capability</th>{{range .Runs}}<th>{{index .Metadata "provider"}}<br>{{index .Metadata "job-version"}}</th>{{end}}</tr>
{{range .Capabilities}}<tr><td>{{.Name}}</td>{{range .Cells}}<td class="{{.}}">{{.}}</td>{{end}}</tr>
{{end}}</table>{{end}}
<table id="grid"><tr><th>spec</th>{{range .Runs}}<th>{{index .Metadata "provider"}}<br>{{index .Metadata "job-version"}}{{with index .Metadata "kubernetes-version"}}<br>Kubernetes {{.}}{{end}}{{with index .Metadata "skew"}}<br><span class="skew">{{.}}</span>{{end}}<br>{{.Dir}}</th>{{end}}</tr>
{{range $row := .Rows}}<tr><td>{{$row.Name}}</td>{{range $row.Cells}}{{if .Outside}}<td class="outside">outside the skew policy: {{.Outcome}}{{else}}<td class="{{.Outcome}}">{{.Outcome}}{{end}}{{range .Measured}}<div class="fig">{{.Name}}: {{.Duration}}</div>{{end}}</td>{{end}}</tr>
{{end}}</table></body></html>{{end}}
`))

// WriteRunReport writes dir/report.html for the run in dir and returns its
// path.
func WriteRunReport(dir string) (string, error) {
	r, err := ReadRun(dir)
	if err != nil {
		return "", err
	}
	var failures []Case
	for _, c := range r.Cases {
		if c.Outcome == Failed {
			failures = append(failures, c)
		}
	}
	var links []string
	var timelines []timeline
	migration := filepath.Join(dir, MigrationDir)
	_ = walkRun(dir, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil || d.IsDir():
		case d.Name() == "timeline.svg" && strings.HasPrefix(p, migration+string(filepath.Separator)):
			t := timeline{SVG: p}
			// The picture in the page: the harness drew it (migration/),
			// so its markup is trusted.
			if data, err := os.ReadFile(p); err == nil {
				t.Inline = template.HTML(data) //nolint:gosec // the harness's own SVG
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), "timeline.json")); err == nil {
				t.JSON = filepath.Join(filepath.Dir(p), "timeline.json")
			}
			timelines = append(timelines, t)
		case strings.HasSuffix(p, ".log") || strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".svg") || strings.HasSuffix(p, "bringup.txt"):
			links = append(links, p)
		}
		return nil
	})
	passed, failed, skipped := r.Counts()
	notSelected := 0
	for _, c := range r.Cases {
		if c.NotSelected() {
			notSelected++
		}
	}
	bringUp, _ := os.ReadFile(filepath.Join(dir, "bringup.txt"))
	out := filepath.Join(dir, "report.html")
	return out, writePage(out, "run", map[string]any{
		"Run": r, "Failures": failures, "Links": links, "Timelines": timelines, "BringUpText": string(bringUp),
		"Passed": passed, "Failed": failed, "Skipped": skipped - notSelected, "NotSelected": notSelected,
		"Conformance": readVerdicts(dir),
	})
}

// verdicts are what the page shows of the run's conformance report
// (package conformance writes it, from this package's Run: it is read here
// as a published file, as JUnit is, not through that package).
type verdicts struct {
	Result       string
	Capabilities []struct {
		Name       string
		Claimed    bool
		Result     string
		Statistics struct{ Passed, Failed, Skipped, NotSelected, NotClaimed, KnownDifferences int }
		// ClaimedFeatures and UnclaimedFeatures are its extended ones.
		ClaimedFeatures, UnclaimedFeatures []string
	}
}

// readVerdicts reads dir's conformance report, nil without one.
func readVerdicts(dir string) *verdicts {
	data, err := os.ReadFile(filepath.Join(dir, "conformance-report.yaml"))
	if err != nil {
		return nil
	}
	var v verdicts
	if yaml.Unmarshal(data, &v) != nil || v.Result == "" {
		return nil
	}
	return &v
}

// timeline is a leader-migration timeline the run left: the picture, and
// the data it was drawn from if present.
type timeline struct {
	SVG, JSON string
	Inline    template.HTML
}

type gridRow struct {
	Name  string
	Cells []gridCell
}

// gridCell is a spec in one run: how it ended and what it measured, so a
// latency that grows shows along the row.
type gridCell struct {
	Outcome  Outcome
	Measured []Measurement
	// Outside: the run's CCM stands outside the version skew policy
	// against its cluster; its outcome is information, not a verdict.
	Outside bool
}

// WriteGrid writes a testgrid-like page to out: one row per spec, one
// column per run, oldest run first.
func WriteGrid(out string, dirs []string) error {
	var runs []*Run
	for _, d := range dirs {
		r, err := ReadRun(d)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Started.Before(runs[j].Started) })
	names := map[string]bool{}
	for _, r := range runs {
		for _, c := range r.Cases {
			names[c.Name] = true
		}
	}
	var rows []gridRow
	for name := range names {
		row := gridRow{Name: name}
		for _, r := range runs {
			cell := gridCell{Outcome: "missing"}
			for _, c := range r.Cases {
				if c.Name == name {
					cell = gridCell{Outcome: c.Outcome, Measured: c.Measured, Outside: strings.HasPrefix(r.Metadata[KeySkew], skew.Outside)}
				}
			}
			row.Cells = append(row.Cells, cell)
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return writePage(out, "grid", map[string]any{"Runs": runs, "Rows": rows, "Capabilities": capabilityRows(runs)})
}

// capabilityRow is a capability's result in each run, from the runs'
// conformance reports: "" where a run has none.
type capabilityRow struct {
	Name  string
	Cells []string
}

// capabilityRows are the grid's rows per capability, in the reports'
// order; none when no run has a report.
func capabilityRows(runs []*Run) []capabilityRow {
	var rows []capabilityRow
	index := map[string]int{}
	for i, r := range runs {
		v := readVerdicts(r.Dir)
		if v == nil {
			continue
		}
		for _, c := range v.Capabilities {
			j, ok := index[c.Name]
			if !ok {
				j = len(rows)
				index[c.Name] = j
				rows = append(rows, capabilityRow{Name: c.Name, Cells: make([]string, len(runs))})
			}
			rows[j].Cells[i] = c.Result
		}
	}
	return rows
}

func writePage(path, name string, data any) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pages.ExecuteTemplate(f, name, data); err != nil {
		f.Close()
		return fmt.Errorf("render %s: %w", path, err)
	}
	return f.Close()
}
