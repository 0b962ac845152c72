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

package local

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	nodeinit "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/internal/process"
)

// kwokLabel marks the nodes whose kubelet kwok plays. Removing it is how a
// node's kubelet falls silent when its instance powers off. A label, not an
// annotation: kwok selects labels in the API server's watch, which then
// reports a node that loses the label as gone and kwok releases its lease;
// annotations it filters itself and never notices one removed.
const (
	kwokLabel   = cluster.KwokNodeLabel
	kwokManaged = "fake"
)

// startKwok runs kwok with its own stages at the pinned version: node
// initialization (conditions Ready) and heartbeats through node leases.
func (in *instance) startKwok(ctx context.Context) error {
	port, err := process.FreePort()
	if err != nil {
		return err
	}
	kubeconfig, err := in.writeKubeconfig("kwok", in.pki.kwok)
	if err != nil {
		return err
	}
	const config = "kwok.yaml"
	stages, err := kubeletStages()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(in.dir, config), []byte(stages), 0o600); err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	_, err = in.procs.Start(ctx, process.Spec{
		Name: "kwok",
		Path: in.bins["kwok"],
		// kwok splits --config at commas; a relative path keeps a comma in
		// the state folder's path out of it.
		Dir: in.dir,
		Args: []string{
			"--config=" + config,
			"--kubeconfig=" + kubeconfig,
			"--manage-nodes-with-label-selector=" + kwokLabel + "=" + kwokManaged,
			"--node-lease-duration-seconds=" + strconv.Itoa(int(in.timing.NodeLease.Seconds())),
			"--server-address=" + addr,
		},
		LogDir: in.logDir(),
		Ready: func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/healthz", nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("kwok healthz: %s", resp.Status)
			}
			return nil
		},
	})
	return err
}

// kubeletStages are kwok's node stages at the pinned version, less the
// NetworkUnavailable condition kwok reports as "RouteCreated" on its own. A
// kubelet never sets that condition; the route controller does, and the
// [route] specs must see the controller's word, not kwok's.
func kubeletStages() (string, error) {
	var out []string
	for _, stage := range []string{nodeinit.DefaultNodeInit, nodeheartbeat.DefaultNodeHeartbeatWithLease} {
		s, err := withoutCondition(stage, "NetworkUnavailable")
		if err != nil {
			return "", err
		}
		out = append(out, s)
	}
	return strings.Join(out, "\n---\n"), nil
}

// withoutCondition wraps the body of the stage's one loop over
// NodeConditions in a filter. The loop's body holds no other template
// action, so the first {{ end }} after it closes the loop.
func withoutCondition(stage, condition string) (string, error) {
	const loop, end = "{{ range NodeConditions }}", "{{ end }}"
	i := strings.Index(stage, loop)
	if i < 0 || strings.Count(stage, loop) != 1 {
		return "", fmt.Errorf("kwok stage template changed: want exactly one %q (update withoutCondition for this kwok version)", loop)
	}
	j := strings.Index(stage[i:], end)
	if j < 0 {
		return "", fmt.Errorf("kwok stage template changed: no %q after %q", end, loop)
	}
	j += i
	if strings.Contains(stage[i+len(loop):j], "{{ if") || strings.Contains(stage[i+len(loop):j], "{{ with") {
		return "", fmt.Errorf("kwok stage template changed: the NodeConditions loop holds a block")
	}
	filter := fmt.Sprintf("{{ if ne .type %q }}", condition)
	return stage[:i+len(loop)] + filter + stage[i+len(loop):j] + end + stage[j:], nil
}
