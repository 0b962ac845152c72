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
	"os"
	"path/filepath"
	"testing"
)

// kubetest2 leaves junit_runner.xml empty until it exits; a run's folder
// with it must still read.
func TestReadRunSkipsEmptyJUnit(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "junit_runner.xml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRun(dir); err == nil {
		t.Fatal("a folder with only an empty JUnit read as a run")
	}
	suite := `<testsuites><testsuite name="s" tests="1"><testcase name="[It] a [zone]" time="1"></testcase></testsuite></testsuites>`
	if err := os.WriteFile(filepath.Join(dir, "junit_fake-local_01.xml"), []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ReadRun(dir)
	if err != nil || len(r.Cases) != 1 {
		t.Fatalf("ReadRun: %+v, %v", r, err)
	}
	if _, err := FoldExcerpts(dir); err != nil {
		t.Errorf("FoldExcerpts: %v", err)
	}
}

// A run into a folder used before reads as itself: the earlier run's JUnit
// goes, a tool's JUnit still being written (empty) stays.
func TestRemovePreviousJUnit(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "junit_aws-local_01.xml")
	writing := filepath.Join(dir, "junit_runner.xml")
	other := filepath.Join(dir, "metadata.json")
	for f, body := range map[string]string{stale: `<testsuites><testsuite><testcase name="zone"></testcase></testsuite></testsuites>`, writing: "", other: "{}"} {
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemovePreviousJUnit(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("expected the previous run's %s removed, actual: %v", filepath.Base(stale), err)
	}
	for _, f := range []string{writing, other} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("expected %s kept, actual: %v", filepath.Base(f), err)
		}
	}
}
