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
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// The tests of the fronts drive a cloud through HTTP from their own
// packages, where its unexported bounds cannot be reached; these are the
// few they shorten or look into, so that such tests run in seconds.

// SetAuditKeep bounds the audit entries kept in memory (10,000 unless
// set), as a test of the bound would otherwise make that many calls.
func (s *Cloud) SetAuditKeep(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.audit.max = n
}

// SetUDPIdle sets how long a UDP session nobody sends on lasts (30 s
// unless set), for load balancers opened after it.
func (s *Cloud) SetUDPIdle(d time.Duration) { s.dp.udpIdle = d }

// UDPSessions counts the client sessions of a load balancer's UDP
// listener on port.
func (s *Cloud) UDPSessions(lbID string, port int32) int {
	s.dp.mu.Lock()
	defer s.dp.mu.Unlock()
	rt := s.dp.lbs[lbID]
	var fe *udpFrontend
	for k, f := range rt.listeners {
		if k.listenerKey == (listenerKey{port: port, protocol: api.ProtocolUDP}) {
			fe = f.(*udpFrontend)
		}
	}
	fe.mu.Lock()
	defer fe.mu.Unlock()
	return len(fe.sessions)
}
