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
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Outcome of one spec.
type Outcome string

const (
	Passed  Outcome = "passed"
	Failed  Outcome = "failed"
	Skipped Outcome = "skipped"
)

// Case is one spec of a run.
type Case struct {
	Name     string
	Tags     []string
	Outcome  Outcome
	Duration time.Duration
	// Message is the failure message or skip reason.
	Message string
	// Detail is the failure body: the stack and log excerpts.
	Detail string
	// Measured are the figures the spec reported (MeasurementsFile).
	Measured []Measurement
	// KnownDifferences are the steps that failed as the CCM's known
	// differences say, each with its evidence and its failure: the spec
	// passed only with them.
	KnownDifferences []string
}

// KnownDifferenceProperty is the JUnit property of a step that failed as
// its CCM's known difference says (scenarios.KnownDifferenceEntry).
const KnownDifferenceProperty = "known difference"

// Run is what one artifacts folder says about a run.
type Run struct {
	Dir      string
	Metadata map[string]string
	Started  time.Time
	Cases    []Case
	// BringUp are the bring-up's figures (node initialization p50, p99).
	BringUp []Measurement
}

var tagRe = regexp.MustCompile(`\[([a-z0-9:-]+)\]`)

// ReadRun reads the JUnit files (testgrid's junit*.xml naming) and
// metadata.json and started.json of an artifacts folder.
func ReadRun(dir string) (*Run, error) {
	r := &Run{Dir: dir, Metadata: map[string]string{}}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s is not a folder (give a run's artifacts folder, the --artifacts or $ARTIFACTS it wrote to)", dir)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "metadata.json")); err == nil {
		_ = json.Unmarshal(data, &r.Metadata)
	}
	var st Started
	if data, err := os.ReadFile(filepath.Join(dir, "started.json")); err == nil && json.Unmarshal(data, &st) == nil {
		r.Started = time.Unix(st.Timestamp, 0)
	}
	files := junitFiles(dir)
	if len(files) == 0 {
		return nil, fmt.Errorf("no junit*.xml in %s: not a run's artifacts folder (give the --artifacts or $ARTIFACTS a run wrote to)", dir)
	}
	for _, f := range files {
		cases, err := readJUnit(f)
		if err != nil {
			return nil, err
		}
		r.Cases = append(r.Cases, cases...)
	}
	sort.Slice(r.Cases, func(i, j int) bool { return r.Cases[i].Name < r.Cases[j].Name })
	for _, m := range readMeasurements(dir) {
		if m.Spec == BringUp {
			r.BringUp = append(r.BringUp, m)
			continue
		}
		for i := range r.Cases {
			if r.Cases[i].Name == m.Spec {
				r.Cases[i].Measured = append(r.Cases[i].Measured, m)
			}
		}
	}
	return r, nil
}

type junitCase struct {
	Name    string  `xml:"name,attr"`
	Time    float64 `xml:"time,attr"`
	Failure *struct {
		Message string `xml:"message,attr"`
		Body    string `xml:",chardata"`
	} `xml:"failure"`
	Error *struct {
		Message string `xml:"message,attr"`
		Body    string `xml:",chardata"`
	} `xml:"error"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
	// Properties are the spec's report entries, each value as JSON.
	Properties []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	} `xml:"properties>property"`
}

func readJUnit(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Suites []struct {
			Cases []junitCase `xml:"testcase"`
		} `xml:"testsuite"`
		Cases []junitCase `xml:"testcase"` // a root <testsuite>
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	all := doc.Cases
	for _, s := range doc.Suites {
		all = append(all, s.Cases...)
	}
	var out []Case
	for _, jc := range all {
		// Suite-level nodes report only when they fail.
		if !strings.HasPrefix(jc.Name, "[It]") && jc.Failure == nil && jc.Error == nil {
			continue
		}
		c := Case{Name: strings.TrimSpace(strings.TrimPrefix(jc.Name, "[It]")), Outcome: Passed, Duration: time.Duration(jc.Time * float64(time.Second))}
		for _, m := range tagRe.FindAllStringSubmatch(c.Name, -1) {
			// A label the spec's text also carries appears twice.
			if !slices.Contains(c.Tags, m[1]) {
				c.Tags = append(c.Tags, m[1])
			}
		}
		for _, p := range jc.Properties {
			var text string
			if p.Name == KnownDifferenceProperty && json.Unmarshal([]byte(p.Value), &text) == nil {
				c.KnownDifferences = append(c.KnownDifferences, text)
			}
		}
		switch {
		case jc.Failure != nil:
			c.Outcome, c.Message, c.Detail = Failed, failureMessage(jc.Failure.Message, jc.Failure.Body), jc.Failure.Body
		case jc.Error != nil:
			c.Outcome, c.Message, c.Detail = Failed, failureMessage(jc.Error.Message, jc.Error.Body), jc.Error.Body
		case jc.Skipped != nil:
			// Ginkgo writes "skipped - <reason>" for a Skip in the spec,
			// and a bare "skipped" for a spec the filters left out.
			c.Outcome, c.Message = Skipped, strings.TrimPrefix(strings.TrimPrefix(jc.Skipped.Message, "skipped"), " - ")
		}
		out = append(out, c)
	}
	return out, nil
}

// ginkgoFailure is how Ginkgo begins a failure body: the state, the
// message, then where it failed.
var ginkgoFailure = regexp.MustCompile(`(?s)^\[[A-Z]+\] (.*?)\nIn \[`)

// failureMessage is the message attribute or, where the e2e framework left
// it empty (so that tools which join attribute and body do not show the
// message twice), the message Ginkgo put at the top of the body.
func failureMessage(attr, body string) string {
	if attr != "" {
		return attr
	}
	if m := ginkgoFailure.FindStringSubmatch(body); m != nil {
		return m[1]
	}
	first, _, _ := strings.Cut(strings.TrimSpace(body), "\n")
	return first
}

// NotSelected reports whether the label filter or focus left the spec out:
// Ginkgo lists it as skipped, without a reason.
func (c Case) NotSelected() bool { return c.Outcome == Skipped && c.Message == "" }

// Counts returns how many specs passed, failed and were skipped.
func (r *Run) Counts() (passed, failed, skipped int) {
	for _, c := range r.Cases {
		switch c.Outcome {
		case Passed:
			passed++
		case Failed:
			failed++
		case Skipped:
			skipped++
		}
	}
	return
}

// junitFiles are the non-empty junit*.xml files of a run's folder: a tool
// that writes its JUnit when it exits (kubetest2's junit_runner.xml) leaves
// an empty file there meanwhile.
func junitFiles(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "junit*.xml"))
	var out []string
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.Size() > 0 {
			out = append(out, f)
		}
	}
	return out
}

// RemovePreviousJUnit removes the JUnit files an earlier run left in dir,
// so that a run into a folder used before (make e2e, then make e2e
// PROVIDER=aws, both into _artifacts) is read, summarized and reported as
// itself, not with the other's specs. Empty ones stay: a tool that writes
// its JUnit when it exits holds such a file open meanwhile.
func RemovePreviousJUnit(dir string) error {
	for _, f := range junitFiles(dir) {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("remove the previous run's %s: %w (remove it, or give the run a folder of its own)", f, err)
		}
	}
	return nil
}
