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

# A cloud plugin for ccm-harness (docs/cloud-plugin.md) over the AWS CLI and
# jq: it answers for EC2 instances, classic load balancers and the cluster's
# route tables, and stops, starts and terminates instances. It reads the
# AWS CLI's usual environment or shared files (credentials, region), and
# optionally AWS_ENDPOINT_URL_EC2 and AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING
# (for an older CLI that does not read them itself) and
# KUBERNETES_CLUSTER_ID (the route tables tagged kubernetes.io/cluster/<id>).
# A node is the instance whose private DNS name is the node's name.
set -euo pipefail
V=cloudplugin.ccm-harness.sigs.k8s.io/v1alpha1
req=$(cat)
verb=$(jq -r .verb <<<"$req")
node=$(jq -r '.node // ""' <<<"$req")
die() { echo "$*" >&2; exit 1; }
aws_() { local svc=$1 url=$2; shift 2; aws ${url:+--endpoint-url "$url"} --output json "$svc" "$@"; }
ec2() { aws_ ec2 "${AWS_ENDPOINT_URL_EC2:-}" "$@"; }
elb() { aws_ elb "${AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING:-}" "$@"; }
answer() { jq -c --arg v "$V" '{apiVersion: $v, kind: "Response"} + .'; }
# live: the instances of node $1 that are not terminated.
live() { ec2 describe-instances --filters "Name=private-dns-name,Values=$1" |
  jq '[.Reservations[].Instances[] | select(.State.Name != "terminated")]'; }
# one: the one live instance of the node, or a one-line error.
one() { local l; l=$(live "$node"); [ "$(jq length <<<"$l")" = 1 ] ||
  die "EC2 has $(jq length <<<"$l") live instances with private DNS name $node"; jq '.[0]' <<<"$l"; }
# names: instance ID -> node name, for backends and routes.
names() { ec2 describe-instances | jq '[.Reservations[].Instances[] | {(.InstanceId): .PrivateDnsName}] | add // {}'; }
# defs: in jq, node($id) is the node name of instance ID $id, or the ID (a terminated one has no name).
defs='def node($id): ($names[$id] // "") as $n | if $n == "" then $id else $n end;'

# load_balancers answers the loadBalancers verb: the classic ones, with the
# source ranges of their security groups (all of them read: a group
# deleted with its load balancer meanwhile is then missing, not an error).
load_balancers() {
  local lbs lbnames tags groups
  # (An if's condition runs it without set -e: each step returns itself.)
  lbs=$(elb describe-load-balancers | jq .LoadBalancerDescriptions) || return
  mapfile -t lbnames < <(jq -r '.[].LoadBalancerName' <<<"$lbs")
  # None (the leak check's usual answer): no more calls, each a second.
  [ ${#lbnames[@]} -gt 0 ] || { echo '{"loadBalancers": []}' | answer; return; }
  tags=$(elb describe-tags --load-balancer-names "${lbnames[@]:0:20}" | jq .TagDescriptions) || return
  groups=$(ec2 describe-security-groups | jq .SecurityGroups) || return
  jq -n --argjson lbs "$lbs" --argjson tags "$tags" --argjson groups "$groups" --argjson names "$(names)" "$defs"'{loadBalancers: [
    $lbs[] | . as $lb | {name: .LoadBalancerName, hostname: .DNSName,
      service: ([$tags[] | select(.LoadBalancerName == $lb.LoadBalancerName) | .Tags[]
        | select(.Key == "kubernetes.io/service-name") | .Value] | first // ""),
      listeners: [.ListenerDescriptions[].Listener | {port: .LoadBalancerPort, protocol: "TCP", nodePort: .InstancePort}],
      backends: [.Instances[].InstanceId | node(.)],
      healthCheckNodePort: ((.HealthCheck.Target | capture("^HTTPS?:(?<p>[0-9]+)") | .p | tonumber) // 0),
      sourceRanges: ([$groups[] | select(.GroupId as $g | $lb.SecurityGroups | index($g)) | .IpPermissions[]
        | select(.IpProtocol == "tcp" or .IpProtocol == "6" or .IpProtocol == "-1") | .IpRanges[].CidrIp
        | select(. != "0.0.0.0/0")] | unique)}]}' | answer
}

case $verb in
capabilities)
  echo '{"verbs": ["instance", "loadBalancers", "routes", "deleteRoute", "stop", "start", "terminate"]}' | answer ;;
instance)
  # The addresses as the AWS CCM makes them (extractIPv4NodeAddresses).
  one | jq --arg region "${AWS_REGION:-${AWS_DEFAULT_REGION:-$(aws configure get region)}}" '{instance: {
    providerID: "aws:///\(.Placement.AvailabilityZone)/\(.InstanceId)", instanceType: .InstanceType,
    zone: .Placement.AvailabilityZone, region: $region, running: (.State.Name == "running"),
    addresses: ([.NetworkInterfaces | sort_by(.Attachment.DeviceIndex)[] | select(.Status == "in-use")
        | .PrivateIpAddresses[].PrivateIpAddress | select(test("^[0-9.]+$")) | {type: "InternalIP", address: .}]
      + [.PublicIpAddress // empty | {type: "ExternalIP", address: .}]
      + [.PrivateDnsName // empty | select(. != "") | {type: "InternalDNS", address: .}, {type: "Hostname", address: .}]
      + [.PublicDnsName // empty | select(. != "") | {type: "ExternalDNS", address: .}])}}' | answer ;;
loadBalancers)
  # A load balancer deleted between two calls is not found by the second:
  # read the listing again, up to three times.
  errf=$(mktemp); trap 'rm -f "$errf"' EXIT
  for try in 1 2 3; do
    if out=$(load_balancers 2>"$errf"); then echo "$out"; exit; fi
    grep -q 'LoadBalancerNotFound' "$errf" || break
  done
  die "$(tail -n1 "$errf")" ;;
routes)
  filter=()
  [ -z "${KUBERNETES_CLUSTER_ID:-}" ] || filter=(--filters "Name=tag-key,Values=kubernetes.io/cluster/$KUBERNETES_CLUSTER_ID")
  ec2 describe-route-tables "${filter[@]}" | jq --argjson names "$(names)" "$defs"'{routes: [.RouteTables[] | .RouteTableId as $t
    | .Routes[] | select(.InstanceId) | {name: "\($t)/\(.DestinationCidrBlock)", destinationCIDR: .DestinationCidrBlock,
      targetNode: node(.InstanceId), blackhole: (.State == "blackhole")}]}' | answer ;;
deleteRoute)
  route=$(jq -r .route <<<"$req")
  ec2 delete-route --route-table-id "${route%%/*}" --destination-cidr-block "${route#*/}" >/dev/null
  echo '{}' | answer ;;
stop|start)
  id=$(one | jq -r .InstanceId)
  ec2 "$verb-instances" --instance-ids "$id" >/dev/null
  echo '{}' | answer ;;
terminate)
  # The listing first, on its own: a failure inside mapfile's < <(...)
  # escapes set -e, and the verb would answer a terminate it never made
  # (the node then stays Ready, which reads as the CCM's failure).
  l=$(live "$node")
  mapfile -t ids < <(jq -r '.[].InstanceId' <<<"$l")
  [ ${#ids[@]} -eq 0 ] || ec2 terminate-instances --instance-ids "${ids[@]}" >/dev/null
  echo '{}' | answer ;;
*) die "verb $verb is not answered" ;;
esac
