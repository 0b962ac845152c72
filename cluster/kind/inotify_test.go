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

package kind

import (
	"os"
	"path/filepath"
	"testing"
)

func TestInotifyHint(t *testing.T) {
	dir := t.TempDir()
	set := func(key, value string) {
		p := filepath.Join(dir, "fs", "inotify", key)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(value+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set("max_user_instances", "128")
	set("max_user_watches", "524288")
	want := " (fs.inotify.max_user_instances is 128, under what kind needs for a kubelet to start beside other clusters: raise with sysctl -w fs.inotify.max_user_instances=512)"
	if got := inotifyHintIn(dir); got != want {
		t.Errorf("hint\n%q, want\n%q", got, want)
	}
	set("max_user_instances", "8192")
	if got := inotifyHintIn(dir); got != "" {
		t.Errorf("hint %q where the limits are kind's, want none", got)
	}
}
