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

# Every Go file, shell script and Makefile the repository tracks begins
# with the license header of hack/boilerplate/boilerplate.txt (any year):
# a Go file with it as a block comment, the others as # comments after
# their #! line. Names each file that lacks it and how to add it.
set -euo pipefail
cd "$(dirname "$0")/.."

tmpl=hack/boilerplate/boilerplate.txt
n=$(wc -l < "$tmpl")
# The header as each kind of file holds it, YEAR standing for any year.
want_go=$( { echo '/*'; cat "$tmpl"; echo '*/'; } )
want_sh=$(sed -e 's/^/# /' -e 's/^# $/#/' "$tmpl")

header() { sed -E 's/Copyright 20[0-9]{2} /Copyright YEAR /'; }

bad=()
while IFS= read -r f; do
  case $f in
  *.go) got=$(head -n $((n + 2)) "$f" | header); want=$want_go ;;
  Makefile | */Makefile) got=$(head -n "$n" "$f" | header); want=$want_sh ;;
  *.sh | .ci/*)
    [ "$(head -c 2 "$f")" = '#!' ] || { bad+=("$f (no #! line)"); continue; }
    got=$(sed -n "2,$((n + 1))p" "$f" | header); want=$want_sh ;;
  *) continue ;;
  esac
  [ "$got" = "$want" ] || bad+=("$f")
done < <(git ls-files)

if [ ${#bad[@]} -gt 0 ]; then
  echo "verify-boilerplate: ${#bad[@]} file(s) lack the license header of $tmpl (a Go file: as a /* */ block first; a script: as # lines after #!; a Makefile: as # lines first):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "verify-boilerplate: every Go file, script and Makefile has the license header"
