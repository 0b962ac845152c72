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

package machines

import (
	"bytes"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// fakeDocker puts on PATH a docker that logs its calls to the returned
// file and answers as Docker does: "No such container" for gone, a stop
// of flaky that fails once, and nothing at all from a Docker not running
// when down is set.
func fakeDocker(t *testing.T, down bool) string {
	t.Helper()
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	script := `#!/bin/sh
echo "$*" >> ` + calls + `
[ -n "` + map[bool]string{true: "down"}[down] + `" ] && { echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2; exit 1; }
for last; do :; done
case "$1 $2" in
"container inspect") [ "$last" = gone ] && { echo "Error: No such container: gone" >&2; exit 1; }; echo 1d ;;
"inspect --format") case "$3" in *Networks*) echo '{}' ;; *) echo 1d ;; esac ;;
"stop --time")
  if [ "$last" = flaky ] && [ ! -e ` + dir + `/failed ]; then
    touch ` + dir + `/failed; echo "Error response from daemon: cannot stop container: flaky: tried to kill container, but did not receive an exit event" >&2; exit 1
  fi ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return calls
}

func stops(t *testing.T, calls string) int {
	b, _ := os.ReadFile(calls)
	return strings.Count(string(b), "stop --time 0")
}

// TestDockerFollows: a machine follows its instance, asked again when
// Docker fails, an instance with no container is only data, and each
// change, done or not, is a line of the log naming the machine.
func TestDockerFollows(t *testing.T) {
	powerFor, retryAfter = 2*time.Second, 10*time.Millisecond
	t.Cleanup(func() { powerFor, retryAfter = 3*time.Minute, 2*time.Second })
	for _, c := range []struct {
		name, machine string
		down          bool
		stops         int
		logs          []string
	}{
		{"stops", "node-a", false, 1, []string{"machine node-a: stopped its container, as its instance is terminated"}},
		{"asks again", "flaky", false, 2, []string{
			"machine flaky: its container did not follow the instance to terminated (try 1): docker stop --time 0 flaky: exit status 1: Error response from daemon: cannot stop container: flaky: tried to kill container",
			"machine flaky: stopped its container, as its instance is terminated",
		}},
		{"only data", "gone", false, 0, nil},
		{"Docker not running", "node-a", true, 0, []string{
			"machine node-a: its container did not follow the instance to terminated (try 1): docker container inspect node-a: exit status 1: Cannot connect to the Docker daemon",
			"machine node-a: gave up after 2s: its container is not stopped though its instance is terminated",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := fakeDocker(t, c.down)
			var out bytes.Buffer
			Docker(log.New(&out, "", 0))(c.machine, api.StateTerminated)
			if got := stops(t, calls); got != c.stops {
				t.Errorf("docker stop called %d times, want %d", got, c.stops)
			}
			for _, want := range c.logs {
				if !strings.Contains(out.String(), want) {
					t.Errorf("log:\n%s\nwant a line containing %q", out.String(), want)
				}
			}
			if len(c.logs) == 0 && out.Len() != 0 {
				t.Errorf("log:\n%s\nwant nothing", out.String())
			}
		})
	}
}
