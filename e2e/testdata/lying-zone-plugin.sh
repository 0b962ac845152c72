#!/usr/bin/env bash
# The example AWS cloud plugin, lying about every machine's zone: a
# negative control (e2e/controls) that a plugin's answers are what the
# specs judge by, and that a wrong one fails the zone spec with its message.
set -euo pipefail
"$(dirname "$0")/../../examples/cloud-plugin/aws-cli.sh" | jq -c 'if .instance then .instance.zone = "lie-zone-1x" else . end'
