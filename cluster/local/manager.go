package local

import (
	"context"
	"time"

	"sigs.k8s.io/ccm-harness/cluster/process"
)

// manager is a controller-manager process of a local cluster.
type manager struct {
	name  string
	group *process.Group
	proc  *process.Process
}

func (m manager) Name() string { return m.name }

func (m manager) Log() string { return m.proc.Spec().LogPath() }

// Restart gives the manager the usual 10 s to exit cleanly, as a kubelet
// would when replacing a static pod.
func (m manager) Restart(ctx context.Context) error {
	return m.group.Restart(ctx, m.proc, 10*time.Second)
}
