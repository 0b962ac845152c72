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

package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

const stateVersion = 1

// State is everything that must survive a restart. It is guarded by
// Cloud.mu and written whole to the state file after every change.
type State struct {
	Version int `json:"version"`
	// Instances are in creation order, which is what "newest" means.
	Instances []*api.Instance `json:"instances"`
	Faults    []api.Fault     `json:"faults"`
	// LoadBalancers and Routes are in creation order. Files written before
	// they existed lack them, which reads as none.
	LoadBalancers []*LBRecord    `json:"loadBalancers"`
	Routes        []*RouteRecord `json:"routes"`
	// AddressPairs are the allowed address pairs of each instance's port
	// in the OpenStack dialect, by instance ID.
	AddressPairs map[string][]string `json:"addressPairs,omitempty"`
	// NoSourceDestCheck are the instances whose source/destination check
	// is off in the AWS dialect, by instance ID.
	NoSourceDestCheck []string `json:"noSourceDestCheck,omitempty"`
	// SecurityGroups are the AWS dialect's security groups.
	SecurityGroups []*SecurityGroup `json:"securityGroups,omitempty"`
	// TargetGroups are the AWS dialect's ELBv2 target groups.
	TargetGroups []*TargetGroup `json:"targetGroups,omitempty"`
	// The allocators' positions: reusing an address or a fault ID after a
	// restart would make old audit entries and test expectations ambiguous.
	NextFaultID    int64  `json:"nextFaultID"`
	NextZone       int    `json:"nextZone"`
	LastInternalIP string `json:"lastInternalIP,omitempty"`
	LastExternalIP string `json:"lastExternalIP,omitempty"`
	// LastInternalIPv6 is the IPv6 InternalIP handed out last.
	LastInternalIPv6 string `json:"lastInternalIPv6,omitempty"`
	LastLBIP         string `json:"lastLBIP,omitempty"`
	// LastLBIPv6 is the IPv6 load balancer address handed out last.
	LastLBIPv6 string `json:"lastLBIPv6,omitempty"`
	// AuditSeqFloor is above every audit sequence number handed out so far.
	AuditSeqFloor int64 `json:"auditSeqFloor"`
}

func newState() State {
	return State{Version: stateVersion, Instances: []*api.Instance{}, Faults: []api.Fault{},
		LoadBalancers: []*LBRecord{}, Routes: []*RouteRecord{}, NextFaultID: 1}
}

// loadState returns nil, nil when the file does not exist yet.
func loadState(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read state file %s: %w", path, err)
	}
	corrupt := func(why string) error {
		return fmt.Errorf("state file %s is corrupt: %s (repair it, or delete it to start with an empty cloud)", path, why)
	}
	st := newState()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, corrupt(err.Error())
	}
	if dec.More() {
		return nil, corrupt("trailing data after the JSON object")
	}
	if st.Version != stateVersion {
		return nil, corrupt(fmt.Sprintf("version %d, this fakecloud reads version %d", st.Version, stateVersion))
	}
	for i, inst := range st.Instances {
		if inst == nil || inst.ID == "" || inst.Name == "" {
			return nil, corrupt(fmt.Sprintf("instance %d has no id or name", i+1))
		}
	}
	for i, f := range st.Faults {
		if err := f.Validate(); err != nil {
			return nil, corrupt(fmt.Sprintf("fault %d: %v", i+1, err))
		}
	}
	if err := checkLoadBalancers(st.LoadBalancers); err != nil {
		return nil, corrupt(err.Error())
	}
	if err := checkRoutes(st.Routes); err != nil {
		return nil, corrupt(err.Error())
	}
	if st.Instances == nil {
		st.Instances = []*api.Instance{}
	}
	if st.LoadBalancers == nil {
		st.LoadBalancers = []*LBRecord{}
	}
	if st.Routes == nil {
		st.Routes = []*RouteRecord{}
	}
	if st.Faults == nil {
		st.Faults = []api.Fault{}
	}
	return &st, nil
}

// saveLocked writes the state file atomically: a crash leaves either the old
// file or the new one, never half of one. With NoSync the write is put off
// by up to SaveDelay and shared by every change meanwhile: a cloud that
// takes 1,000 instances at once would otherwise re-encode its whole state
// 1,000 times. Close writes what is still pending.
func (s *Cloud) saveLocked() error {
	if s.stateFile == "" {
		return nil
	}
	if !s.noSync {
		return s.writeStateLocked()
	}
	if err := s.saveErr; err != nil {
		s.saveErr = nil
		return err
	}
	if !s.savePending {
		s.savePending = true
		s.saveTimer = time.AfterFunc(SaveDelay, s.flushState)
	}
	return nil
}

// SaveDelay bounds how stale the state file of a NoSync cloud may be.
const SaveDelay = 100 * time.Millisecond

// flushState writes a pending save; a failure is reported by the next
// change.
func (s *Cloud) flushState() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.savePending {
		return
	}
	s.savePending = false
	s.saveErr = s.writeStateLocked()
}

func (s *Cloud) writeStateLocked() error {
	if s.stateFile == "" {
		return nil
	}
	b, err := json.Marshal(s.st)
	if err != nil {
		return fmt.Errorf("encoding state: %w", err)
	}
	if err := writeFileAtomic(s.stateFile, append(b, '\n'), !s.noSync); err != nil {
		return fmt.Errorf("saving state file %s: %w", s.stateFile, err)
	}
	return nil
}

func writeFileAtomic(path string, data []byte, sync bool) (err error) {
	dir := filepath.Dir(path)
	// The temporary file lives next to the target because rename is only
	// atomic within one file system.
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if sync {
		if err = tmp.Sync(); err != nil {
			return err
		}
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// Sync the directory so the rename itself survives a crash.
	if sync {
		if d, derr := os.Open(dir); derr == nil {
			d.Sync()
			d.Close()
		}
	}
	return nil
}
