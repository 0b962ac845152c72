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

// Package schedule runs builds: a few at once, the longest first, each
// under the cache locks that make another harness process building the
// same thing wait for it (and this one wait for that), saying what it
// builds, how long it has been going and how long the last such build
// took. It knows nothing of components: package binaries turns them into
// Jobs.
package schedule

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/ccm-harness/internal/binaries/cache"
	"sigs.k8s.io/ccm-harness/internal/filelock"
)

// buildJobs is how many builds run at once. Each go build compiles on
// every core already; a second overlaps its module downloads and its
// single-threaded link with the other's compiling, which on a cold cache
// shortens the whole by minutes.
const buildJobs = 2

// progressEvery is how often a build says it is still going.
const progressEvery = 30 * time.Second

// Lock is a build lock in the cache's locks folder.
type Lock struct {
	// Name is the lock's file name there, without ".lock".
	Name string
	// What is what it guards ("kube-apiserver v1.37.2"), for the messages
	// of a wait for another process.
	What string
}

// Job is one build.
type Job struct {
	// Locks are taken in this order, every process taking them in one
	// order so that no two wait for each other, and held while Run runs.
	// Run checks again what another process built while it waited.
	Locks []Lock
	// Long is a build of minutes (Kubernetes' own binaries): long jobs
	// start first, so the short ones fill in beside them rather than one
	// long build at the end.
	Long bool
	// Queue, if set, runs the job after the earlier jobs of the same
	// Queue, one after another in their order (the builds of one
	// Kubernetes release: the second finds the release's libraries in the
	// Go build cache, where beside the first it would compile them too).
	// A queue stops at its first failure, and is placed, long or not,
	// where its first job is.
	Queue string
	// Run builds, once the locks are held.
	Run func(ctx context.Context) error
}

// Scheduler runs jobs against a cache. Keep one for as long as its
// messages should not repeat (a binaries.Source's life).
type Scheduler struct {
	// Cache holds the locks and the build times.
	Cache cache.Cache
	// Logf reports progress on long builds; may be nil.
	Logf func(format string, args ...any)

	// waitedMu guards waited alone. The caller may hold a lock of its own
	// for the whole of Run (binaries.Source's mu, held through Paths):
	// taking that one here deadlocked a cold make e2e whose background
	// build held a lock.
	waitedMu sync.Mutex
	// waited are the locks another process holds that this scheduler said
	// it waits for: said once, though several managers (the HA members)
	// ask for the same binary at once.
	waited map[string]bool
}

// Run runs jobs, buildJobs at once, the long ones first, each queue's in
// order. The first failure cancels the others (their go builds with it):
// nothing is left running behind an error.
func (s *Scheduler) Run(ctx context.Context, jobs []Job) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(buildJobs)
	for _, queue := range plan(jobs) {
		g.Go(func() error {
			for _, j := range queue {
				if err := s.run(gctx, j); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// plan is the order jobs start in: each queue's jobs (a job of no queue
// is one alone), the long first, in their order otherwise.
func plan(jobs []Job) [][]Job {
	var long, short [][]Job
	queues := map[string]int{} // index in long or short
	inLong := map[string]bool{}
	for _, j := range jobs {
		if j.Queue != "" {
			if i, ok := queues[j.Queue]; ok {
				if inLong[j.Queue] {
					long[i] = append(long[i], j)
				} else {
					short[i] = append(short[i], j)
				}
				continue
			}
		}
		if j.Long {
			if j.Queue != "" {
				queues[j.Queue], inLong[j.Queue] = len(long), true
			}
			long = append(long, []Job{j})
		} else {
			if j.Queue != "" {
				queues[j.Queue] = len(short)
			}
			short = append(short, []Job{j})
		}
	}
	return append(long, short...)
}

// run takes j's locks and runs it.
func (s *Scheduler) run(ctx context.Context, j Job) error {
	for _, l := range j.Locks {
		unlock, err := s.lock(ctx, l)
		if err != nil {
			return err
		}
		defer unlock()
	}
	return j.Run(ctx)
}

// lock takes the lock of one build, which another harness process
// (parallel test packages, make's background targets) building the same
// thing waits on, while different builds go ahead at once.
func (s *Scheduler) lock(ctx context.Context, l Lock) (func(), error) {
	path := s.Cache.Lock(l.Name)
	if unlock, err := filelock.TryLock(path); err != nil || unlock != nil {
		return unlock, err
	}
	// make e2e builds the leader-migration specs' managers in the
	// background while the suite runs; a spec that needs one first says
	// why it waits.
	s.waitedMu.Lock()
	said := s.waited[path]
	if s.waited == nil {
		s.waited = map[string]bool{}
	}
	s.waited[path] = true
	s.waitedMu.Unlock()
	if !said {
		s.logf("waiting for %s: another process is building it", l.What)
	}
	return filelock.Lock(ctx, path, l.What+", which another process is building")
}

// Go runs cmd, a build of what (why: "first run only: ..."), saying when
// it starts, every progressEvery while it runs (against the last build of
// what, kept in the cache) and when it is done: a build of minutes is not
// a silent wait. It returns cmd's combined output. what keys the build
// times, so it names versions too ("kube-apiserver v1.37.2"): a release's
// build of a component of this repository takes minutes where its build
// from the source tree takes seconds.
func (s *Scheduler) Go(cmd *exec.Cmd, what, why string) ([]byte, error) {
	against := ""
	if d, ok := s.Cache.BuildTime(what); ok {
		against = fmt.Sprintf(" (the last build took %s)", d.Round(time.Second))
	}
	s.logf("building %s (%s)%s", what, why, against)
	start := time.Now()
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				s.logf("  still building %s: %s so far%s", what, time.Since(start).Round(time.Second), against)
			}
		}
	}()
	out, err := cmd.CombinedOutput()
	close(done)
	if err != nil {
		return out, err
	}
	took := time.Since(start)
	s.logf("built %s in %s", what, took.Round(time.Second))
	s.Cache.RecordBuildTime(what, took)
	return out, nil
}

func (s *Scheduler) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}
