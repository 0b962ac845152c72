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

package migration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"sigs.k8s.io/ccm-harness/cluster"
)

// logManager is a manager known only by its log, which the test writes.
type logManager struct {
	name, log string
}

func (m logManager) Name() string                                  { return m.name }
func (m logManager) Spec() cluster.ManagerSpec                     { return cluster.ManagerSpec{Name: m.name} }
func (m logManager) Log() string                                   { return m.log }
func (m logManager) Restart(context.Context) error                 { return nil }
func (m logManager) Stop(context.Context) error                    { return nil }
func (m logManager) Controllers(context.Context) ([]string, error) { return []string{}, nil }

func klogAt(t time.Time, format string, args ...any) string {
	return fmt.Sprintf("I%s %7d controllermanager.go:338] %s\n", t.Format("0102 15:04:05.000000"), 1, fmt.Sprintf(format, args...))
}

// TestRecorderRuns: a run starts at the instant its log line says, and
// ends when the process is forgotten (stopped) or says it lost its lease;
// two such runs 50 ms apart in overlap are a conflict though no sample
// could have seen both.
func TestRecorderRuns(t *testing.T) {
	dir := t.TempDir()
	a, b := logManager{"a", filepath.Join(dir, "a.log")}, logManager{"b", filepath.Join(dir, "b.log")}
	r := NewRecorder(fake.NewSimpleClientset(), time.Hour, DefaultLeaderName, []string{"service-lb-controller"})
	c := logManager{"c", filepath.Join(dir, "c.log")}
	r.Watch(a)
	r.Watch(b)
	r.Watch(c)
	r.Start(context.Background())
	start := r.Timeline().Start
	write := func(path, text string) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(text)
		f.Close()
	}
	write(a.log, klogAt(start.Add(100*time.Millisecond), `Started "service-lb-controller"`)+
		fmt.Sprintf("E%s %7d controllermanager.go:274] \"leaderelection lost\"\n", start.Add(300*time.Millisecond).Format("0102 15:04:05.000000"), 1))
	write(b.log, klogAt(start.Add(250*time.Millisecond), `"Started controller" controller="service-lb-controller"`))
	write(c.log, klogAt(start.Add(10*time.Millisecond), `"Controller starting..." controller="garbage-collector-controller"`)+
		klogAt(start.Add(20*time.Millisecond), `"Controller terminated" controller="garbage-collector-controller"`))
	time.Sleep(time.Until(start.Add(400 * time.Millisecond)))
	r.Forget("b")
	tl := r.Stop()
	slices.SortFunc(tl.Runs, func(x, y Run) int { return strings.Compare(x.Process, y.Process) })
	if len(tl.Runs) != 3 || tl.Runs[0].FromMs != 100 || tl.Runs[0].ToMs != 300 || tl.Runs[1].FromMs != 250 || tl.Runs[1].ToMs < 400 ||
		tl.Runs[2].FromMs != 10 || tl.Runs[2].ToMs != 20 {
		t.Fatalf("runs %+v, want a from 100ms to 300ms, b from 250ms ended when forgotten, c from 10ms to 20ms", tl.Runs)
	}
	v := tl.conflicts()
	if len(v) != 1 || v[0].FromMs != 250 || v[0].ToMs != 300 {
		t.Errorf("conflicts %v, want one from 250ms to 300ms", v)
	}
}
