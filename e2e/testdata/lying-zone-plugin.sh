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

# The example AWS cloud plugin, lying about every machine's zone: a
# negative control (e2e/controls) that a plugin's answers are what the
# specs judge by, and that a wrong one fails the zone spec with its message.
set -euo pipefail
"$(dirname "$0")/../../examples/cloud-plugin/aws-cli.sh" | jq -c 'if .instance then .instance.zone = "lie-zone-1x" else . end'
