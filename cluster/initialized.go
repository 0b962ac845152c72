package cluster

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/ccm-harness/cluster/nodewait"
	"sigs.k8s.io/ccm-harness/cluster/process"
	"sigs.k8s.io/ccm-harness/providers"
)

// diagnoseEvery is how often a stalled initialization asks the cloud why.
// A healthy CCM initializes a few nodes well inside it.
const diagnoseEvery = 5 * time.Second

// WaitInitialized waits until the CCM has initialized every node. While it
// waits, a cloud that can diagnose is asked every few seconds why the CCM
// might be stuck, and its answer ends the wait at once: a CCM locked out of
// its cloud is no reason to sit out the timeout. A timeout quotes the CCM's
// last log lines.
func (c *Cluster) WaitInitialized(ctx context.Context, timeout time.Duration) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- nodewait.For(ctx, cs, timeout, "the CCM to initialize every node", nil, nodewait.Initialized)
	}()
	diag, _ := c.Cloud.(providers.Diagnoser)
	tick := time.NewTicker(diagnoseEvery)
	defer tick.Stop()
	start := time.Now()
	for {
		select {
		case err := <-done:
			if err != nil && ctx.Err() == nil {
				if m := c.Manager(CloudControllerManager); m != nil {
					err = fmt.Errorf("%w%s", err, process.LogTail(m.Log(), 10))
				}
			}
			return err
		case <-tick.C:
			if diag == nil {
				continue
			}
			if err := diag.Diagnose(ctx); err != nil {
				return fmt.Errorf("the CCM has not initialized every node after %s: %w", time.Since(start).Round(time.Second), err)
			}
		}
	}
}
