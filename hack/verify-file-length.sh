#!/usr/bin/env bash
# Copyright 2026 The Kubernetes Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# No Go file the repository tracks, tests aside, is over 600 lines: a file
# that long holds more than one thing, and the next reader has to find
# which. Names each file over the limit.
set -euo pipefail
cd "$(dirname "$0")/.."

limit=600
bad=()
while IFS= read -r f; do
  n=$(wc -l < "$f")
  [ "$n" -le "$limit" ] || bad+=("$f ($n lines)")
done < <(git ls-files -- '*.go' ':!:*_test.go')
if [ ${#bad[@]} -gt 0 ]; then
  echo "verify-file-length: over $limit lines, split each by what its parts hold: $(IFS=,; echo "${bad[*]}" | sed 's/,/, /g')" >&2
  exit 1
fi
echo "verify-file-length: no Go file but tests is over $limit lines"
