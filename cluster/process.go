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

package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/ccm-harness/cluster/audit"
	"sigs.k8s.io/ccm-harness/internal/process"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/reports"
)

// ProcessManager is a controller manager the harness runs as a process
// of a cluster's process group, serving /healthz at URL.
type ProcessManager struct {
	ManagerSpec ManagerSpec
	Group       *process.Group
	Proc        *process.Process
	Endpoint
}

// Endpoint is where a manager serves /healthz.
type Endpoint struct {
	URL string
	// Client reaches URL with whatever identity its authorization wants.
	Client *http.Client
}

var _ Manager = (*ProcessManager)(nil)

func (m *ProcessManager) Name() string { return m.ManagerSpec.Name }

func (m *ProcessManager) Spec() ManagerSpec { return m.ManagerSpec }

func (m *ProcessManager) Log() string { return m.Proc.Spec().LogPath() }

// Restart gives the manager the usual 10 s to exit cleanly, as a kubelet
// would when replacing a static pod.
func (m *ProcessManager) Restart(ctx context.Context) error {
	return m.Group.Restart(ctx, m.Proc, 10*time.Second)
}

// Stop kills the manager at once, and forgets it: it is no longer a
// member whose death is news. The managers release nothing on SIGTERM
// (kube-controller-manager's ControllerManagerReleaseLeaderElectionLockOnExit
// is alpha and off), so SIGTERM ends them as SIGKILL does, but a process
// stalled in the kernel under a loaded machine's writeback handles it only
// once it runs again: in make test's CI a leading kube-controller-manager
// took 6.5 s to die, silent and no longer renewing its lease, and its runs,
// which end at its exit, overlapped its successor's by 0.4 s. SIGKILL also
// ends a process in the kernel's killable waits (writeback throttling among
// them), where a SIGTERM the Go runtime catches waits for it to run.
func (m *ProcessManager) Stop(ctx context.Context) error {
	m.Group.Stop(m.ManagerSpec.Name, 0)
	return nil
}

// Healthz is nil once the manager answers /healthz with 200.
func (m Endpoint) Healthz(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.URL+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := m.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s/healthz: %s: %s", m.URL, resp.Status, body)
	}
	return nil
}

// Controllers reads the manager's /healthz?verbose (HealthzControllers).
func (m Endpoint) Controllers(ctx context.Context) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.URL+"/healthz?verbose", nil)
	if err != nil {
		return nil, err
	}
	resp, err := m.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	// A failing check answers 500 with the same list.
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusInternalServerError {
		return nil, fmt.Errorf("GET %s/healthz?verbose: %s", m.URL, resp.Status)
	}
	return HealthzControllers(resp.Body)
}

// State is what `down` in another harness process needs of a cluster whose
// components are host processes.
type State struct {
	Name       string           `json:"name"`
	Kubeconfig string           `json:"kubeconfig"`
	Processes  []process.Record `json:"processes"`
	// LogDir is where the components log, and Secrets are the credentials
	// made for the cluster or given to it: down in another process (the
	// CLI's, the kubetest2 deployer's) redacts the logs with them. The
	// state folder is its owner's only.
	LogDir  string   `json:"logDir,omitempty"`
	Secrets []string `json:"secrets,omitempty"`
	// KubernetesVersion is the control plane's, and Audit the API
	// server's audit log as the cluster's Refusals and APIUses read it:
	// for the processes that attach to the cluster (cluster.Attacher).
	KubernetesVersion string       `json:"kubernetesVersion,omitempty"`
	Audit             audit.Source `json:"audit,omitzero"`
}

// Dead reports the processes of the state in dir that are gone: the
// health of a cluster another process runs, read afresh each time, as
// Cluster.Health is.
func Dead(dir string) error {
	st, err := ReadState(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range st.Processes {
		if !p.Alive() {
			errs = append(errs, fmt.Errorf("%s (pid %d) is gone%s", p.Name, p.PID, process.LogTail(p.Log, 15)))
		}
	}
	return errors.Join(errs...)
}

// SecretsOf are the credentials cloud knows it made or was given.
func SecretsOf(cloud providers.Cloud) []string {
	if sk, ok := cloud.(providers.SecretKeeper); ok {
		return sk.Secrets()
	}
	return nil
}

// RedactLogs removes the cluster's secrets from its logs, once its
// processes have stopped and the logs are final.
func (st State) RedactLogs() error {
	if st.LogDir == "" {
		return nil
	}
	if _, err := os.Stat(st.LogDir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := reports.Redact(st.LogDir, st.Secrets); err != nil {
		return fmt.Errorf("cluster %s: redact the logs in %s: %w", st.Name, st.LogDir, err)
	}
	return nil
}

// StateFile is the state's file in a cluster's state folder.
const StateFile = "state.json"

// ReadState reads the state in dir; a missing file is os.ErrNotExist.
func ReadState(dir string) (*State, error) {
	data, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("state file %s is unreadable: %w", filepath.Join(dir, StateFile), err)
	}
	return &st, nil
}

// Write replaces the state in dir at once, so a reader never sees half.
func (st State) Write(dir string) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, StateFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, StateFile))
}

// StopRecorded stops the processes of a state, last started first.
func (st State) StopRecorded() {
	for i := len(st.Processes) - 1; i >= 0; i-- {
		st.Processes[i].Stop(10 * time.Second)
	}
}
