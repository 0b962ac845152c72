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
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// Redacted replaces a secret in artifacts.
const Redacted = "[REDACTED]"

// secretValue is what follows a secret's name. It ends where a quote,
// comma, brace or whitespace ends it in a log line, and also at an XML
// character reference ("&#xA;" is a newline in a JUnit body), so that the
// next line survives. An already redacted value matches as itself, so
// redacting twice changes nothing.
var secretValue = `(?:` + regexp.QuoteMeta(Redacted) + `|(?:[^\s"',}&]|&[^#\s"',}])+)`

// Patterns that are secret whatever the cloud: PEM private keys, bearer
// tokens in headers, and password-like settings in logged configuration.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----`),
	regexp.MustCompile(`(?i)(authorization:\s*bearer\s+)` + secretValue),
	regexp.MustCompile(`(?i)((?:password|passwd|secret|token|client-key-data)` + quote + `?\s*[:=]\s*` + quote + `?)` + secretValue),
}

// quote is a quote as it appears in a log line or escaped in XML.
const quote = `(?:["']|&#34;|&#39;|&quot;|&apos;)`

// RedactText replaces each of secrets, and anything matching the secret
// patterns, in one piece of text, such as a log excerpt bound for a
// report.
func RedactText(text string, secrets []string) string {
	return string(redact([]byte(text), knownSecrets(secrets)))
}

func knownSecrets(secrets []string) [][]byte {
	var known [][]byte
	for _, s := range secrets {
		// Too short a value would blank out ordinary words.
		if len(s) >= 6 {
			known = append(known, []byte(s))
		}
	}
	return known
}

func redact(data []byte, known [][]byte) []byte {
	out := data
	for _, k := range known {
		out = bytes.ReplaceAll(out, k, []byte(Redacted))
	}
	for _, re := range secretPatterns {
		out = re.ReplaceAll(out, []byte("${1}"+Redacted))
	}
	return out
}

// Redact rewrites every file under dir, replacing each of secrets (values
// the run knows to be secret, such as cloud credentials) and anything
// matching the secret patterns. It returns how many files it changed.
// What is left is fit to publish: logs, which only their owner could read
// while they might quote a secret, become readable by all.
func Redact(dir string, secrets []string) (int, error) {
	return redactFiles(filepath.WalkDir, dir, secrets)
}

// RedactRun is Redact of the run in dir: its own files alone (walkRun),
// not the runs that other targets keep in folders under it.
func RedactRun(dir string, secrets []string) (int, error) {
	return redactFiles(walkRun, dir, secrets)
}

func redactFiles(walk func(string, fs.WalkDirFunc) error, dir string, secrets []string) (int, error) {
	known := knownSecrets(secrets)
	changed := 0
	err := walk(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(path, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if out := redact(data, known); !bytes.Equal(out, data) {
			changed++
			if err := os.WriteFile(path, out, 0o644); err != nil {
				return err
			}
		}
		return os.Chmod(path, 0o644)
	})
	return changed, err
}
