package machines

import (
	"context"
	"log"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/internal/nodecontainer"
)

// powerFor bounds one container's stop or start.
const powerFor = time.Minute

// Docker is machines that are Docker containers of their instances' names,
// such as a kind cluster's node containers: an instance that stops or is
// terminated stops its container at once, as a machine losing power, and
// one that runs again starts it, so its kubelet goes silent and comes back
// with no one but the cloud told. A terminated machine's container is
// stopped, not removed: it is the cluster's, which its owner deletes. An
// instance with no container of its name is only data.
func Docker(logger *log.Logger) func(name string, state api.InstanceState) {
	return func(name string, state api.InstanceState) {
		ctx, cancel := context.WithTimeout(context.Background(), powerFor)
		defer cancel()
		if !nodecontainer.Exists(ctx, name) {
			return
		}
		power := nodecontainer.Stop
		if state == api.StateRunning {
			power = nodecontainer.Start
		}
		if err := power(ctx, name); err != nil {
			logger.Printf("machine %s: its container did not follow the instance to %s: %v", name, state, err)
		}
	}
}
