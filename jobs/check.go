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

// Package jobs holds this repository's Prow job configs and testgrid
// configuration, and the check that keeps them loadable: Prow's own strict
// loader, testgrid dashboards that exist, job names Kubernetes accepts, and
// commands that are make targets of this repository.
package jobs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/prow/pkg/config"
	"sigs.k8s.io/yaml"
)

// Testgrid annotations every job must carry.
const (
	annDashboards = "testgrid-dashboards"
	annTab        = "testgrid-tab-name"
	annEmail      = "testgrid-alert-email"
)

// BuildCluster is the Prow build cluster the jobs run on: one of
// test-infra's community clusters, which need no cloud credentials of
// the job's own.
const BuildCluster = "eks-prow-build-cluster"

// maxNameLength is what Prow allows: job names become label values.
const maxNameLength = 63

// Paths name the files a Check reads.
type Paths struct {
	ProwConfig string // Prow's component config (test-infra's config/prow/config.yaml)
	Jobs       string // a folder of job config files
	Testgrid   string // the testgrid configuration declaring dashboards
	Makefile   string // the Makefile whose targets jobs may run
}

// Check returns every problem with the job configs; none means Prow will
// load them, testgrid will show them, and each runs a real make target.
func Check(p Paths) []error {
	c, err := config.LoadStrict(p.ProwConfig, p.Jobs, nil, "")
	if err != nil {
		return []error{fmt.Errorf("prow cannot load %s: %w", p.Jobs, err)}
	}
	dashboards, err := readDashboards(p.Testgrid)
	if err != nil {
		return []error{err}
	}
	targets, err := makeTargets(p.Makefile)
	if err != nil {
		return []error{err}
	}

	var errs []error
	tabs := map[string]string{}
	for _, j := range allJobs(c) {
		if len(j.Name) > maxNameLength {
			errs = append(errs, fmt.Errorf("job %s: name is %d characters, Prow allows %d", j.Name, len(j.Name), maxNameLength))
		}
		// Prow's default cluster is the service cluster, where no test
		// job belongs: test-infra runs community jobs on a build cluster.
		if j.Cluster == "" || j.Cluster == "default" {
			errs = append(errs, fmt.Errorf("job %s: names no build cluster (cluster: %s, where test-infra runs the SIGs' jobs)", j.Name, BuildCluster))
		}
		for _, key := range []string{annDashboards, annTab, annEmail} {
			if j.Annotations[key] == "" {
				errs = append(errs, fmt.Errorf("job %s: annotation %s is missing", j.Name, key))
			}
		}
		for _, d := range strings.Split(j.Annotations[annDashboards], ",") {
			d = strings.TrimSpace(d)
			if d == "" {
				continue
			}
			if !dashboards[d] {
				errs = append(errs, fmt.Errorf("job %s: testgrid dashboard %q is not in %s", j.Name, d, p.Testgrid))
			}
			key := d + "/" + j.Annotations[annTab]
			if other, dup := tabs[key]; dup {
				errs = append(errs, fmt.Errorf("job %s: tab %q on dashboard %s is taken by job %s", j.Name, j.Annotations[annTab], d, other))
			}
			tabs[key] = j.Name
		}
		if err := checkCommand(j, targets); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

type job struct {
	Name        string
	Cluster     string
	Labels      map[string]string
	Annotations map[string]string
	Spec        *v1.PodSpec
}

func allJobs(c *config.Config) []job {
	var out []job
	for _, ps := range c.PresubmitsStatic {
		for _, j := range ps {
			out = append(out, job{j.Name, j.Cluster, j.Labels, j.Annotations, j.Spec})
		}
	}
	for _, ps := range c.PostsubmitsStatic {
		for _, j := range ps {
			out = append(out, job{j.Name, j.Cluster, j.Labels, j.Annotations, j.Spec})
		}
	}
	for _, j := range c.Periodics {
		out = append(out, job{j.Name, j.Cluster, j.Labels, j.Annotations, j.Spec})
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Name < out[k].Name })
	return out
}

// kindTargets bring up kind clusters, which need Docker in the job's pod:
// the kind suites, Kubernetes' own e2e on kind, the cluster made with its
// own tools, and the controls (some of which break a kind cluster's cloud).
var kindTargets = map[string]bool{
	"test": true, "e2e-kind": true, "e2e-kind-datapath": true, "e2e-openstack-kind": true, "e2e-aws-kind": true,
	"e2e-upstream": true, "e2e-foreign": true, "controls": true, "controls-all": true, "controls-oldest": true,
}

// checkCommand accepts `make [VAR=value...] target [VAR=value...]` with a
// target the Makefile defines, optionally behind runner.sh, the kubekins
// image's wrapper that starts Docker in the pod. A job that runs the kind
// suite must have that Docker: the preset-dind-enabled label and a
// privileged container.
func checkCommand(j job, targets map[string]bool) error {
	if j.Spec == nil || len(j.Spec.Containers) == 0 {
		return fmt.Errorf("job %s: no container", j.Name)
	}
	ctr := j.Spec.Containers[0]
	argv := append(append([]string{}, ctr.Command...), ctr.Args...)
	if len(argv) > 0 && argv[0] == "runner.sh" {
		argv = argv[1:]
	}
	kind := false
	for _, a := range argv {
		kind = kind || kindTargets[a] || a == "CLUSTER=kind"
	}
	if kind {
		privileged := ctr.SecurityContext != nil && ctr.SecurityContext.Privileged != nil && *ctr.SecurityContext.Privileged
		if j.Labels["preset-dind-enabled"] != "true" || !privileged {
			return fmt.Errorf("job %s: runs the kind suite without Docker in its pod: give it the label preset-dind-enabled: \"true\", a privileged container, and runner.sh to start Docker", j.Name)
		}
	}
	if len(argv) == 0 || argv[0] != "make" {
		return fmt.Errorf("job %s: command %q is not a make target (run the harness through its Makefile)", j.Name, strings.Join(argv, " "))
	}
	var named []string
	for _, a := range argv[1:] {
		if strings.Contains(a, "=") || strings.HasPrefix(a, "-") {
			continue
		}
		named = append(named, a)
		if !targets[a] {
			return fmt.Errorf("job %s: make target %q does not exist in the Makefile", j.Name, a)
		}
	}
	if len(named) == 0 {
		return fmt.Errorf("job %s: command %q names no make target", j.Name, strings.Join(argv, " "))
	}
	return nil
}

// readDashboards reads the testgrid file's dashboards, strictly: a
// dashboard group there would declare again what test-infra declares. The
// group file beside it must name the same dashboards, the ones to add to
// the sig-cloud-provider group.
func readDashboards(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tg struct {
		Dashboards []struct {
			Name string `json:"name"`
		} `json:"dashboards"`
	}
	if err := yaml.UnmarshalStrict(data, &tg); err != nil {
		return nil, fmt.Errorf("testgrid config %s: %w (it declares dashboards only: the sig-cloud-provider group is test-infra's, joined through %s)", path, err, GroupFile)
	}
	groupPath := filepath.Join(filepath.Dir(path), GroupFile)
	data, err = os.ReadFile(groupPath)
	if err != nil {
		return nil, err
	}
	var group struct {
		Group          string   `json:"group"`
		DashboardNames []string `json:"dashboard_names"`
	}
	if err := yaml.UnmarshalStrict(data, &group); err != nil {
		return nil, fmt.Errorf("%s: %w", groupPath, err)
	}
	if group.Group != DashboardGroup {
		return nil, fmt.Errorf("%s: group %q, want test-infra's %q", groupPath, group.Group, DashboardGroup)
	}
	out := map[string]bool{}
	for _, d := range tg.Dashboards {
		out[d.Name] = true
	}
	joined := map[string]bool{}
	for _, d := range group.DashboardNames {
		joined[d] = true
		if !out[d] {
			return nil, fmt.Errorf("%s: dashboard %q is not declared in %s", groupPath, d, path)
		}
	}
	for d := range out {
		if !joined[d] {
			return nil, fmt.Errorf("dashboard %s of %s joins no group: add it to %s", d, path, groupPath)
		}
	}
	return out, nil
}

// DashboardGroup is test-infra's group the dashboards join, and GroupFile
// the file beside the testgrid config that names them for it.
const (
	DashboardGroup = "sig-cloud-provider"
	GroupFile      = "sig-cloud-provider-group.yaml"
)

var targetLine = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9_.-]*)\s*:([^=]|$)`)

// makeTargets lists the explicit targets of a Makefile.
func makeTargets(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if m := targetLine.FindStringSubmatch(line); m != nil {
			out[m[1]] = true
		}
	}
	return out, nil
}

// MatrixDashboard is the testgrid dashboard of the version matrix: a tab
// per cell.
const MatrixDashboard = "sig-cloud-provider-ccm-harness-matrix"

// Cell is one (Kubernetes release, CCM version) of a provider's matrix.
type Cell struct{ Cluster, CCM string }

// CheckMatrix returns every difference between the matrix jobs and the
// cells the harness computes (cells, per provider): each provider whose
// whole matrix runs in a periodic (make matrix PROVIDER=p) must have a
// periodic per cell (make matrix PROVIDER=p MATRIX_CLUSTERS=k
// MATRIX_CCMS=c) on MatrixDashboard, and no other.
func CheckMatrix(p Paths, cells func(provider string) ([]Cell, error)) []error {
	c, err := config.LoadStrict(p.ProwConfig, p.Jobs, nil, "")
	if err != nil {
		return []error{fmt.Errorf("prow cannot load %s: %w", p.Jobs, err)}
	}
	whole := map[string]bool{}
	jobOf := map[string]map[Cell]string{}
	var errs []error
	for _, j := range allJobs(c) {
		if j.Spec == nil || len(j.Spec.Containers) == 0 {
			continue
		}
		vars := map[string]string{}
		isMatrix := false
		for _, a := range j.Spec.Containers[0].Args {
			if k, v, ok := strings.Cut(a, "="); ok {
				vars[k] = v
			} else if a == "matrix" {
				isMatrix = true
			}
		}
		if !isMatrix {
			continue
		}
		provider := vars["PROVIDER"]
		if vars["MATRIX_CLUSTERS"] == "" && vars["MATRIX_CCMS"] == "" {
			whole[provider] = true
			continue
		}
		if j.Annotations[annDashboards] != MatrixDashboard {
			errs = append(errs, fmt.Errorf("job %s: a matrix cell's job belongs on dashboard %s, not %q", j.Name, MatrixDashboard, j.Annotations[annDashboards]))
		}
		if jobOf[provider] == nil {
			jobOf[provider] = map[Cell]string{}
		}
		jobOf[provider][Cell{vars["MATRIX_CLUSTERS"], vars["MATRIX_CCMS"]}] = j.Name
	}
	for provider := range jobOf {
		if !whole[provider] {
			errs = append(errs, fmt.Errorf("provider %s: cell jobs but no periodic running its whole matrix (make matrix PROVIDER=%s)", provider, provider))
		}
	}
	var providers []string
	for provider := range whole {
		providers = append(providers, provider)
	}
	sort.Strings(providers)
	for _, provider := range providers {
		want, err := cells(provider)
		if err != nil {
			errs = append(errs, fmt.Errorf("provider %s: the harness's cells: %w", provider, err))
			continue
		}
		have := jobOf[provider]
		for _, cell := range want {
			if _, ok := have[cell]; !ok {
				errs = append(errs, fmt.Errorf("provider %s: cell Kubernetes %s / CCM %s has no periodic on %s (make matrix PROVIDER=%s MATRIX_CLUSTERS=%s MATRIX_CCMS=%s)",
					provider, cell.Cluster, cell.CCM, MatrixDashboard, provider, cell.Cluster, cell.CCM))
			}
			delete(have, cell)
		}
		for cell, name := range have {
			errs = append(errs, fmt.Errorf("job %s: Kubernetes %s / CCM %s is not a cell of provider %s's matrix (ccm-harness matrix --list --provider=%s)", name, cell.Cluster, cell.CCM, provider, provider))
		}
	}
	return errs
}
