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

package jobs

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"sigs.k8s.io/prow/pkg/config"
	"sigs.k8s.io/yaml"
)

// The harness as a CCM's repository checks it out.
const (
	harnessOrg, harnessRepo = "kubernetes-sigs", "ccm-harness"
	harnessAlias            = "sigs.k8s.io/ccm-harness"
)

// Consumer names a CCM repository's examples: its Prow presubmit and its
// GitHub Actions workflow (examples/ccm-repository).
type Consumer struct {
	ProwConfig string // Prow's component config, as for Paths
	Presubmit  string // the presubmit's job config file
	Workflow   string // the GitHub Actions workflow
	Makefile   string // the harness's Makefile, whose targets they run
}

// makeIn is a make run in a folder: `make -C DIR TARGET ARGS`.
var makeIn = regexp.MustCompile(`make -C "?([^"\s]+)"? ([a-z][a-z0-9-]*)((?:\s+\\?\s*[A-Z_]+=\S+)*)`)

// CheckConsumer returns every problem with the examples: each must load
// (Prow's strict loader; the workflow strictly as the fields it uses),
// check the harness out at a pinned release beside the CCM's repository,
// run one of its make targets there with the CCM's profile file, and keep
// the results.
func CheckConsumer(c Consumer) []error {
	targets, err := makeTargets(c.Makefile)
	if err != nil {
		return []error{err}
	}
	var errs []error
	errs = append(errs, checkConsumerJob(c, targets)...)
	errs = append(errs, checkWorkflow(c, targets)...)
	return errs
}

func checkConsumerJob(c Consumer, targets map[string]bool) []error {
	cfg, err := config.LoadStrict(c.ProwConfig, c.Presubmit, nil, "")
	if err != nil {
		return []error{fmt.Errorf("prow cannot load %s: %w", c.Presubmit, err)}
	}
	var errs []error
	n := 0
	for repo, ps := range cfg.PresubmitsStatic {
		for _, j := range ps {
			n++
			if repo == harnessOrg+"/"+harnessRepo {
				errs = append(errs, fmt.Errorf("job %s: a CCM repository's presubmit is for that repository, not %s", j.Name, repo))
			}
			if j.Cluster == "" || j.Cluster == "default" {
				errs = append(errs, fmt.Errorf("job %s: names no build cluster", j.Name))
			}
			found := false
			for _, r := range j.ExtraRefs {
				if r.Org == harnessOrg && r.Repo == harnessRepo {
					found = true
					if r.PathAlias != harnessAlias {
						errs = append(errs, fmt.Errorf("job %s: the harness's extra_ref has path_alias %q, want %s (its Makefile builds from there)", j.Name, r.PathAlias, harnessAlias))
					}
					if unpinned(r.BaseRef) {
						errs = append(errs, fmt.Errorf("job %s: checks the harness out at %q: pin a release, so that a result says which suite it was had with", j.Name, r.BaseRef))
					}
				}
			}
			if !found {
				errs = append(errs, fmt.Errorf("job %s: no extra_ref checks out %s/%s", j.Name, harnessOrg, harnessRepo))
			}
			if j.Spec == nil || len(j.Spec.Containers) == 0 {
				errs = append(errs, fmt.Errorf("job %s: no container", j.Name))
				continue
			}
			ctr := j.Spec.Containers[0]
			script := strings.Join(append(append([]string{}, ctr.Command...), ctr.Args...), " ")
			if err := checkRun(script, "$GOPATH/src/"+harnessAlias, targets); err != nil {
				errs = append(errs, fmt.Errorf("job %s: %w", j.Name, err))
			}
			if strings.Contains(script, "docker ") {
				privileged := ctr.SecurityContext != nil && ctr.SecurityContext.Privileged != nil && *ctr.SecurityContext.Privileged
				if j.Labels["preset-dind-enabled"] != "true" || !privileged || len(ctr.Command) == 0 || ctr.Command[0] != "runner.sh" {
					errs = append(errs, fmt.Errorf("job %s: builds with Docker without Docker in its pod: give it the label preset-dind-enabled: \"true\", a privileged container, and runner.sh to start Docker", j.Name))
				}
			}
		}
	}
	if n == 0 {
		errs = append(errs, fmt.Errorf("%s: no presubmit", c.Presubmit))
	}
	return errs
}

// unpinned reports whether ref follows a branch rather than naming a
// release.
func unpinned(ref string) bool { return ref == "" || ref == "main" || ref == "master" }

// checkRun finds in script a make run of the harness's Makefile in dir,
// of one of its targets, with the CCM's profile file.
func checkRun(script, dir string, targets map[string]bool) error {
	m := makeIn.FindStringSubmatch(strings.ReplaceAll(script, "\\\n", " "))
	if m == nil {
		return fmt.Errorf("runs no `make -C %s TARGET` (the harness through its Makefile)", dir)
	}
	if m[1] != dir {
		return fmt.Errorf("runs make in %s, not where the harness is checked out (%s)", m[1], dir)
	}
	if !targets[m[2]] {
		return fmt.Errorf("make target %q does not exist in the harness's Makefile", m[2])
	}
	for _, want := range []string{"PROVIDER=external", "PROVIDER_CONFIG="} {
		if !strings.Contains(m[3], want) {
			return fmt.Errorf("runs make %s without %s: the CCM's profile file is what the suite judges", m[2], want)
		}
	}
	return nil
}

// workflow is the part of a GitHub Actions workflow the example uses.
type workflow struct {
	Name string `json:"name"`
	On   any    `json:"on"`
	Jobs map[string]struct {
		RunsOn         string `json:"runs-on"`
		TimeoutMinutes int    `json:"timeout-minutes"`
		Steps          []struct {
			Name string            `json:"name"`
			Uses string            `json:"uses,omitempty"`
			With map[string]string `json:"with,omitempty"`
			Run  string            `json:"run,omitempty"`
			If   string            `json:"if,omitempty"`
		} `json:"steps"`
	} `json:"jobs"`
}

// pinnedAction is an action at a version or a commit.
var pinnedAction = regexp.MustCompile(`^[\w.-]+/[\w.-]+@(v\d+(\.\d+)*|[0-9a-f]{40})$`)

func checkWorkflow(c Consumer, targets map[string]bool) []error {
	data, err := os.ReadFile(c.Workflow)
	if err != nil {
		return []error{err}
	}
	var w workflow
	if err := yaml.UnmarshalStrict(data, &w); err != nil {
		return []error{fmt.Errorf("workflow %s: %w", c.Workflow, err)}
	}
	if len(w.Jobs) == 0 {
		return []error{fmt.Errorf("workflow %s: no job", c.Workflow)}
	}
	var errs []error
	for name, j := range w.Jobs {
		if j.RunsOn == "" || j.TimeoutMinutes == 0 {
			errs = append(errs, fmt.Errorf("workflow job %s: runs-on and timeout-minutes are needed (the suite takes minutes; a hang must end)", name))
		}
		harnessPath, ran, kept := "", false, false
		for _, s := range j.Steps {
			if s.Uses != "" && !pinnedAction.MatchString(s.Uses) {
				errs = append(errs, fmt.Errorf("workflow job %s, step %q: action %q is not pinned to a version", name, s.Name, s.Uses))
			}
			if strings.HasPrefix(s.Uses, "actions/checkout@") && s.With["repository"] == harnessOrg+"/"+harnessRepo {
				harnessPath = s.With["path"]
				if unpinned(s.With["ref"]) {
					errs = append(errs, fmt.Errorf("workflow job %s: checks the harness out at %q: pin a release", name, s.With["ref"]))
				}
				if harnessPath == "" {
					errs = append(errs, fmt.Errorf("workflow job %s: the harness's checkout needs a path beside the CCM's", name))
				}
			}
			if s.Run != "" && strings.Contains(s.Run, "make -C") {
				if err := checkRun(s.Run, harnessPath, targets); err != nil {
					errs = append(errs, fmt.Errorf("workflow job %s, step %q: %w", name, s.Name, err))
				}
				ran = true
			}
			if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
				kept = s.If == "always()" && s.With["path"] != ""
				if !kept {
					errs = append(errs, fmt.Errorf("workflow job %s: the results are uploaded only if: always() with a path: a failed run's are the ones needed", name))
				}
			}
		}
		if harnessPath == "" {
			errs = append(errs, fmt.Errorf("workflow job %s: no actions/checkout of %s/%s", name, harnessOrg, harnessRepo))
		}
		if !ran {
			errs = append(errs, fmt.Errorf("workflow job %s: runs no `make -C <harness> TARGET`", name))
		}
		if !kept {
			errs = append(errs, fmt.Errorf("workflow job %s: keeps no results (actions/upload-artifact)", name))
		}
	}
	return errs
}
