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

# Usage: reach.sh aws|openstack|vsphere CLOUD_ADMIN_DIR OUT_DIR
#
# Sets up what a provider's CI holds for a cluster and a cloud the harness
# did not make (make e2e-reached): the cloud's own tools' usual
# configuration for the harness's inspector, with credentials of its own,
# never the CCM's (AWS: a shared config and credentials file, the
# endpoints in AWS_ENDPOINT_URL_*; OpenStack: clouds.yaml and OS_CLOUD;
# vSphere: govc's GOVC_* variables),
# in OUT_DIR/env, and the profile files that reach that cloud with no ccm
# (the cluster's runs already): OUT_DIR/<cloud>-reached.yaml, and for AWS
# <cloud>-reached-plugin.yaml, judging through the example cloud plugin.
# Here the cloud is fakecloud (vcsim for vSphere), started by `ccm-harness up`, whose
# cloud-admin folder says where it listens and the inspector's secret;
# against a real cloud only the endpoints and the nameserver go.
set -euo pipefail
cloud=$1 admin=$2 out=$3
mkdir -p "$out"
fakecloud() { endpoint=$(cat "$admin/endpoint") secret=$(cat "$admin/inspector.token"); }
here=$(cd "$(dirname "$0")" && pwd)
# What the cluster's CCM is claimed to do; $CAPABILITIES narrows it (a CCM
# run without its route controller claims no routes).
# vSphere's CCM has neither load balancers nor routes. $REACH, for
# vSphere, is the reach config's fields (a control's wrong categories).
default_capabilities="instances, zones, node-lifecycle, load-balancers, routes"
[ "$cloud" = vsphere ] && default_capabilities="instances, zones, node-lifecycle"
# The extended features: those of the cloud's built-in profile (AWS's
# classic load balancers, OpenStack's Octavia); $FEATURES replaces them.
default_features=""
[ "$cloud" = aws ] && default_features="load-balancer-source-ranges, load-balancer-health-checks"
[ "$cloud" = openstack ] && default_features="load-balancer-udp, load-balancer-mixed-protocol, load-balancer-source-ranges, load-balancer-health-checks"
capabilities="capabilities: [${CAPABILITIES:-$default_capabilities}]
features: [${FEATURES-$default_features}]"
header="# Written by e2e/testdata/reach.sh: the CCM of a cluster the harness did
# not make (no ccm: it runs there already), judged against a cloud the
# harness does not run, reached as the environment says."
case $cloud in
aws)
  fakecloud
  printf '[profile ccm-harness-inspector]\nregion = fake-region-1\n' >"$out/config"
  printf '[ccm-harness-inspector]\naws_access_key_id = AKIAFAKECLOUDINSPECT\naws_secret_access_key = %s\n' "$secret" >"$out/credentials"
  chmod 600 "$out/credentials"
  cat >"$out/env" <<EOF
export AWS_CONFIG_FILE=$out/config AWS_SHARED_CREDENTIALS_FILE=$out/credentials AWS_PROFILE=ccm-harness-inspector
export AWS_ENDPOINT_URL_EC2=$endpoint/aws/ec2/
export AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING=$endpoint/aws/elb/
export AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING_V2=$endpoint/aws/elbv2/
export AWS_EC2_METADATA_DISABLED=true KUBERNETES_CLUSTER_ID=ccm-harness
EOF
  for name in aws-reached aws-reached-plugin; do
    printf '%s\nname: %s\ncloud: aws\ncloudConfig:\n  reach: {clusterID: ccm-harness, nameserver: "%s"}\n%s\n' \
      "$header" "$name" "$(cat "$admin/dns")" "$capabilities" >"$out/$name.yaml"
  done
  printf 'inspector:\n  plugin: %s\n' "$here/../../examples/cloud-plugin/aws-cli.sh" >>"$out/aws-reached-plugin.yaml"
  ;;
openstack)
  fakecloud
  cat >"$out/clouds.yaml" <<EOF
clouds:
  ccm-harness-inspector:
    auth:
      auth_url: $endpoint/identity/v3
      username: ccm-harness-inspector
      password: $secret
      project_name: ccm-harness
      user_domain_name: Default
      project_domain_name: Default
    region_name: fake-region-1
    identity_api_version: 3
EOF
  chmod 600 "$out/clouds.yaml"
  printf 'export OS_CLIENT_CONFIG_FILE=%s OS_CLOUD=ccm-harness-inspector\n' "$out/clouds.yaml" >"$out/env"
  printf '%s\nname: openstack-reached\ncloud: openstack\ncloudConfig:\n  reach: {routerID: router-ccm-harness, subnetID: subnet-private}\n%s\n' \
    "$header" "$capabilities" >"$out/openstack-reached.yaml"
  ;;
vsphere)
  # vcsim's port for the harness (vcsim.json) and its user there, with
  # the CA of its certificate, in the cluster's cloud folder.
  port=$(sed -n 's/.*"adminPort": *\([0-9]*\).*/\1/p' "$admin/vcsim.json")
  { read -r user; read -r password; } <"$admin/vcsim-admin-credentials"
  (umask 077; cat >"$out/env" <<EOF
export GOVC_URL=https://127.0.0.1:$port/sdk GOVC_USERNAME=$user GOVC_PASSWORD=$password
export GOVC_TLS_CA_CERTS=$(dirname "$admin")/cloud/ca.crt GOVC_DATACENTER=DC0
EOF
  )
  printf '%s\nname: vsphere-reached\ncloud: vsphere\ncloudConfig:\n  reach: {%s}\n%s\n' \
    "$header" "${REACH:-}" "$capabilities" >"$out/vsphere-reached.yaml"
  ;;
*)
  echo "reach.sh: unknown cloud $cloud (aws, openstack or vsphere)" >&2
  exit 2
  ;;
esac
