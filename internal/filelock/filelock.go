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

// Package filelock is the one way harness processes take turns at a shared
// cache entry (a build, an unpacked image): an exclusive flock on a file
// beside it, which the kernel frees when its holder dies.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Poll is how often Lock tries a lock another process holds.
const Poll = 250 * time.Millisecond

// TryLock takes the lock on path without waiting: nil, nil if another holds it.
func TryLock(path string) (unlock func(), err error) {
	unlock, err = flock(path, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, nil
	}
	return unlock, err
}

// Lock takes the lock on path, waiting for it until ctx ends (a spec's
// timeout, Ctrl-C), and then says what it waited for ("X, which another
// process is building"): a blocking flock would outlive both.
func Lock(ctx context.Context, path, what string) (unlock func(), err error) {
	tick := time.NewTicker(Poll)
	defer tick.Stop()
	for {
		if unlock, err := TryLock(path); err != nil || unlock != nil {
			return unlock, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("gave up waiting for %s (its lock %s): %w", what, path, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

func flock(path string, how int) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
