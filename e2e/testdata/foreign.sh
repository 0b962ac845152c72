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

# Usage: foreign.sh up DIR LENT_NODE... | foreign.sh join DIR NODE | foreign.sh down DIR
#
# A cluster and a cloud the harness did not make, made as their owners
# would make them, with their own tools (make e2e-foreign):
#   - the cloud: fakecloud started on its own, speaking AWS, its machines
#     the cluster's node containers (--docker-machines: a stopped instance
#     stops its container, as a machine losing power);
#   - the cluster: kind's own command line (kind create cluster) from the
#     harness's node image (there is no registry here to pull kind's), an
#     external cloud provider's kubelets, the nodes' pod network made as a
#     cluster admin's would be (a bridge per node and static routes between
#     them, kept across a node's reboot by a systemd unit);
#   - the instances: the node containers recorded in the cloud as what they
#     are (its admin API: a real cloud has its machines already);
#   - the CCM: the AWS CCM's image loaded with kind load, installed from
#     cloud-provider-aws's own manifests (examples/existing-cluster/base,
#     as providers/aws/manifests holds them) with kubectl and a kustomize
#     overlay that gives it its cloud config and credentials.
# The nodes lent to the lifecycle specs are cordoned, so that no other
# spec's pod lands on a machine those specs stop. What the harness then
# gets is DIR/kubeconfig and DIR/cloud-admin (the cloud's endpoint, its
# DNS and the inspector's secret, for reach.sh), nothing else.
#
# join is the cluster's join hook (the suite's --join-hook, which appends
# NODE): a machine added as its owner would add one: a node container made
# as kind makes a worker's, on the cluster's network, recorded in the cloud
# as up records the others, joined with kubeadm and a fresh bootstrap
# token, its kubelet's --node-labels from $CCM_HARNESS_NODE_LABELS, and
# given its share of the pod network (its bridge, routes both ways).
# Stopping and terminating it is the cloud's: its container stops with its
# instance.
#
# down deletes the cluster, stops the cloud and removes DIR, keeping the
# cloud's and the CCM's logs in $ARTIFACTS/foreign-cluster if set; up does
# the same when it fails. Binaries are make build's ($BIN, default
# _output/bin): ccm-harness, kind.
set -Eeuo pipefail
# A command that fails quietly (its output discarded, such as systemctl's)
# ends the script under set -e with no word of why: the failing command is
# named, where make test's failure excerpt shows it (a CI run's up ended
# with "failed; removing what was made" alone). Not in a subshell: a
# command substitution whose failure the script expects (find of a path
# that is not there) would be named too.
trap 'rc=$?; [ "$BASH_SUBSHELL" != 0 ] || echo "foreign.sh: failed at line $LINENO (exit $rc): $BASH_COMMAND" >&2' ERR
cmd=${1:-} dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: foreign.sh up DIR LENT_NODE... | foreign.sh join DIR NODE | foreign.sh down DIR" >&2
  exit 2
fi
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${BIN:-$root/_output/bin}
name=${FOREIGN_NAME:-ccm-harness-foreign}
# The cluster's nodes on a Docker network of their own, not kind's shared
# one: a machine keeps its address while stopped (as a cloud's does), which
# a container started meanwhile on the same network would take. kind uses
# it as it finds it.
net=$name
export KIND_EXPERIMENTAL_DOCKER_NETWORK=$net
# What a user of the AWS CCM outside AWS writes in its cloud config: the
# cluster's VPC, a subnet and its cluster tag, as fakecloud's AWS has them
# (fakecloud/api: AWSVPCID, AWSSubnetID(0), AWSClusterID), and the CCM's
# access key (AWSAccessKeyID), whose secret is the cloud's token.
region=fake-region-1
vpc=vpc-0fa4ec10d00000001
subnet=subnet-0fa4ec10d00000001
cluster_id=ccm-harness
ccm_key=AKIAFAKECLOUD0000001

log() { echo "foreign.sh: $*" >&2; }

kubectl() {
  docker exec -i "$name-control-plane" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"
}

down() {
  # A machine that did not follow its instance fails a lifecycle spec in a
  # way the spec cannot see the cause of: said here, where CI shows it.
  grep -h "did not follow\|gave up" "$dir/fakecloud.log" 2>/dev/null | sed 's/^/foreign.sh: the cloud said: /' >&2 || true
  # Nor can it see a kube-controller-manager that restarted (its lease
  # lost on a loaded machine): its node lifecycle controller then starts
  # each silent node's grace period again, and a stopped node stays Ready.
  restarts=$(kubectl -n kube-system get pods -l component=kube-controller-manager \
    -o jsonpath='{.items[*].status.containerStatuses[*].restartCount}' 2>/dev/null || true)
  case "$restarts" in "" | 0) ;; *) log "kube-controller-manager restarted $restarts times: its node lifecycle controller gave each NotReady node its grace period again" ;; esac
  if [ -n "${ARTIFACTS:-}" ] && [ -d "$dir" ]; then
    mkdir -p "$ARTIFACTS/foreign-cluster"
    cp "$dir"/*.log "$ARTIFACTS/foreign-cluster/" 2>/dev/null || true
    kubectl -n kube-system logs daemonset/aws-cloud-controller-manager >"$ARTIFACTS/foreign-cluster/aws-cloud-controller-manager.log" 2>&1 || true
  fi
  if [ -x "$bin/kind" ]; then
    "$bin/kind" delete cluster --name "$name" --kubeconfig "$dir/kubeconfig" >/dev/null 2>&1 || true
  fi
  # A node killed while its runc froze a pod's cgroup cannot be killed
  # until that cgroup is thawed ("did not receive an exit event"), which
  # kind delete does not do: thaw what is left and remove it.
  for c in $(docker ps -aq --filter "label=io.x-k8s.kind.cluster=$name"); do
    id=$(docker inspect --format '{{.Id}}' "$c")
    for f in $(find "/sys/fs/cgroup/freezer/docker/$id" "/sys/fs/cgroup/freezer/system.slice/docker-$id.scope" \
      -name freezer.state 2>/dev/null); do
      if grep -q FROZEN "$f"; then echo THAWED >"$f"; fi
    done
    for f in $(find "/sys/fs/cgroup/docker/$id" "/sys/fs/cgroup/system.slice/docker-$id.scope" -name cgroup.freeze 2>/dev/null); do
      if grep -q 1 "$f"; then echo 0 >"$f"; fi
    done
    docker rm --force --volumes "$c" >/dev/null 2>&1 || echo "foreign.sh: cannot remove node container $c" >&2
  done
  if [ -f "$dir/fakecloud.pid" ]; then
    pid=$(cat "$dir/fakecloud.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  docker network rm "$net" >/dev/null 2>&1 || true
  rm -rf "$dir"
}

# path is where the harness's cache holds binary $1 (up wrote the list).
path() { awk -v n="$1" '$1 == n { print $2 }' "$dir/binaries"; }

# node_ip is node container $1's address on the cluster's network.
node_ip() { docker inspect --format "{{(index .NetworkSettings.Networks \"$net\").IPAddress}}" "$1"; }

# record_instance records node container $1 in the cloud as what it is
# (its admin API: a real cloud has its machines already).
record_instance() {
  local ip
  ip=$(node_ip "$1")
  curl -fsS -X POST -H "Authorization: Bearer $(cat "$dir/admin.token")" -H 'Content-Type: application/json' \
    -d "{\"name\":\"$1\",\"hostname\":\"$1\",\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"$ip\"},{\"type\":\"Hostname\",\"address\":\"$1\"}]}" \
    "$(cat "$dir/cloud-admin/endpoint")/admin/v1/instances" >/dev/null
}

# pod_cidrs prints "NODE CIDR" for every node, once each has one (up to
# 2 minutes).
pod_cidrs() {
  local cidrs
  for _ in $(seq 120); do
    cidrs=$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.spec.podCIDR}{"\n"}{end}')
    echo "$cidrs" | awk 'NF < 2 { missing = 1 } END { exit missing }' && break
    sleep 1
  done
  echo "$cidrs" | awk 'NF < 2 { missing = 1 } END { exit missing }' || { echo "foreign.sh: nodes without a pod CIDR after 2 minutes: $cidrs" >&2; return 1; }
  echo "$cidrs"
}

# cidr_of is node $1's pod CIDR in pod_cidrs' lines $2.
cidr_of() { echo "$2" | awk -v n="$1" '$1 == n { print $2 }'; }

# pod_network gives node $1 its bridge for its pod CIDR and routes to the
# other nodes' (pod_cidrs' lines $2), in a unit that survives its reboot.
pod_network() {
  local n=$1 cidrs=$2 routes="" m
  for m in $(echo "$cidrs" | awk '{ print $1 }'); do
    [ "$m" = "$n" ] && continue
    routes="$routes
ip route replace $(cidr_of "$m" "$cidrs") via $(node_ip "$m")"
  done
  docker exec -i "$n" sh -c 'cat > /etc/cni/net.d/10-bridge.conflist' <<EOF
{"cniVersion": "0.4.0", "name": "bridge", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$(cidr_of "$n" "$cidrs")"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
  printf '#!/bin/sh\n%s\n' "$routes" | docker exec -i "$n" sh -c 'cat > /usr/local/sbin/pod-routes && chmod +x /usr/local/sbin/pod-routes'
  docker exec -i "$n" sh -c 'cat > /etc/systemd/system/pod-routes.service' <<'EOF'
[Unit]
Description=Routes to the other nodes' pod CIDRs
After=network-online.target
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/pod-routes
RemainAfterExit=true
[Install]
WantedBy=multi-user.target
EOF
  docker exec "$n" systemctl enable --now pod-routes.service >/dev/null 2>&1
}

join() {
  local node=$1 image ip endpoint token hash labels cidrs route m
  [ -f "$dir/binaries" ] || { echo "foreign.sh join: $dir holds no cluster: run foreign.sh up $dir first" >&2; exit 1; }
  image=$(path kind-node-image)
  # kind deletes every container with its cluster label: the node goes
  # with the cluster.
  docker run --detach --tty --name "$node" --hostname "$node" \
    --label "io.x-k8s.kind.cluster=$name" --label io.x-k8s.kind.role=worker \
    --net "$net" --restart=on-failure:1 --init=false --cgroupns=private \
    --privileged --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
    --tmpfs /tmp --tmpfs /run --volume /var --volume /lib/modules:/lib/modules:ro "$image" >/dev/null
  record_instance "$node"
  for _ in $(seq 120); do docker exec "$node" ctr version >/dev/null 2>&1 && break; sleep 0.5; done
  docker exec "$node" ctr version >/dev/null 2>&1 || { echo "foreign.sh join: containerd did not start in node $node within a minute" >&2; exit 1; }
  # "kubeadm join ENDPOINT --token T --discovery-token-ca-cert-hash H"
  set -- $(docker exec "$name-control-plane" kubeadm token create --print-join-command)
  [ "${1:-}" = kubeadm ] && [ "${2:-}" = join ] && [ $# -ge 7 ] || { echo "foreign.sh join: kubeadm token create printed no join command: $*" >&2; exit 1; }
  endpoint=$3 token=$5 hash=$7
  ip=$(node_ip "$node")
  labels=""
  if [ -n "${CCM_HARNESS_NODE_LABELS:-}" ]; then
    labels="  - name: node-labels
    value: \"$CCM_HARNESS_NODE_LABELS\""
  fi
  docker exec -i "$node" sh -c 'cat > /kind/kubeadm.conf' <<EOF
apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
nodeRegistration:
  criSocket: unix:///run/containerd/containerd.sock
  kubeletExtraArgs:
$labels
  - name: node-ip
    value: "$ip"
  - name: cloud-provider
    value: external
discovery:
  bootstrapToken:
    apiServerEndpoint: "$endpoint"
    token: "$token"
    caCertHashes: ["$hash"]
skipPhases:
- preflight
EOF
  docker exec "$node" kubeadm join --config /kind/kubeadm.conf >"$dir/join-$node.log" 2>&1 ||
    { echo "foreign.sh join: kubeadm join of $node failed: $(tail -1 "$dir/join-$node.log")" >&2; exit 1; }
  cidrs=$(pod_cidrs)
  pod_network "$node" "$cidrs"
  # The others' routes to its pods, now and after their reboot. A node
  # stopped meanwhile (a lent one) is left without: the specs that stop a
  # machine send no traffic to the pods of one that joined.
  route="ip route replace $(cidr_of "$node" "$cidrs") via $ip"
  for m in $(echo "$cidrs" | awk '{ print $1 }'); do
    [ "$m" = "$node" ] && continue
    docker exec "$m" sh -c "echo '$route' >> /usr/local/sbin/pod-routes && $route" >/dev/null 2>&1 || true
  done
  log "node $node joined at $ip"
}

if [ "$cmd" = down ]; then
  down
  exit 0
fi
if [ "$cmd" = join ]; then
  [ $# = 1 ] || { echo "usage: foreign.sh join DIR NODE" >&2; exit 2; }
  join "$1"
  exit 0
fi
if [ "$cmd" != up ]; then
  echo "foreign.sh: unknown command $cmd (up, join or down)" >&2
  exit 2
fi
lent=("$@")
# A worker for the other specs' pods, and one per lent node.
workers=$((${#lent[@]} + 1))
for tool in docker curl; do
  command -v $tool >/dev/null || { echo "foreign.sh: $tool is not installed (it makes the cluster and asks the cloud)" >&2; exit 1; }
done
for tool in ccm-harness kind; do
  [ -x "$bin/$tool" ] || { echo "foreign.sh: $bin/$tool is missing: run make build" >&2; exit 1; }
done
if docker container inspect "$name-control-plane" >/dev/null 2>&1; then
  echo "foreign.sh: a cluster $name is running already: foreign.sh down DIR (or kind delete cluster --name $name)" >&2
  exit 1
fi
trap 'status=$?; if [ $status != 0 ]; then log "failed; removing what was made"; down; fi' EXIT
rm -rf "$dir"
mkdir -p "$dir/cloud-admin"

# The AWS CCM, fakecloud and the node image, from the harness's cache (the
# flags keep the caller's environment, such as a suite's PROVIDER_CONFIG,
# out of it).
"$bin/ccm-harness" binaries --provider=aws --cluster=kind --provider-config= --ccm-version= --ccm-image= \
  --kubernetes-version= >"$dir/binaries"
ccm_bin=$(path aws-cloud-controller-manager) fakecloud=$(path fakecloud) node_image=$(path kind-node-image)
ccm_version=$("$ccm_bin" --version 2>/dev/null | awk '{ print $NF }')
ccm_version=${ccm_version:-dev}

# The network first, with a subnet of its own: Docker keeps a stopped
# container's address for it (internal/nodecontainer) only on a network made
# with subnets of the user's, and kind lets Docker choose its IPv4 one.
for s in 10.231 10.232 10.233 10.234 10.235; do
  docker network create --subnet "$s.0.0/16" --gateway "$s.0.1" "$net" >/dev/null 2>"$dir/network.log" && break
done
docker network inspect "$net" >/dev/null 2>&1 || { echo "foreign.sh: docker network create $net failed: $(tail -1 "$dir/network.log")" >&2; exit 1; }

log "kind create cluster --name $name ($workers workers, image $node_image)"
{
  cat <<EOF
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
networking:
  disableDefaultCNI: true
nodes:
- role: control-plane
EOF
  for _ in $(seq "$workers"); do echo "- role: worker"; done
  cat <<'EOF'
kubeadmConfigPatches:
- |
  kind: ClusterConfiguration
  controllerManager:
    extraArgs:
    - name: cloud-provider
      value: external
- |
  kind: InitConfiguration
  nodeRegistration:
    kubeletExtraArgs:
    - name: cloud-provider
      value: external
    - name: provider-id
      value: null
  skipPhases:
  - preflight
- |
  kind: JoinConfiguration
  nodeRegistration:
    kubeletExtraArgs:
    - name: cloud-provider
      value: external
    - name: provider-id
      value: null
- |
  kind: KubeletConfiguration
  failCgroupV1: false
EOF
} >"$dir/kind.yaml"
"$bin/kind" create cluster --name "$name" --image "$node_image" --config "$dir/kind.yaml" \
  --kubeconfig "$dir/kubeconfig" >"$dir/kind-create.log" 2>&1 || {
  tail -5 "$dir/kind-create.log" >&2
  exit 1
}
nodes=$(docker ps --filter "label=io.x-k8s.kind.cluster=$name" --format '{{.Names}}' | sort)
gateway=$(docker network inspect "$net" --format '{{range .IPAM.Config}}{{.Gateway}} {{end}}' | tr ' ' '\n' | grep -v : | head -1)
subnet_cidr=$(docker network inspect "$net" --format '{{range .IPAM.Config}}{{.Subnet}} {{end}}' | tr ' ' '\n' | grep -v : | head -1)
[ -n "$gateway" ] || { echo "foreign.sh: docker network $net has no IPv4 gateway, where the CCM would reach the cloud" >&2; exit 1; }

log "fakecloud on $gateway, its machines the node containers"
for t in cloud admin inspector; do head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/$t.token"; done
# Load balancers on 127.29.0.0/24: loopback addresses the harness's own
# clouds (127.20.0.0/16) never take, as they run beside this one.
# A session of its own: a cloud does not stop on the terminal's Ctrl-C,
# which ends the suite, whose leak check still asks it; down stops it.
setsid "$fakecloud" --listen "$gateway:0" --dns-listen 127.0.0.1:0 --token-file "$dir/cloud.token" \
  --admin-token-file "$dir/admin.token" --inspector-token-file "$dir/inspector.token" \
  --backend-cidr "$subnet_cidr" --lb-cidr 127.29.0.0/24 --docker-machines \
  --audit-log "$dir/fakecloud-audit.log" >"$dir/fakecloud.log" 2>&1 &
echo $! >"$dir/fakecloud.pid"
for _ in $(seq 100); do
  grep -q "serving on" "$dir/fakecloud.log" 2>/dev/null && break
  kill -0 "$(cat "$dir/fakecloud.pid")" 2>/dev/null || { cat "$dir/fakecloud.log" >&2; exit 1; }
  sleep 0.1
done
endpoint=$(sed -n 's/.*serving on \(http:[^ ]*\).*/\1/p' "$dir/fakecloud.log" | head -1)
dns=$(sed -n 's#.*answering DNS on udp://\([^ ]*\).*#\1#p' "$dir/fakecloud.log" | head -1)
[ -n "$endpoint" ] && [ -n "$dns" ] || { echo "foreign.sh: fakecloud did not say where it serves ($dir/fakecloud.log)" >&2; exit 1; }
echo "$endpoint" >"$dir/cloud-admin/endpoint"
echo "$dns" >"$dir/cloud-admin/dns"
cp "$dir/inspector.token" "$dir/cloud-admin/inspector.token"

log "instances for $(echo $nodes | wc -w) nodes"
for n in $nodes; do record_instance "$n"; done

log "the pod network: a bridge per node, routes between them"
cidrs=$(pod_cidrs)
for n in $nodes; do pod_network "$n" "$cidrs"; done

log "the AWS CCM $ccm_version from its own manifests"
"$bin/ccm-harness" pack "$ccm_bin" --tag "ccm-harness.local/aws-cloud-controller-manager:$ccm_version" \
  --out "$dir/aws-ccm.tar" >/dev/null
"$bin/kind" load image-archive "$dir/aws-ccm.tar" --name "$name" >/dev/null
rm -f "$dir/aws-ccm.tar"
mkdir -p "$dir/ccm/base"
cp "$root"/providers/aws/manifests/*.yaml "$dir/ccm/base/"
{
  printf '[Global]\nRegion = %s\nVPC = %s\nSubnetID = %s\nKubernetesClusterID = %s\n' "$region" "$vpc" "$subnet" "$cluster_id"
  for s in "ec2 EC2" "elb Elastic Load Balancing" "elbv2 Elastic Load Balancing v2"; do
    set -- $s
    id=$1
    shift
    printf '\n[ServiceOverride "%s"]\nService = %s\nRegion = %s\nURL = %s/aws/%s/\nSigningRegion = %s\n' "$id" "$*" "$region" "$endpoint" "$id" "$region"
  done
} >"$dir/ccm/cloud.conf"
printf 'AWS_ACCESS_KEY_ID=%s\nAWS_SECRET_ACCESS_KEY=%s\nAWS_EC2_METADATA_DISABLED=true\n' "$ccm_key" "$(cat "$dir/cloud.token")" >"$dir/ccm/credentials.env"
cat >"$dir/ccm/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: kube-system
resources:
$(cd "$dir/ccm" && ls base/*.yaml | sed 's/^/- /')
images:
- name: registry.k8s.io/provider-aws/cloud-controller-manager
  newName: ccm-harness.local/aws-cloud-controller-manager
  newTag: "$ccm_version"
configMapGenerator:
- name: aws-cloud-config
  files: [cloud.conf]
secretGenerator:
- name: aws-credentials
  envs: [credentials.env]
patches:
- target: {kind: DaemonSet, name: aws-cloud-controller-manager}
  patch: |
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --cloud-config=/etc/aws/cloud.conf
    - op: add
      path: /spec/template/spec/containers/0/envFrom
      value: [{secretRef: {name: aws-credentials}}]
    - op: add
      path: /spec/template/spec/containers/0/volumeMounts
      value: [{name: cloud-config, mountPath: /etc/aws, readOnly: true}]
    - op: add
      path: /spec/template/spec/volumes
      value: [{name: cloud-config, configMap: {name: aws-cloud-config}}]
EOF
# Not docker cp: a kind node's /tmp is a tmpfs, which docker cp does not
# write into.
tar -C "$dir/ccm" -c . | docker exec -i "$name-control-plane" sh -c 'mkdir -p /root/aws-ccm && tar -C /root/aws-ccm -x'
kubectl apply -k /root/aws-ccm >"$dir/kubectl-apply.log" 2>&1 || { cat "$dir/kubectl-apply.log" >&2; exit 1; }
kubectl -n kube-system rollout status daemonset/aws-cloud-controller-manager --timeout=3m >/dev/null

log "nodes initialized by the CCM"
for _ in $(seq 180); do
  left=$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.spec.taints[*].key}{"\n"}{end}' | grep -c node.cloudprovider.kubernetes.io/uninitialized || true)
  [ "$left" = 0 ] && break
  sleep 1
done
[ "$left" = 0 ] || { echo "foreign.sh: $left nodes still uninitialized after 3 minutes: see the CCM's log (kubectl -n kube-system logs ds/aws-cloud-controller-manager)" >&2; exit 1; }
for n in "${lent[@]}"; do kubectl cordon "$n" >/dev/null; done
log "ready: KUBECONFIG=$dir/kubeconfig; the cloud at $endpoint (e2e/testdata/reach.sh aws $dir/cloud-admin OUT)"
