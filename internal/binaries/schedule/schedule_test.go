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

package schedule

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/ccm-harness/internal/binaries/cache"
	"sigs.k8s.io/ccm-harness/internal/filelock"
)

// TestPlan: the long jobs start first, then the short, each in its order;
// a queue's jobs run together, one after another, where its first job is.
func TestPlan(t *testing.T) {
	job := func(name string, long bool, queue string) Job {
		return Job{Locks: []Lock{{Name: name}}, Long: long, Queue: queue}
	}
	jobs := []Job{
		job("a", false, ""),
		job("b", true, "v1.34.4"),
		job("c", true, ""),
		job("d", false, "q"),
		job("e", true, "v1.34.4"),
		job("f", false, ""),
		job("g", false, "q"),
		job("h", true, "v1.35.4"),
	}
	var got []string
	for _, q := range plan(jobs) {
		var n []string
		for _, j := range q {
			n = append(n, j.Locks[0].Name)
		}
		got = append(got, strings.Join(n, " "))
	}
	want := []string{"b e", "c", "h", "a", "d g", "f"}
	if !slices.Equal(got, want) {
		t.Errorf("expected the jobs to start as %q, actual %q", want, got)
	}
}

// TestRunHoldsLocksAndQueues: a job runs with its locks held; a queue's
// jobs run one at a time in order, and stop at the first failure, which
// cancels the other jobs and is what Run returns.
func TestRunHoldsLocksAndQueues(t *testing.T) {
	s := &Scheduler{Cache: cache.New(t.TempDir())}
	var mu sync.Mutex
	var ran []string
	running := 0
	queued := func(name string, err error) Job {
		return Job{Queue: "release", Long: true, Locks: []Lock{{Name: name, What: name}}, Run: func(context.Context) error {
			// Its lock is held: another process would wait.
			if unlock, lerr := filelock.TryLock(s.Cache.Lock(name)); lerr != nil || unlock != nil {
				t.Errorf("%s ran without its lock held (error %v)", name, lerr)
			}
			mu.Lock()
			running++
			if running > 1 {
				t.Errorf("%s ran beside another job of its queue", name)
			}
			ran = append(ran, name)
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			mu.Lock()
			running--
			mu.Unlock()
			return err
		}}
	}
	failed := errors.New("build failed")
	cancelled := make(chan error, 1)
	jobs := []Job{
		queued("first", nil),
		{Run: func(ctx context.Context) error {
			// Runs beside the queue until its failure cancels it.
			select {
			case <-ctx.Done():
				cancelled <- ctx.Err()
			case <-time.After(time.Minute):
				cancelled <- nil
			}
			return nil
		}},
		queued("second", failed),
		queued("third", nil),
	}
	if err := s.Run(context.Background(), jobs); !errors.Is(err, failed) {
		t.Errorf("expected Run to return the failure, actual %v", err)
	}
	if err := <-cancelled; err == nil {
		t.Error("expected the failure to cancel the other job")
	}
	if want := []string{"first", "second"}; !slices.Equal(ran, want) {
		t.Errorf("expected the queue to run %q and stop at the failure, actual %q", want, ran)
	}
	if _, err := os.Stat(s.Cache.Lock("first")); err != nil {
		t.Errorf("expected the lock in the cache's locks folder: %v", err)
	}
}
