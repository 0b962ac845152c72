package reports

import (
	"os"
	"path/filepath"
	"testing"
)

// kubetest2 leaves junit_runner.xml empty until it exits; a run's folder
// with it must still read.
func TestReadRunSkipsEmptyJUnit(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "junit_runner.xml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRun(dir); err == nil {
		t.Fatal("a folder with only an empty JUnit read as a run")
	}
	suite := `<testsuites><testsuite name="s" tests="1"><testcase name="[It] a [zone]" time="1"></testcase></testsuite></testsuites>`
	if err := os.WriteFile(filepath.Join(dir, "junit_fake-local_01.xml"), []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ReadRun(dir)
	if err != nil || len(r.Cases) != 1 {
		t.Fatalf("ReadRun: %+v, %v", r, err)
	}
	if _, err := FoldExcerpts(dir); err != nil {
		t.Errorf("FoldExcerpts: %v", err)
	}
}
