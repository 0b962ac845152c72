package local

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/cluster/process"
)

// manager is a controller-manager process of a local cluster.
type manager struct {
	spec   cluster.ManagerSpec
	group  *process.Group
	proc   *process.Process
	url    string
	client *http.Client
}

var _ cluster.Manager = (*manager)(nil)

func (m *manager) Name() string { return m.spec.Name }

func (m *manager) Spec() cluster.ManagerSpec { return m.spec }

func (m *manager) Log() string { return m.proc.Spec().LogPath() }

// Restart gives the manager the usual 10 s to exit cleanly, as a kubelet
// would when replacing a static pod.
func (m *manager) Restart(ctx context.Context) error {
	return m.group.Restart(ctx, m.proc, 10*time.Second)
}

// Stop gives the manager the same 10 s, and forgets it: it is no longer
// a member whose death is news.
func (m *manager) Stop(ctx context.Context) error {
	m.group.Stop(m.spec.Name, 10*time.Second)
	return nil
}

// notControllers are /healthz checks every manager has, whatever it runs.
var notControllers = map[string]bool{"ping": true, "log": true, "leaderElection": true}

// Controllers reads the manager's /healthz?verbose: a controller manager
// adds a check per controller once it starts it, under whichever lease.
func (m *manager) Controllers(ctx context.Context) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.url+"/healthz?verbose", nil)
	if err != nil {
		return nil, err
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	// A failing check answers 500 with the same list.
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusInternalServerError {
		return nil, fmt.Errorf("GET %s/healthz?verbose: %s", m.url, resp.Status)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "[+]") && !strings.HasPrefix(line, "[-]") {
			continue
		}
		name, _, _ := strings.Cut(line[3:], " ")
		if notControllers[name] || strings.HasPrefix(name, "poststarthook/") || strings.HasPrefix(name, "leaderElection") {
			continue
		}
		out = append(out, name)
	}
	return out, sc.Err()
}

// controlPlane starts managers beside a running cluster's.
type controlPlane struct{ in *instance }

func (c controlPlane) Start(ctx context.Context, spec cluster.ManagerSpec) (cluster.Manager, error) {
	for _, r := range c.in.procs.Records() {
		if r.Name == spec.Name {
			return nil, fmt.Errorf("manager %s: a process of that name runs already", spec.Name)
		}
	}
	m, err := c.in.startManager(ctx, spec)
	if err != nil {
		return nil, err
	}
	return m, nil
}
