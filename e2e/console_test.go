package e2e

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"sigs.k8s.io/ccm-harness/scenarios"
)

// VerboseLog is the file, in the artifacts, that gets the full output of a
// --quiet run: Ginkgo's verbose stream, the framework's and the harness's
// logs.
const VerboseLog = "e2e.log"

var quiet = flag.Bool("quiet", false, "print only the bring-up steps, one line per spec as it ends, failures with their log excerpts, and the summary; everything else (run with -ginkgo.v for Ginkgo's verbose stream) goes to "+VerboseLog+" in the artifacts")

// console is where the run's own lines go: the terminal, also while
// --quiet sends the process's standard output and error to a file.
var console io.Writer = os.Stdout

// inBringUp is true while BeforeSuite brings the cluster up: the steps'
// lines then go to the console too.
var inBringUp bool

// quietOutput points standard output and error (Ginkgo's reporter, the
// framework's and klog's lines, all write there) at VerboseLog and keeps
// the terminal as console; restore puts them back. Done on the file
// descriptors, so that everything the process and its libraries write
// follows, whatever writer they captured at start.
func quietOutput(dir string) (restore func(), err error) {
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
	console = os.NewFile(uintptr(out), "console")
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
		console = os.Stdout
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
	progress.ended++
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
	fmt.Fprintf(console, "[%d/%d] %s  %s (%s)\n", progress.ended, progress.total, specLine(r), verdict, r.RunTime.Round(10*time.Millisecond))
	if r.Failed() {
		fmt.Fprintf(console, "  %s\n  at %s\n", strings.ReplaceAll(strings.TrimSpace(r.Failure.Message), "\n", "\n  "), r.Failure.Location)
		if excerpt != "" {
			fmt.Fprintf(console, "  %s\n", strings.ReplaceAll(strings.TrimSpace(excerpt), "\n", "\n  "))
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
