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
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	dir := t.TempDir()
	const planted = "planted-s3cret-value"
	files := map[string]string{
		"logs/ccm.log":      "I1121 loaded cloud config: user=admin " + planted + " ok\n",
		"logs/cfg.log":      "global:\n  password: hunter2hunter\n  insecureFlag: true\n",
		"logs/http.log":     "GET / Authorization: Bearer abc.def.ghi\n",
		"logs/key.log":      "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n",
		"junit_fake_01.xml": `<failure message="token=` + planted + `"></failure>`,
		"logs/clean.log":    "nothing to see\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n, err := Redact(dir, []string{planted, "x"})
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Errorf("changed %d files, want 5", n)
	}
	for name := range files {
		data, _ := os.ReadFile(filepath.Join(dir, name))
		s := string(data)
		for _, secret := range []string{planted, "hunter2hunter", "abc.def.ghi", "MHcCAQEE"} {
			if strings.Contains(s, secret) {
				t.Errorf("%s still holds %q:\n%s", name, secret, s)
			}
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "logs/cfg.log")); !strings.Contains(string(data), "insecureFlag: true") || !strings.Contains(string(data), "password: "+Redacted) {
		t.Errorf("redaction went beyond the secret:\n%s", data)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "logs/clean.log")); string(data) != "nothing to see\n" {
		t.Errorf("clean file changed: %q", data)
	}
}

// A JUnit body holds log lines with their newlines as "&#xA;": redaction
// stops there, so the line after a secret stays whole, and redacting twice
// (an excerpt is redacted before it reaches the JUnit file, which is
// redacted again with every artifact) changes nothing more.
func TestRedactXMLEscapedAndTwice(t *testing.T) {
	const planted = "planted-s3cret-value"
	excerpt := RedactText("E1121 cloud: 401 token="+planted+"\nE1122 next line\n", []string{"known-secret-1"})
	if excerpt != "E1121 cloud: 401 token="+Redacted+"\nE1122 next line\n" {
		t.Errorf("RedactText: %q", excerpt)
	}
	if got := RedactText("password: known-secret-1 and again known-secret-1", []string{"known-secret-1"}); strings.Contains(got, "known-secret-1") {
		t.Errorf("RedactText left a known secret: %q", got)
	}

	dir := t.TempDir()
	body := `<failure message="" type="failed">[FAILED] x&#xA;E1121 401 token=` + planted + `&#xA;E1122 401 token=` + Redacted + `&#xA;E1123 password=&#34;` + planted + `&#34; ok</failure>`
	path := filepath.Join(dir, "junit_01.xml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Redact(dir, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := `<failure message="" type="failed">[FAILED] x&#xA;E1121 401 token=` + Redacted + `&#xA;E1122 401 token=` + Redacted + `&#xA;E1123 password=&#34;` + Redacted + `&#34; ok</failure>`
	if string(got) != want {
		t.Errorf("redacted JUnit:\n%s\nwant\n%s", got, want)
	}
	if n, err := Redact(dir, nil); err != nil || n != 0 {
		t.Errorf("a second redaction changed %d files (%v)", n, err)
	}
}

// RedactRun leaves alone the folders of other runs under the run's (make
// test's targets keep theirs under the default run's, some still writing),
// and redacts the run's own: its top and the folders it writes.
func TestRedactRunKeepsToItsOwn(t *testing.T) {
	dir := t.TempDir()
	const planted = "planted-s3cret-value"
	own := []string{"e2e.log", LogsDir + "/c1/ccm.log", MigrationDir + "/upgrade/timeline.json", LentNodesDir + "/node-4.log"}
	others := []string{"kind/" + LogsDir + "/c2/ccm.log", "controls/wrong-zone/e2e.log", "make-test/e2e-kind.log"}
	for _, name := range append(own, others...) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("token="+planted+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n, err := RedactRun(dir, []string{planted})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(own) {
		t.Errorf("changed %d files, expected the run's own %d", n, len(own))
	}
	for _, name := range own {
		if data, _ := os.ReadFile(filepath.Join(dir, name)); strings.Contains(string(data), planted) {
			t.Errorf("%s, the run's own, still holds the secret", name)
		}
	}
	for _, name := range others {
		if data, _ := os.ReadFile(filepath.Join(dir, name)); !strings.Contains(string(data), planted) {
			t.Errorf("%s, another run's, was rewritten: %q", name, data)
		}
	}
}
