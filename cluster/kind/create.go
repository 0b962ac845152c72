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
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindexec "sigs.k8s.io/kind/pkg/exec"
	kindlog "sigs.k8s.io/kind/pkg/log"

	"sigs.k8s.io/ccm-harness/cluster/audit"
)

// kubeadmPatches make kind's kubeadm configuration one for an external
// cloud provider. kind merges extra arguments by name, and a null value
// removes one: the kubelets lose kind's provider ID (kind://...), so the
// CCM sets the cloud's. kubeadm deploys CoreDNS, whose image the node
// image carries (cluster/kind/coredns): its pods wait, as in a cloud, for
// the CCM to initialize the nodes.
//
// kind writes kubeadm's v1beta3 for a release before v1.36 and v1beta4
// from v1.36 (its pkg/cluster/internal/kubeadm/config.go): arguments are
// maps in the one and lists in the other, and v1beta3 has one timeout.
// Each patch names its apiVersion, so kind applies only the form of the
// configuration it wrote (a v1beta4 patch on v1.34's v1beta3 failed
// kubeadm init: "cannot unmarshal array into ... extraArgs").
var kubeadmPatches = []string{
	// Silent nodes are noticed in about 16 s rather than 50, as on the
	// local runtime: the kubelets renew their leases every 2 s.
	`apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
controllerManager:
  extraArgs:
  - name: cloud-provider
    value: external
  - name: node-monitor-grace-period
    value: 16s
  - name: node-monitor-period
    value: 1s
`,
	`apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
nodeRegistration:
  kubeletExtraArgs:
  - name: cloud-provider
    value: external
  - name: provider-id
    value: null
skipPhases:
- preflight
timeouts:
` + kubeadmTimeouts,
	`apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
nodeRegistration:
  kubeletExtraArgs:
  - name: cloud-provider
    value: external
  - name: provider-id
    value: null
timeouts:
` + kubeadmTimeouts,
	`apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
apiServer:
  timeoutForControlPlane: 6m0s
controllerManager:
  extraArgs:
    cloud-provider: external
    node-monitor-grace-period: 16s
    node-monitor-period: 1s
`,
	`apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
nodeRegistration:
  kubeletExtraArgs:
    cloud-provider: external
    provider-id: null
skipPhases:
- preflight
`,
	`apiVersion: kubeadm.k8s.io/v1beta3
kind: JoinConfiguration
nodeRegistration:
  kubeletExtraArgs:
    cloud-provider: external
    provider-id: null
`,
	// The hosts are cgroup v1, which kubelet v1.35 and later refuse
	// unless told otherwise.
	`kind: KubeletConfiguration
failCgroupV1: false
nodeLeaseDurationSeconds: 8
`,
}

// kubeadmTimeouts lengthen kubeadm's waits (1m, 4m and 4m by default):
// on two cores beside other suites a control plane once took over a
// minute to answer the call that marks its node, and init failed. A node
// that never comes still fails within createTimeout.
const kubeadmTimeouts = `  kubernetesAPICall: 3m0s
  controlPlaneComponentHealthCheck: 6m0s
  kubeletHealthCheck: 6m0s
`

// Where the control-plane node has the audit policy and writes the audit
// log, both mounted from this machine, and the patch that hands them to
// the API server's static pod. Not under /var/log: kind collects that
// into the very folder mounted there.
const (
	nodeAuditPolicyDir = "/ccm-harness/audit-policy"
	nodeAuditLogDir    = "/ccm-harness/log"
	auditPatch         = `apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
apiServer:
  extraArgs:
  - name: audit-policy-file
    value: ` + nodeAuditPolicyDir + `/policy.yaml
  - name: audit-log-path
    value: ` + nodeAuditLogDir + `/` + audit.LogName + `
  - name: audit-log-format
    value: json
  extraVolumes:
  - name: ccm-harness-audit-policy
    hostPath: ` + nodeAuditPolicyDir + `
    mountPath: ` + nodeAuditPolicyDir + `
    readOnly: true
    pathType: Directory
  - name: ccm-harness-audit-log
    hostPath: ` + nodeAuditLogDir + `
    mountPath: ` + nodeAuditLogDir + `
    pathType: DirectoryOrCreate
`
	// auditPatchV1beta3 is auditPatch in kubeadm's v1beta3 (see
	// kubeadmPatches).
	auditPatchV1beta3 = `apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
apiServer:
  extraArgs:
    audit-policy-file: ` + nodeAuditPolicyDir + `/policy.yaml
    audit-log-path: ` + nodeAuditLogDir + `/` + audit.LogName + `
    audit-log-format: json
  extraVolumes:
  - name: ccm-harness-audit-policy
    hostPath: ` + nodeAuditPolicyDir + `
    mountPath: ` + nodeAuditPolicyDir + `
    readOnly: true
    pathType: Directory
  - name: ccm-harness-audit-log
    hostPath: ` + nodeAuditLogDir + `
    mountPath: ` + nodeAuditLogDir + `
    pathType: DirectoryOrCreate
`
)

// createGiveUp is how long an interrupted kind create is given to fail
// once its nodes are deleted, and the nodes dockerd makes late to go:
// within Ginkgo's grace period after Ctrl-C.
const createGiveUp = 20 * time.Second

// createTimeout bounds kind's create, which takes a minute or two here
// and has no deadline of its own: on a node whose systemd cannot start
// (too few inotify instances) its kubeadm init waited for containerd for
// good.
const createTimeout = 8 * time.Minute

// commandOutput is the last lines a failed command in a node printed:
// kind keeps them only in its error's Output, which its message leaves
// out, and they say why kubeadm init or join failed.
func commandOutput(err error) string {
	var re *kindexec.RunError
	if !errors.As(err, &re) || len(bytes.TrimSpace(re.Output)) == 0 {
		return ""
	}
	return "; its last output lines:\n    " + strings.Join(lastLines(string(re.Output), 8), "\n    ")
}

// lastLines are the last n lines of a command's output, leaving out Go
// stack frames: kubeadm at --v=5 and above ends its error with the
// error's stack, which would fill the lines quoted and push out the
// messages that say what went wrong.
func lastLines(out string, n int) []string {
	all := strings.Split(strings.TrimSpace(out), "\n")
	var lines []string
	for i := 0; i < len(all); i++ {
		if i+1 < len(all) && isFrameFile(all[i+1]) {
			i++ // a function and its file: one frame
			continue
		}
		if isFrameFile(all[i]) {
			continue
		}
		lines = append(lines, all[i])
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// isFrameFile tells a stack frame's second line, "\tpath/file.go:123 +0x1f".
func isFrameFile(line string) bool {
	f := strings.Fields(line)
	return strings.HasPrefix(line, "\t") && len(f) > 0 && (strings.Contains(f[0], ".go:") || strings.Contains(f[0], ".s:"))
}

func (in *instance) createCluster(ctx context.Context) error {
	cfg := &v1alpha4.Cluster{
		Nodes: []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole}},
		Networking: v1alpha4.Networking{
			DisableDefaultCNI: true,
			PodSubnet:         strings.Join(in.clusterCIDRs(), ","),
			ServiceSubnet:     strings.Join(in.serviceCIDRs(), ","),
		},
		KubeadmConfigPatches: kubeadmPatches,
	}
	if in.spec.Profile.CCM.Image != "" {
		// The CCM's pod runs as a ServiceAccount, whose requests the API
		// server audits (cluster/audit) into the cluster's log folder,
		// mounted from this machine into the node.
		policyDir := filepath.Join(in.dir, "audit")
		if err := os.MkdirAll(policyDir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(policyDir, "policy.yaml"), []byte(audit.Policy), 0o644); err != nil {
			return err
		}
		if err := os.MkdirAll(in.logDir(), 0o700); err != nil {
			return err
		}
		cfg.Nodes[0].ExtraMounts = []v1alpha4.Mount{
			{HostPath: policyDir, ContainerPath: nodeAuditPolicyDir, Readonly: true},
			{HostPath: in.logDir(), ContainerPath: nodeAuditLogDir},
		}
		cfg.KubeadmConfigPatches = append(slices.Clone(kubeadmPatches), auditPatch, auditPatchV1beta3)
	}
	if in.spec.DualStack {
		cfg.Networking.IPFamily = v1alpha4.DualStackFamily
	}
	for i := 1; i < in.spec.Nodes; i++ {
		cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole})
	}
	v1alpha4.SetDefaultsCluster(cfg)
	in.created = true
	p := provider(kindcluster.ProviderWithLogger(kindLogger{in.logf}))
	// kind's create takes no context and runs for a minute: Ctrl-C (or
	// the suite's timeout) must not leave the process gone and the node
	// containers behind. So it runs aside, and an interruption deletes
	// what it made so far, waits for it to give up (its next step finds
	// its containers gone), and leaves the rest to teardown's delete.
	created := make(chan error, 1)
	go func() {
		created <- p.Create(in.spec.Name,
			kindcluster.CreateWithV1Alpha4Config(cfg),
			kindcluster.CreateWithNodeImage(in.nodeImage),
			kindcluster.CreateWithKubeconfigPath(in.kubeconfig()),
			kindcluster.CreateWithDisplayUsage(false),
			kindcluster.CreateWithDisplaySalutation(false),
		)
	}()
	deadline := time.NewTimer(createTimeout)
	defer deadline.Stop()
	stop := func(why string) {
		in.logf("kind create cluster %s %s: deleting its nodes", in.spec.Name, why)
		giveUp := time.Now().Add(createGiveUp)
		_ = provider().Delete(in.spec.Name, in.kubeconfig())
		select {
		case <-created:
		case <-time.After(time.Until(giveUp)):
			in.logf("kind create cluster %s still running after %s; deleting again", in.spec.Name, createGiveUp)
		}
		in.deleteLateNodes(p, giveUp)
	}
	select {
	case err := <-created:
		if err != nil {
			return fmt.Errorf("kind create cluster: %w%s%s", err, commandOutput(err), inotifyHint())
		}
	case <-deadline.C:
		stop("not done after " + createTimeout.String())
		return fmt.Errorf("kind create cluster: not done after %s%s", createTimeout, inotifyHint())
	case <-ctx.Done():
		stop(fmt.Sprintf("interrupted (%v)", context.Cause(ctx)))
		return fmt.Errorf("kind create cluster: interrupted: %w", context.Cause(ctx))
	}
	list, err := p.ListNodes(in.spec.Name)
	if err != nil {
		return err
	}
	in.nodes = map[string]nodes.Node{}
	for _, n := range list {
		in.nodes[n.String()] = n
	}
	rc, err := clientcmd.BuildConfigFromFlags("", in.kubeconfig())
	if err != nil {
		return err
	}
	if in.client, err = kubernetes.NewForConfig(rc); err != nil {
		return err
	}
	v, err := in.client.Discovery().ServerVersion()
	if err != nil {
		return err
	}
	in.version = v.GitVersion
	return nil
}

// deleteLateNodes deletes the node containers that appear after an
// interrupted create was deleted: Ctrl-C kills the docker run commands of
// kind's "Preparing nodes" step, not the creations dockerd was asked for,
// which it finishes afterwards. It deletes until no node container of the
// cluster has been seen for three seconds, or giveUp.
func (in *instance) deleteLateNodes(p *kindcluster.Provider, giveUp time.Time) {
	for quiet := 0; quiet < 3 && time.Now().Before(giveUp); {
		time.Sleep(time.Second)
		if list, err := p.ListNodes(in.spec.Name); err == nil && len(list) == 0 {
			quiet++
			continue
		}
		quiet = 0
		_ = provider().Delete(in.spec.Name, in.kubeconfig())
	}
}

// kindLogger shows kind's progress lines (V(0)) and warnings.
type kindLogger struct{ logf func(string, ...any) }

func (l kindLogger) Warn(m string)                        { l.logf("kind: %s", m) }
func (l kindLogger) Warnf(f string, a ...any)             { l.logf("kind: "+f, a...) }
func (l kindLogger) Error(m string)                       { l.logf("kind: %s", m) }
func (l kindLogger) Errorf(f string, a ...any)            { l.logf("kind: "+f, a...) }
func (l kindLogger) V(v kindlog.Level) kindlog.InfoLogger { return kindInfo{l.logf, v == 0} }

type kindInfo struct {
	logf func(string, ...any)
	on   bool
}

func (i kindInfo) Info(m string) {
	if i.on {
		i.logf("kind: %s", m)
	}
}

func (i kindInfo) Infof(f string, a ...any) {
	if i.on {
		i.logf("kind: "+f, a...)
	}
}

func (i kindInfo) Enabled() bool { return i.on }
