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

package cluster

import (
	"bufio"
	"io"
	"strings"
)

// notControllers are /healthz checks every manager has, whatever it runs.
var notControllers = map[string]bool{"ping": true, "log": true, "leaderElection": true}

// HealthzControllers reads a controller manager's /healthz?verbose body:
// a manager adds a check per controller once it starts it, under whichever
// lease, so the checks that are not its own plumbing are its controllers.
func HealthzControllers(body io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "[+]") && !strings.HasPrefix(line, "[-]") {
			continue
		}
		name, _, _ := strings.Cut(line[3:], " ")
		if notControllers[name] || strings.HasPrefix(name, "poststarthook/") || strings.HasPrefix(name, "leaderElection") {
			continue
		}
		out = append(out, name)
	}
	return out, sc.Err()
}
