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

// Package conformance writes the report a provider can publish: which CCM,
// at which version, on which Kubernetes and which kind of cluster, claimed
// which capabilities, and, for each, every spec's result with its failure
// or skip reason and its known differences (conformance-report.yaml, beside
// the JUnit). It reads a run's artifacts (reports.Run) and names specs by
// their IDs (package specs); its types are versioned, and schema.json in
// this folder is their JSON schema.
package conformance

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/ccm-harness/reports"
	"sigs.k8s.io/ccm-harness/specs"
)

// File is the report's name in a run's artifacts folder.
const File = "conformance-report.yaml"

// APIVersion and Kind identify the report's schema.
const (
	APIVersion = "ccm-harness.sigs.k8s.io/v1alpha1"
	Kind       = "ConformanceReport"
)

// HarnessVersion is the harness's own version, set at build time (the
// Makefile's -X); empty in a build without it.
var HarnessVersion string

// Report is a run's conformance report.
type Report struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Date is when the run started (RFC 3339).
	Date           string         `json:"date"`
	Implementation Implementation `json:"implementation"`
	// KubernetesVersion is the cluster's kube-apiserver's; empty when the
	// bring-up failed before it was known.
	KubernetesVersion string `json:"kubernetesVersion"`
	// Cluster is how the cluster was made: local, kind, or existing (one
	// the harness did not make).
	Cluster        string `json:"cluster"`
	HarnessVersion string `json:"harnessVersion,omitempty"`
	// Result is the run's: failure if a claimed capability failed,
	// success if every claimed one succeeded, partial otherwise.
	Result     Result     `json:"result"`
	Statistics Statistics `json:"statistics"`
	// Capabilities are every capability of the suite, claimed or not, and
	// the leader-migration specs as one more.
	Capabilities []Capability `json:"capabilities"`
}

// Implementation is the CCM under test.
type Implementation struct {
	// Provider is the harness's provider profile.
	Provider string `json:"provider"`
	// CCM is the CCM's name, Version its release where the harness knows
	// it, and Source where it came from (a module at its version, an
	// image, a cluster's own).
	CCM     string `json:"ccm,omitempty"`
	Version string `json:"version,omitempty"`
	Source  string `json:"source,omitempty"`
	// Skew is where the CCM stands against the kube-apiserver under the
	// version skew policy.
	Skew string `json:"skew,omitempty"`
}

// Result is a capability's or a run's verdict.
type Result string

const (
	// Success: every spec ran and passed (known differences, each with
	// its evidence, allowed).
	Success Result = "success"
	// Partial: none failed, but some did not run (skipped, with the
	// reason, or not selected).
	Partial Result = "partial"
	// Failure: a spec failed.
	Failure Result = "failure"
	// NotRun: claimed, but no spec of it ran: no verdict.
	NotRun Result = "not-run"
	// NotClaimed: the profile does not claim it; its specs did not run.
	NotClaimed Result = "not-claimed"
)

// Statistics count specs by how they ended.
type Statistics struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// NotSelected are the specs the label filter left out.
	NotSelected int `json:"notSelected"`
	// NotClaimed are the specs of a capability or an extended feature the
	// profile does not claim.
	NotClaimed int `json:"notClaimed"`
	// KnownDifferences are the passed specs' steps that failed as the
	// CCM's known differences say.
	KnownDifferences int `json:"knownDifferences"`
}

// Capability is one capability's results.
type Capability struct {
	// Name is the capability (specs.Capability), or leader-migration.
	Name    string `json:"name"`
	Claimed bool   `json:"claimed"`
	// Result is success when every core spec and every spec of a claimed
	// extended feature passed; specs of unclaimed features do not count.
	Result Result `json:"result"`
	// ClaimedFeatures and UnclaimedFeatures are its extended features
	// (specs.Features) the profile claims, and those it does not.
	ClaimedFeatures   []specs.Feature `json:"claimedFeatures,omitempty"`
	UnclaimedFeatures []specs.Feature `json:"unclaimedFeatures,omitempty"`
	Statistics        Statistics      `json:"statistics"`
	Specs             []Spec          `json:"specs"`
}

// Spec is one spec's result.
type Spec struct {
	ID   specs.ID `json:"id"`
	Text string   `json:"text"`
	// Level is core or extended; Feature the extended one's feature.
	Level   specs.Level   `json:"level"`
	Feature specs.Feature `json:"feature,omitempty"`
	// Result is passed, failed, skipped, not-selected or not-claimed.
	Result string `json:"result"`
	// Message is the failure's first line, or why it skipped.
	Message string `json:"message,omitempty"`
	// KnownDifferences are its steps that failed as the CCM's known
	// differences say, each with its evidence and what it showed.
	KnownDifferences []string `json:"knownDifferences,omitempty"`
}

// The results of a spec.
const (
	SpecPassed      = "passed"
	SpecFailed      = "failed"
	SpecSkipped     = "skipped"
	SpecNotSelected = "not-selected"
	SpecNotClaimed  = "not-claimed"
)

// leaderMigration groups the leader-migration specs, which no capability
// claims: they need a release to migrate from.
const leaderMigration = "leader-migration"

// Of builds the report of a run read back from its artifacts, whose
// metadata say what ran (reports.Setup's keys) and whose JUnit names each
// spec. A test case of no spec of the suite (a suite node that failed)
// counts against no capability; the run's own verdict says it.
func Of(run *reports.Run) (*Report, error) {
	md := run.Metadata
	if md[reports.KeyProvider] == "" {
		return nil, fmt.Errorf("%s: metadata.json names no provider: not a run of this suite", run.Dir)
	}
	claimed := strings.Split(md[reports.KeyCapabilities], ",")
	claimedFeatures := strings.Split(md[reports.KeyFeatures], ",")
	r := &Report{
		APIVersion: APIVersion, Kind: Kind,
		Implementation: Implementation{
			Provider: md[reports.KeyProvider], CCM: md[reports.KeyCCM], Version: md[reports.KeyCCMVersion],
			Source: md[reports.KeyCCMSource], Skew: md[reports.KeySkew],
		},
		KubernetesVersion: md[reports.KeyKubernetesVersion],
		Cluster:           md[reports.KeyCluster],
		HarnessVersion:    HarnessVersion,
	}
	if !run.Started.IsZero() {
		r.Date = run.Started.UTC().Format(time.RFC3339)
	}
	byName := map[string]*Capability{}
	for _, c := range slices.Concat(specs.Capabilities, []specs.Capability{""}) {
		name := groupName(c)
		cr := Capability{Name: name, Claimed: c == "" || slices.Contains(claimed, name)}
		for _, f := range specs.FeatureList() {
			switch {
			case specs.Features[f] != c:
			case cr.Claimed && slices.Contains(claimedFeatures, string(f)):
				cr.ClaimedFeatures = append(cr.ClaimedFeatures, f)
			default:
				cr.UnclaimedFeatures = append(cr.UnclaimedFeatures, f)
			}
		}
		r.Capabilities = append(r.Capabilities, cr)
	}
	for i := range r.Capabilities {
		byName[r.Capabilities[i].Name] = &r.Capabilities[i]
	}
	for _, c := range run.Cases {
		s, ok := specs.Of(c.Name)
		if !ok {
			continue
		}
		group := byName[groupOf(s)]
		sr := Spec{ID: s.ID, Text: s.Text, Level: s.Level(), Feature: s.Feature, Message: firstLine(c.Message), KnownDifferences: c.KnownDifferences}
		switch {
		case c.Outcome == reports.Passed:
			sr.Result = SpecPassed
		case c.Outcome == reports.Failed:
			sr.Result = SpecFailed
		case c.NotSelected():
			sr.Result = SpecNotSelected
		case !group.Claimed || (s.Feature != "" && !slices.Contains(group.ClaimedFeatures, s.Feature)):
			// Skipped as the profile claims neither its capability nor
			// its feature: not a gap in what was claimed.
			sr.Result = SpecNotClaimed
		default:
			sr.Result = SpecSkipped
		}
		group.Specs = append(group.Specs, sr)
	}
	// A spec of the suite the run's JUnit does not name (a run of another
	// build of the suite) did not run here.
	for _, s := range specs.All {
		group := byName[groupOf(s)]
		if !slices.ContainsFunc(group.Specs, func(sr Spec) bool { return sr.ID == s.ID }) {
			group.Specs = append(group.Specs, Spec{ID: s.ID, Text: s.Text, Level: s.Level(), Feature: s.Feature, Result: SpecNotSelected, Message: "not in the run's JUnit"})
		}
	}
	r.judge()
	return r, nil
}

// judge counts each capability's specs by result and gives each
// capability, and the run, its verdict.
func (r *Report) judge() {
	r.Statistics = Statistics{}
	anyFailed, allSucceeded := false, true
	for i := range r.Capabilities {
		c := &r.Capabilities[i]
		slices.SortFunc(c.Specs, func(a, b Spec) int { return strings.Compare(a.ID.String(), b.ID.String()) })
		c.Statistics = Statistics{}
		for _, s := range c.Specs {
			c.Statistics.count(s)
		}
		st := c.Statistics
		switch {
		case !c.Claimed:
			c.Result = NotClaimed
		case st.Failed > 0:
			c.Result = Failure
		case st.Passed == 0:
			c.Result = NotRun
		case st.Skipped > 0 || st.NotSelected > 0:
			c.Result = Partial
		default:
			c.Result = Success
		}
		r.Statistics.Passed += st.Passed
		r.Statistics.Failed += st.Failed
		r.Statistics.Skipped += st.Skipped
		r.Statistics.NotSelected += st.NotSelected
		r.Statistics.NotClaimed += st.NotClaimed
		r.Statistics.KnownDifferences += st.KnownDifferences
		// The leader-migration specs need releases a CCM may not have:
		// they count against the run only when they ran.
		if c.Name == leaderMigration && c.Result == NotRun {
			continue
		}
		anyFailed = anyFailed || c.Result == Failure
		allSucceeded = allSucceeded && (c.Result == Success || c.Result == NotClaimed)
	}
	switch {
	case anyFailed:
		r.Result = Failure
	case r.Statistics.Passed == 0:
		r.Result = NotRun
	case allSucceeded:
		r.Result = Success
	default:
		r.Result = Partial
	}
}

// count counts s by its result.
func (st *Statistics) count(s Spec) {
	switch s.Result {
	case SpecPassed:
		st.Passed++
		st.KnownDifferences += len(s.KnownDifferences)
	case SpecFailed:
		st.Failed++
	case SpecNotSelected:
		st.NotSelected++
	case SpecNotClaimed:
		st.NotClaimed++
	default:
		st.Skipped++
	}
}

// groupOf is the capability a spec's result counts for.
func groupOf(s specs.Spec) string { return groupName(s.Capability) }

// groupName is a capability's name in the report: leader-migration for
// the specs of none.
func groupName(c specs.Capability) string {
	if c == "" {
		return leaderMigration
	}
	return string(c)
}

// Write writes the report of the run in dir to dir/File.
func Write(dir string) (*Report, error) {
	run, err := reports.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	r, err := Of(run)
	if err != nil {
		return nil, err
	}
	data, err := marshal(r)
	if err != nil {
		return nil, err
	}
	header := "# The conformance report of a run of the CCM harness (ccm-harness.sigs.k8s.io/v1alpha1,\n# schema: conformance/schema.json), written from the run's JUnit and metadata.\n"
	return r, os.WriteFile(filepath.Join(dir, File), append([]byte(header), data...), 0o644)
}

// Line is the report in one line for the console: the run's result and
// each claimed capability's, and where the report is.
func Line(r *Report, path string) string {
	var parts []string
	for _, c := range r.Capabilities {
		if c.Claimed && !(c.Name == leaderMigration && c.Result == NotRun) {
			parts = append(parts, c.Name+" "+string(c.Result))
		}
	}
	return fmt.Sprintf("conformance: %s (%s): %s", r.Result, strings.Join(parts, ", "), path)
}

// marshal writes r as YAML in its fields' order (sigs.k8s.io/yaml sorts
// keys, which puts kind after capabilities): the JSON encoding's order,
// block style.
func marshal(r *Report) ([]byte, error) {
	j, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var n yaml3.Node
	if err := yaml3.Unmarshal(j, &n); err != nil {
		return nil, err
	}
	var plain func(*yaml3.Node)
	plain = func(n *yaml3.Node) {
		n.Style = 0
		for _, c := range n.Content {
			plain(c)
		}
	}
	plain(&n)
	var b bytes.Buffer
	enc := yaml3.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// WriteTable prints the report for a person: what was judged, a row per
// capability, then each failure and known difference by spec ID.
func (r *Report) WriteTable(w io.Writer) {
	impl := r.Implementation
	what := impl.CCM
	if impl.Version != "" {
		what += " " + impl.Version
	}
	if what == "" {
		what = "the cluster's CCM"
	}
	k8s := "Kubernetes " + r.KubernetesVersion
	if r.KubernetesVersion == "" {
		k8s = "a Kubernetes never reached (the bring-up failed)"
	}
	fmt.Fprintf(w, "%s (provider %s) on %s, %s cluster: %s\n", what, impl.Provider, k8s, r.Cluster, r.Result)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  CAPABILITY\tCLAIMED\tRESULT\tPASSED\tFAILED\tSKIPPED\tNOT SELECTED\tNOT CLAIMED\tKNOWN DIFFERENCES")
	for _, c := range r.Capabilities {
		st := c.Statistics
		fmt.Fprintf(tw, "  %s\t%t\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", c.Name, c.Claimed, c.Result, st.Passed, st.Failed, st.Skipped, st.NotSelected, st.NotClaimed, st.KnownDifferences)
	}
	_ = tw.Flush()
	for _, c := range r.Capabilities {
		if c.Claimed && len(c.ClaimedFeatures)+len(c.UnclaimedFeatures) > 0 {
			fmt.Fprintf(w, "%s: extended features claimed: %s; not claimed: %s\n", c.Name, featureList(c.ClaimedFeatures), featureList(c.UnclaimedFeatures))
		}
	}
	for _, c := range r.Capabilities {
		for _, s := range c.Specs {
			switch {
			case s.Result == SpecFailed:
				fmt.Fprintf(w, "FAILED %s: %s\n", s.ID, s.Message)
			case len(s.KnownDifferences) > 0:
				for _, d := range s.KnownDifferences {
					fmt.Fprintf(w, "KNOWN DIFFERENCE %s: %s\n", s.ID, firstLine(d))
				}
			}
		}
	}
}

func featureList(fs []specs.Feature) string {
	if len(fs) == 0 {
		return "none"
	}
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

// Read reads a report a run wrote.
func Read(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := yaml.UnmarshalStrict(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.APIVersion != APIVersion || r.Kind != Kind {
		return nil, fmt.Errorf("%s: apiVersion %q kind %q, want %q %q", path, r.APIVersion, r.Kind, APIVersion, Kind)
	}
	return &r, nil
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return first
}

//go:embed schema.json
var schemaJSON []byte

// Validate checks the report at path against schema.json.
func Validate(path string) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return fmt.Errorf("conformance/schema.json: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		return err
	}
	sch, err := c.Compile("schema.json")
	if err != nil {
		return fmt.Errorf("conformance/schema.json: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Check checks the report in a run's folder against the run's JUnit and
// metadata: it must be the report they make, so that one edited by hand
// is caught.
func Check(dir string) error {
	path := filepath.Join(dir, File)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no %s in %s: give the artifacts folder of a run of the suite (its --artifacts or $ARTIFACTS), which writes one beside its JUnit", File, dir)
	}
	if err := Validate(path); err != nil {
		return err
	}
	written, err := Read(path)
	if err != nil {
		return err
	}
	run, err := reports.ReadRun(dir)
	if err != nil {
		return err
	}
	made, err := Of(run)
	if err != nil {
		return err
	}
	// Built by another binary, perhaps: the harness's version is not the
	// run's to say.
	made.HarnessVersion = written.HarnessVersion
	a, _ := yaml.Marshal(written)
	b, _ := yaml.Marshal(made)
	if !bytes.Equal(a, b) {
		return fmt.Errorf("%s is not the report of the run's JUnit and metadata (%s): edited, or written by another run", path, firstDiff(string(a), string(b)))
	}
	return nil
}

// firstDiff is the first line where the written report and the made one
// differ.
func firstDiff(written, made string) string {
	w, m := strings.Split(written, "\n"), strings.Split(made, "\n")
	for i := range min(len(w), len(m)) {
		if w[i] != m[i] {
			return fmt.Sprintf("line %d says %q, the run %q", i+1, strings.TrimSpace(w[i]), strings.TrimSpace(m[i]))
		}
	}
	return fmt.Sprintf("%d lines against the run's %d", len(w), len(m))
}

// SameResults says how b's results differ from a's, or nil: the CCM, the
// Kubernetes minor's release and the cluster, the verdicts, the statistics
// and each spec's result. Dates, the harness's version, where the CCM came
// from and the messages (which name a run's random namespaces) may differ.
func SameResults(a, b *Report) error {
	if err := sameSubject(a, b); err != nil {
		return err
	}
	if a.Result != b.Result {
		return fmt.Errorf("result %s, against %s", a.Result, b.Result)
	}
	results := func(r *Report) map[string]string {
		m := map[string]string{}
		for _, c := range r.Capabilities {
			m[c.Name] = fmt.Sprintf("claimed %t, %s, %+v, features %v, not %v", c.Claimed, c.Result, c.Statistics, c.ClaimedFeatures, c.UnclaimedFeatures)
			for _, s := range c.Specs {
				m[s.ID.String()] = fmt.Sprintf("%s, %d known differences", s.Result, len(s.KnownDifferences))
			}
		}
		return m
	}
	am, bm := results(a), results(b)
	keys := make([]string, 0, len(am)+len(bm))
	for k := range am {
		keys = append(keys, k)
	}
	for k := range bm {
		if _, ok := am[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if am[k] != bm[k] {
			return fmt.Errorf("%s: %q, against %q", k, am[k], bm[k])
		}
	}
	return nil
}
