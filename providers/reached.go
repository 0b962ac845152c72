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

package providers

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ReachedCloud is a Reached cloud made of how to connect to it: a
// provider's reach config gives Connect, which reads the environment as
// the cloud's own tools do, checks the cloud answers, and returns the
// inspector, where it reached and the secrets it read. The harness makes
// and changes no machine there, and writes no CCM config for it.
type ReachedCloud struct {
	// Name is the provider's, for errors.
	Name string
	// Connect is called by Start and Attach, within ConnectTimeout.
	Connect func(ctx context.Context) (insp Inspector, where string, secrets []string, err error)

	mu      sync.Mutex
	insp    Inspector
	where   string
	secrets []string
}

// What a reached cloud implements, checked at compile time.
var (
	_ Cloud        = (*ReachedCloud)(nil)
	_ Attacher     = (*ReachedCloud)(nil)
	_ Reached      = (*ReachedCloud)(nil)
	_ SecretKeeper = (*ReachedCloud)(nil)
	_ Powerer      = (*ReachedCloud)(nil)
)

// ConnectTimeout bounds a reached cloud's first calls: one that does not
// answer is said at once.
const ConnectTimeout = 30 * time.Second

// Start connects, saying in one line what is wrong.
func (r *ReachedCloud) Start(ctx context.Context, _ CloudEnv) error {
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	insp, where, secrets, err := r.Connect(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.insp, r.where, r.secrets = insp, where, secrets
	return nil
}

// Attach is Start: every process reads the same environment.
func (r *ReachedCloud) Attach(ctx context.Context, env CloudEnv) error { return r.Start(ctx, env) }

// Where the cloud was reached, and as whom.
func (r *ReachedCloud) Where() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.where
}

// CCMConfig: the CCM of a reached cloud is its owner's, configured there.
func (r *ReachedCloud) CCMConfig() ([]byte, error) {
	return nil, fmt.Errorf("%s: the harness writes no cloud config for a cloud it reaches: run the suite with --cluster=existing against the cluster whose CCM uses that cloud, or give the profile file's ccm.cloudConfig", r.Name)
}

// Instances: no machine is made or changed in a cloud the harness does not
// own.
func (r *ReachedCloud) Instances() InstanceControl { return nil }

// Power stops, starts and terminates machines through the cloud's own
// API, where its inspector can (AWS's, OpenStack's): only those of nodes
// the user lent the lifecycle specs are ever asked for. Nil before it
// connected.
func (r *ReachedCloud) Power() MachinePower {
	p, _ := r.Inspector().(MachinePower)
	return p
}

// Inspector asks the reached cloud; nil before it connected.
func (r *ReachedCloud) Inspector() Inspector {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.insp
}

// Secrets are what the inspector logged in with.
func (r *ReachedCloud) Secrets() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.secrets
}
