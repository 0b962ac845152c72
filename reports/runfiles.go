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
	"io/fs"
	"path/filepath"
	"slices"
)

// The folders a run writes under its artifacts folder, beside its files at
// the top.
const (
	// LogsDir holds each cluster's logs, a folder per cluster.
	LogsDir = "logs"
	// MigrationDir holds the leader-migration specs' timelines.
	MigrationDir = "leader-migration"
	// LentNodesDir holds what an existing cluster's lent nodes went
	// through.
	LentNodesDir = "lent-nodes"
)

var runDirs = []string{LogsDir, MigrationDir, LentNodesDir}

// walkRun walks the files of the run in dir: those at its top and under
// the folders a run writes. The other folders are not the run's: make
// test's targets each keep their runs (and kind's, make up's, a matrix's)
// in folders under the default run's, some still writing while it ends,
// and a run's redaction and report would otherwise read them all, and
// rewrite what others write.
func walkRun(dir string, fn fs.WalkDirFunc) error {
	dir = filepath.Clean(dir)
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir && filepath.Dir(p) == dir && !slices.Contains(runDirs, d.Name()) {
			return filepath.SkipDir
		}
		return fn(p, d, err)
	})
}
