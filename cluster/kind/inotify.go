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
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// inotifyLimits are what kind's known issues ask for ("Pod errors due to
// too many open files"): each node's kubelet and systemd take inotify
// instances, and under the kernel's default of 128 per user a kubelet
// fails to start once a cluster or two run, so that its node never joins.
var inotifyLimits = []struct {
	key  string
	want int
}{
	{"fs.inotify.max_user_instances", 512},
	{"fs.inotify.max_user_watches", 524288},
}

// inotifyHint is a failed bring-up's hint where this machine's inotify
// limits are under kind's, naming the fix; empty where they are not.
func inotifyHint() string { return inotifyHintIn("/proc/sys") }

func inotifyHintIn(sysctls string) string {
	var low, fix []string
	for _, l := range inotifyLimits {
		data, err := os.ReadFile(filepath.Join(sysctls, strings.ReplaceAll(l.key, ".", "/")))
		if err != nil {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && n < l.want {
			low = append(low, fmt.Sprintf("%s is %d", l.key, n))
			fix = append(fix, fmt.Sprintf("%s=%d", l.key, l.want))
		}
	}
	if len(low) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s, under what kind needs for a kubelet to start beside other clusters: raise with sysctl -w %s)",
		strings.Join(low, " and "), strings.Join(fix, " "))
}
