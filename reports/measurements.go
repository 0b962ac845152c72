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
	"sort"
	"time"
)

// MeasurementsFile holds what the run measured: the latencies its specs
// report (time to ingress, a joining node's initialization, ...) and the
// bring-up's, for the report and the grid.
const MeasurementsFile = "measurements.json"

// BringUp is the Spec of the bring-up's measurements.
const BringUp = "bring-up"

// Measurement is one figure: which spec measured it (the JUnit case's name,
// or BringUp), what, and how long it took.
type Measurement struct {
	Spec    string  `json:"spec"`
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Duration is the figure as a duration.
func (m Measurement) Duration() time.Duration {
	return time.Duration(m.Seconds * float64(time.Second)).Round(time.Millisecond)
}

// WriteMeasurements writes the run's figures into dir.
func WriteMeasurements(dir string, ms []Measurement) error {
	data, err := json.MarshalIndent(ms, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, MeasurementsFile), data, 0o644)
}

// readMeasurements are dir's figures, none if it has no file.
func readMeasurements(dir string) []Measurement {
	var ms []Measurement
	if data, err := os.ReadFile(filepath.Join(dir, MeasurementsFile)); err == nil {
		_ = json.Unmarshal(data, &ms)
	}
	return ms
}

// Percentiles are the p50 and p99 of ds (nearest rank), zero for none.
func Percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		if i < 0 {
			i = 0
		}
		return s[i]
	}
	return rank(0.50), rank(0.99)
}
