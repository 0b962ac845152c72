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

package e2e

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"sigs.k8s.io/ccm-harness/internal/filelock"
	"sigs.k8s.io/ccm-harness/scenarios"
)

// VerboseLog is the file, in the artifacts, that gets the full output of a
// --quiet run: Ginkgo's verbose stream, the framework's and the harness's
// logs.
const VerboseLog = "e2e.log"

var (
	quiet       = flag.Bool("quiet", false, "print only the bring-up steps, one line per spec as it ends, failures with their log excerpts, and the summary; everything else (run with -ginkgo.v for Ginkgo's verbose stream) goes to "+VerboseLog+" in the artifacts (in a parallel run, where the ginkgo CLI gathers the output, its caller sends it there)")
	consoleFile = flag.String("console", "", "the file the short lines (with --quiet) and the summary are appended to instead of the standard output: a parallel run's processes, whose output the ginkgo CLI keeps, reach the terminal through it (make e2e gives them /dev/fd/3)")
)

// console is where the run's own lines go: the terminal, also while
// --quiet sends the process's standard output and error to a file.
var console io.Writer = os.Stdout

// inBringUp is true while BeforeSuite brings the cluster up: the steps'
// lines then go to the console too.
var inBringUp bool

// openConsole makes --console, if given, the console.
func openConsole() error {
	if *consoleFile == "" {
		return nil
	}
	f, err := os.OpenFile(*consoleFile, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("--console: %w", err)
	}
	console = f
	return nil
}

// quietOutput points standard output and error (Ginkgo's reporter, the
// framework's and klog's lines, all write there) at VerboseLog and keeps
// the terminal as console; restore puts them back. Done on the file
// descriptors, so that everything the process and its libraries write
// follows, whatever writer they captured at start.
//
// In a parallel run the ginkgo CLI gathers every process's output and its
// caller decides where it goes (make e2e: VerboseLog); the processes
// reach the terminal through --console.
func quietOutput(dir string, parallel bool) (restore func(), err error) {
	if parallel {
		if *consoleFile == "" {
			return nil, fmt.Errorf("a parallel run's processes need --console to reach the terminal: the ginkgo CLI keeps their output")
		}
		if ginkgo.GinkgoParallelProcess() == 1 {
			fmt.Fprintf(console, "full output: %s (V=1 prints it here)\n", filepath.Join(dir, VerboseLog))
		}
		return func() {}, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, VerboseLog)
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	out, err := syscall.Dup(1)
	if err != nil {
		return nil, err
	}
	errOut, err := syscall.Dup(2)
	if err != nil {
		return nil, err
	}
	if *consoleFile == "" {
		console = os.NewFile(uintptr(out), "console")
	}
	if err := syscall.Dup2(int(f.Fd()), 1); err != nil {
		return nil, err
	}
	if err := syscall.Dup2(int(f.Fd()), 2); err != nil {
		return nil, err
	}
	fmt.Fprintf(console, "full output: %s (V=1 prints it here)\n", path)
	return func() {
		_ = syscall.Dup2(out, 1)
		_ = syscall.Dup2(errOut, 2)
		f.Close()
		if *consoleFile == "" {
			console = os.Stdout
		}
	}, nil
}

// consoleLogf is a bring-up line on the console.
func consoleLogf(format string, args ...any) {
	if inBringUp {
		consoleAlways(format, args...)
	}
}

// consoleAlways is a line on the quiet console whenever it comes.
func consoleAlways(format string, args ...any) {
	if *quiet {
		fmt.Fprintf(console, "  "+format+"\n", args...)
	}
}

// reportEnded is a spec's line on the console as it ends: its number, tags
// and text, verdict and time; a failure's message, where and what the
// CCM and the cloud logged follow it.
func reportEnded(r ginkgo.SpecReport, excerpt string) {
	if !*quiet {
		return
	}
	// Specs the label filter or focus left out end here too, skipped with
	// no reason; they were never among those that run.
	if r.State.Is(types.SpecStateSkipped|types.SpecStatePending) && r.Failure.Message == "" {
		return
	}
	if r.LeafNodeType != types.NodeTypeIt {
		if r.Failed() {
			fmt.Fprintf(console, "%s %s: %s\n  at %s\n", r.LeafNodeType, r.State, strings.ReplaceAll(strings.TrimSpace(r.Failure.Message), "\n", "\n  "), r.Failure.Location)
		}
		return
	}
	verdict := r.State.String()
	if r.State.Is(types.SpecStateSkipped) {
		verdict += ": " + firstLine(r.Failure.Message)
	}
	known := 0
	for _, e := range r.ReportEntries {
		if e.Name == scenarios.KnownDifferenceEntry {
			known++
		}
	}
	if known > 0 && r.State.Is(types.SpecStatePassed) {
		verdict += fmt.Sprintf(" with %d known difference(s)", known)
	}
	var b strings.Builder
	n := countEnded()
	fmt.Fprintf(&b, "[%d/%d] %s  %s (%s)\n", n, progress.total, specLine(r), verdict, r.RunTime.Round(10*time.Millisecond))
	if r.Failed() {
		fmt.Fprintf(&b, "  %s\n  at %s\n", strings.ReplaceAll(strings.TrimSpace(r.Failure.Message), "\n", "\n  "), r.Failure.Location)
		if excerpt != "" {
			fmt.Fprintf(&b, "  %s\n", strings.ReplaceAll(strings.TrimSpace(excerpt), "\n", "\n  "))
		}
	}
	// One write, under the count's lock: another process's lines never
	// come between, and the numbers come in order.
	fmt.Fprint(console, b.String())
	endedDone()
}

// endedFile counts, in the artifacts, the specs that ended in every
// process of a run; finishRun removes it.
const endedFile = ".specs-ended"

// endedDone releases what countEnded took.
var endedDone = func() {}

// countEnded numbers the spec that just ended among those of the whole
// run, every process's, and holds the count until endedDone: a parallel
// run's processes count in one file under a lock.
func countEnded() int {
	if sc, _ := ginkgo.GinkgoConfiguration(); sc.ParallelTotal <= 1 || run.dir == "" {
		progress.ended++
		return progress.ended
	}
	path := filepath.Join(run.dir, endedFile)
	unlock, err := filelock.Lock(context.Background(), path+".lock", "the count of ended specs")
	if err != nil {
		progress.ended++
		return progress.ended
	}
	n := 0
	if b, err := os.ReadFile(path); err == nil {
		n, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	n++
	_ = os.WriteFile(path, []byte(strconv.Itoa(n)), 0o644)
	endedDone = func() { unlock(); endedDone = func() {} }
	return n
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
