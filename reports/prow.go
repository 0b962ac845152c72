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

// Package reports writes what a run leaves for Prow, testgrid and people.
//
// Under Prow the pod utilities write started.json and finished.json and
// merge $ARTIFACTS/metadata.json into finished.json's metadata, where
// testgrid takes the column's version from "job-version". Outside Prow the
// harness writes all three itself, so a local run's folder has the shape of
// a Prow build folder and the same tools read both.
package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// Metadata keys testgrid and people read.
const (
	// KeyJobVersion is testgrid's column version: the CCM under test.
	KeyJobVersion        = "job-version"
	KeyKubernetesVersion = "kubernetes-version"
	KeyProvider          = "provider"
	KeyCluster           = "cluster"
	KeyCCM               = "ccm"
	// KeyCCMVersion is the release the CCM is built from, "" where the
	// harness cannot know it (an image).
	KeyCCMVersion = "ccm-version"
	// KeyCCMSource is where the CCM came from: its image or binary, or
	// the module it is built from at its version.
	KeyCCMSource = "ccm-source"
	// KeySkew is where the CCM stands against the kube-apiserver under
	// the version skew policy (package skew).
	KeySkew = "skew"
	// KeyDryRun is set in a dry run's metadata: nothing ran, whatever
	// its result says.
	KeyDryRun = "dry-run"
	// KeyParallel is how many processes ran the specs, where more than
	// one did.
	KeyParallel = "parallel-processes"
	// KeyCapabilities are the capabilities the profile claims, comma-
	// separated.
	KeyCapabilities = "capabilities"
	// KeyFeatures are the extended features it claims, comma-separated,
	// as its cloud's config makes them: known once the cluster is up.
	KeyFeatures = "features"
)

// Result is finished.json's result.
type Result string

const (
	ResultSuccess Result = "SUCCESS"
	ResultFailure Result = "FAILURE"
	// ResultDryRun is a dry run's: it neither passed nor failed.
	ResultDryRun Result = "DRY_RUN"
)

// ResultOf is a run's result by whether it passed.
func ResultOf(passed bool) Result {
	if passed {
		return ResultSuccess
	}
	return ResultFailure
}

// Started is Prow's started.json.
type Started struct {
	Timestamp int64             `json:"timestamp"`
	Node      string            `json:"node,omitempty"`
	Repos     map[string]string `json:"repos,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

// Finished is Prow's finished.json.
type Finished struct {
	Timestamp int64             `json:"timestamp"`
	Passed    bool              `json:"passed"`
	Result    string            `json:"result"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

// UnderProw reports whether Prow's pod utilities will write started.json
// and finished.json themselves.
func UnderProw() bool { return os.Getenv("PROW_JOB_ID") != "" }

// WriteMetadata writes dir/metadata.json, which Prow merges into
// finished.json.
func WriteMetadata(dir string, md map[string]string) error {
	return writeJSON(filepath.Join(dir, "metadata.json"), md)
}

// WriteStarted writes dir/started.json unless Prow does.
func WriteStarted(dir string, at time.Time) error {
	if UnderProw() {
		return nil
	}
	host, _ := os.Hostname()
	return writeJSON(filepath.Join(dir, "started.json"), Started{Timestamp: at.Unix(), Node: host})
}

// WriteFinished writes dir/finished.json, with the metadata merged in as
// Prow's sidecar does, unless Prow does. Only a SUCCESS passed.
func WriteFinished(dir string, at time.Time, result Result, md map[string]string) error {
	if UnderProw() {
		return nil
	}
	return writeJSON(filepath.Join(dir, "finished.json"), Finished{Timestamp: at.Unix(), Passed: result == ResultSuccess, Result: string(result), Metadata: md})
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
