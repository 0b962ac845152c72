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
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestProwFiles(t *testing.T) {
	t.Setenv("PROW_JOB_ID", "")
	dir := t.TempDir()
	at := time.Unix(1790000000, 0)
	md := map[string]string{KeyJobVersion: "fakecloud-ccm@v1.37.2", KeyProvider: "fake"}
	if err := WriteStarted(dir, at); err != nil {
		t.Fatal(err)
	}
	if err := WriteMetadata(dir, md); err != nil {
		t.Fatal(err)
	}
	if err := WriteFinished(dir, at.Add(time.Minute), ResultFailure, md); err != nil {
		t.Fatal(err)
	}
	var s Started
	read(t, filepath.Join(dir, "started.json"), &s)
	if s.Timestamp != at.Unix() {
		t.Errorf("started timestamp %d, want %d", s.Timestamp, at.Unix())
	}
	var f map[string]any
	read(t, filepath.Join(dir, "finished.json"), &f)
	if f["passed"] != false || f["result"] != "FAILURE" || f["timestamp"] != float64(at.Unix()+60) {
		t.Errorf("finished.json %v, want passed false, result FAILURE, timestamp a minute later", f)
	}
	if m, _ := f["metadata"].(map[string]any); m[KeyJobVersion] != "fakecloud-ccm@v1.37.2" {
		t.Errorf("finished.json metadata %v lacks job-version", f["metadata"])
	}
	var m map[string]string
	read(t, filepath.Join(dir, "metadata.json"), &m)
	if m[KeyProvider] != "fake" {
		t.Errorf("metadata.json %v", m)
	}
}

// Under Prow the pod utilities own started.json and finished.json.
func TestUnderProwLeavesStartedAndFinished(t *testing.T) {
	t.Setenv("PROW_JOB_ID", "abc")
	dir := t.TempDir()
	if err := WriteStarted(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := WriteFinished(dir, time.Now(), ResultSuccess, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"started.json", "finished.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s written under Prow", f)
		}
	}
}

func read(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
