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

// Patterns that are secret whatever the cloud: PEM private keys, bearer
// tokens in headers, and password-like settings in logged configuration.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----`),
	regexp.MustCompile(`(?i)(authorization:\s*bearer\s+)[^\s"']+`),
	regexp.MustCompile(`(?i)((?:password|passwd|secret|token)["']?\s*[:=]\s*["']?)[^\s"',}]+`),
}

// Redact rewrites every file under dir, replacing each of secrets (values
// the run knows to be secret, such as cloud credentials) and anything
// matching the secret patterns. It returns how many files it changed.
func Redact(dir string, secrets []string) (int, error) {
	var known [][]byte
	for _, s := range secrets {
		// Too short a value would blank out ordinary words.
		if len(s) >= 6 {
			known = append(known, []byte(s))
		}
	}
	changed := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out := data
		for _, k := range known {
			out = bytes.ReplaceAll(out, k, []byte(Redacted))
		}
		for _, re := range secretPatterns {
			out = re.ReplaceAll(out, []byte("${1}"+Redacted))
		}
		if bytes.Equal(out, data) {
			return nil
		}
		changed++
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(path, out, info.Mode().Perm())
	})
	return changed, err
}
