#!/usr/bin/env bash
# Usage: reach-aws.sh CLOUD_ADMIN_DIR OUT_DIR
#
# Sets up what a provider's CI holds for a cluster and an AWS the harness
# did not make (make e2e-reached): the AWS CLI's usual configuration for
# the harness's inspector (a shared config and credentials file with its
# own access key, never the CCM's; the endpoints in AWS_ENDPOINT_URL_*, as
# for any AWS-compatible cloud), and the two profile files that reach that
# AWS, one judging through the AWS SDK, one through the example cloud
# plugin. Here the AWS is fakecloud, started by `ccm-harness up`, whose
# cloud-admin folder says where it listens; against a real account only
# the env file's endpoints go, and the nameserver line.
set -euo pipefail
admin=$1 out=$2
mkdir -p "$out"
endpoint=$(cat "$admin/endpoint")
printf '[profile ccm-harness-inspector]\nregion = fake-region-1\n' >"$out/config"
printf '[ccm-harness-inspector]\naws_access_key_id = AKIAFAKECLOUDINSPECT\naws_secret_access_key = %s\n' \
  "$(cat "$admin/inspector.token")" >"$out/credentials"
chmod 600 "$out/credentials"
cat >"$out/env" <<EOF
export AWS_CONFIG_FILE=$out/config AWS_SHARED_CREDENTIALS_FILE=$out/credentials AWS_PROFILE=ccm-harness-inspector
export AWS_ENDPOINT_URL_EC2=$endpoint/aws/ec2/
export AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING=$endpoint/aws/elb/
export AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING_V2=$endpoint/aws/elbv2/
export AWS_EC2_METADATA_DISABLED=true KUBERNETES_CLUSTER_ID=ccm-harness
EOF
here=$(cd "$(dirname "$0")" && pwd)
for name in aws-reached aws-reached-plugin; do
  {
    echo "# Written by e2e/testdata/reach-aws.sh: the AWS CCM of a cluster the"
    echo "# harness did not make (no ccm: it runs there already), judged against"
    echo "# an AWS the harness does not run, reached as the environment says."
    echo "name: $name"
    echo "cloud: aws"
    echo "cloudConfig:"
    echo "  reach:"
    echo "    clusterID: ccm-harness"
    echo "    nameserver: $(cat "$admin/dns")"
    echo "capabilities: [instances, zones, node-lifecycle, load-balancers, routes]"
    if [ "$name" = aws-reached-plugin ]; then
      echo "inspector:"
      echo "  plugin: $here/../../examples/cloud-plugin/aws-cli.sh"
    fi
  } >"$out/$name.yaml"
done
