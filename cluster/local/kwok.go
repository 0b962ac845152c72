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

	"sigs.k8s.io/ccm-harness/cluster/process"
)

// kwokLabel marks the nodes whose kubelet kwok plays. Removing it is how a
// node's kubelet falls silent when its instance powers off. A label, not an
// annotation: kwok selects labels in the API server's watch, which then
// reports a node that loses the label as gone and kwok releases its lease;
// annotations it filters itself and never notices one removed.
const (
	kwokLabel   = "kwok.x-k8s.io/node"
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
	config := filepath.Join(in.dir, "kwok.yaml")
	stages := strings.Join([]string{nodeinit.DefaultNodeInit, nodeheartbeat.DefaultNodeHeartbeatWithLease}, "\n---\n")
	if err := os.WriteFile(config, []byte(stages), 0o600); err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	_, err = in.procs.Start(ctx, process.Spec{
		Name: "kwok",
		Path: in.bins["kwok"],
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
