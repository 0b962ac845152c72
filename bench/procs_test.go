package bench

import (
	"testing"
	"time"
)

// One core kept spinning shows up in the machine's busy share, and the
// share stays a share.
func TestBusyPercent(t *testing.T) {
	before, err := readMachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
	}
	after, err := readMachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	if got := busyPercent(before, after); got <= 0 || got > 100 {
		t.Fatalf("busy %.1f%% while a core spun for 300 ms: want within (0, 100]", got)
	}
	if got := busyPercent(after, after); got != 0 {
		t.Fatalf("busy %.1f%% over no time: want 0", got)
	}
}
