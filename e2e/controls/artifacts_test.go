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

package controls

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/providers/emulated"
	"sigs.k8s.io/ccm-harness/reports"
)

// TestRunArtifacts is a real, failing run whose cloud config plants a
// secret: the cloud answers every call about node-2 with an error that
// quotes a token, so the CCM logs it while the [node-init] spec waits and
// fails. Afterwards the secret must be in no artifact (the suite's own
// output included, as Prow keeps it as build-log.txt), although it
// demonstrably reached the logs; the failure's JUnit body must hold the
// message and the CCM's log lines; and the run must have printed its
// progress, its summary and where the report is.
func TestRunArtifacts(t *testing.T) {
	t.Parallel()
	suite := e2eBinary(t)
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	secret := "planted-" + hex.EncodeToString(b)

	state, artifacts := t.TempDir(), t.TempDir()
	if dir := os.Getenv("ARTIFACTS"); dir != "" {
		artifacts = filepath.Join(dir, "controls", "planted-secret")
		if err := os.RemoveAll(artifacts); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := json.Marshal(emulated.Config{Faults: []api.Fault{{
		Operation: api.OpAny, Instance: "node-2", Kind: api.FaultError, Status: 401,
		Message: "injected: credentials rejected, token=" + secret,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(t.TempDir(), "provider.yaml")
	if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	const spec = "removes the uninitialized taint from every node"
	cmd := suiteCommand(t, suite, false, []string{"label-filter=node-init", "focus=" + spec, "no-color", "timeout=" + controlTimeout.String()},
		[]string{"--provider=fake", "--ccm-version=", "--provider-config=" + cfgFile, "--artifacts=" + artifacts, "--wait-scale=0.25"})
	cmd.Env = append(os.Environ(), "CCM_HARNESS_STATE="+state)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := runSuite(cmd)
	// The suite's output is an artifact too: under Prow it is build-log.txt.
	logFile := filepath.Join(artifacts, "suite.log")
	if err := os.WriteFile(logFile, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if runErr == nil {
		t.Fatalf("the suite passed although node-2's instance API fails (log: %s)", logFile)
	}
	defer func() {
		if t.Failed() {
			t.Logf("suite log: %s", logFile)
		}
	}()

	// No artifact holds the secret...
	files := 0
	err = filepath.WalkDir(artifacts, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if i := bytes.Index(data, []byte(secret)); i >= 0 {
			from, to := max(0, i-120), min(len(data), i+len(secret)+40)
			t.Errorf("%s holds the planted secret: ...%s...", p, data[from:to])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// ... although it reached them: the CCM logged the cloud's error, and
	// redaction replaced the token.
	ccmLogs, _ := filepath.Glob(filepath.Join(artifacts, "logs", "*", "cloud-controller-manager.log"))
	if len(ccmLogs) != 1 {
		t.Fatalf("want one CCM log under %s/logs, found %v", artifacts, ccmLogs)
	}
	if data, _ := os.ReadFile(ccmLogs[0]); !bytes.Contains(data, []byte("token="+reports.Redacted)) {
		t.Errorf("the CCM log never quoted the cloud's error with the token redacted; the planted secret did not reach the artifacts and the test proves nothing (%s)", ccmLogs[0])
	}
	t.Logf("checked %d artifact files for the planted secret", files)

	// The failure body: Ginkgo's failure, then what the CCM logged while
	// the spec ran.
	var failure string
	for _, tc := range readJUnit(t, filepath.Join(artifacts, "junit_fake-local_01.xml")) {
		if strings.Contains(tc.Name, spec) && tc.Failure != nil {
			failure = tc.Failure.Body
		}
	}
	for _, want := range []string{"[FAILED] ", "node node-2", "Logs written while the spec ran", "/cloud-controller-manager.log\n", "token=" + reports.Redacted} {
		if !strings.Contains(failure, want) {
			t.Errorf("the JUnit failure body of %q lacks %q:\n%s", spec, want, failure)
		}
	}

	// Progress, summary, report.
	report := filepath.Join(artifacts, "report.html")
	for _, want := range []string{
		"\n[1/1] [node-init] Nodes " + spec + "\n",
		"\n  node-init ",
		"\nFAILED Nodes " + spec + " [node-init]\n    timed out after 30s waiting for the CCM to initialize every node:\n    node node-2: expected taint",
		"\nreport: " + report + "\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the suite's output lacks %q", want)
		}
	}
	if !regexp.MustCompile(`\nSummary: 0 passed, 1 failed, 0 skipped, \d+ not selected; `).MatchString(out.String()) {
		t.Errorf("the suite's output lacks the summary line")
	}
	if page, err := os.ReadFile(report); err != nil || !strings.Contains(string(page), `<td class="failed">failed</td>`) {
		t.Errorf("report.html does not show the failure (%v)", err)
	}

	assertNothingLeft(t, state)
}
