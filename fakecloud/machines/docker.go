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

package machines

import (
	"context"
	"log"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/internal/nodecontainer"
)

// powerFor bounds one container's stop or start, tries included (Docker
// on a busy machine has taken tens of seconds to stop a kind node), and
// retryAfter is the pause between tries. Variables for the tests.
var powerFor, retryAfter = 3 * time.Minute, 2 * time.Second

// Docker is machines that are Docker containers of their instances' names,
// such as a kind cluster's node containers: an instance that stops or is
// terminated stops its container at once, as a machine losing power, and
// one that runs again starts it, so its kubelet goes silent and comes back
// with no one but the cloud told. A terminated machine's container is
// stopped, not removed: it is the cluster's, which its owner deletes. An
// instance with no container of its name is only data.
//
// A machine must follow its instance: a container left running after its
// instance was terminated keeps its Node Ready, and the spec that waits
// for its deletion fails with nothing to say why. So a Docker that fails
// or does not answer is asked again until powerFor, and each change, done
// or not, is one line of the log.
func Docker(logger *log.Logger) func(name string, state api.InstanceState) {
	return func(name string, state api.InstanceState) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), powerFor)
		defer cancel()
		power, did := nodecontainer.Stop, "stopped"
		if state == api.StateRunning {
			power, did = nodecontainer.Start, "started"
		}
		for try := 1; ; try++ {
			exists, err := nodecontainer.Exists(ctx, name)
			if err == nil && !exists {
				return
			}
			if err == nil {
				if err = power(ctx, name); err == nil {
					logger.Printf("machine %s: %s its container, as its instance is %s (%s)", name, did, state, time.Since(start).Round(time.Millisecond))
					return
				}
			}
			logger.Printf("machine %s: its container did not follow the instance to %s (try %d): %v", name, state, try, err)
			select {
			case <-ctx.Done():
				logger.Printf("machine %s: gave up after %s: its container is not %s though its instance is %s", name, powerFor, did, state)
				return
			case <-time.After(retryAfter):
			}
		}
	}
}
