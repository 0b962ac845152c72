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

import "context"

// NameResolver is a cloud whose load balancers' DNS names resolve through
// a DNS of the cloud's own (a reached AWS's reach.nameserver) rather than
// the system's: where a cloud plugin gives a load balancer a name and no
// address, the name is resolved through it. net.Resolver is one.
type NameResolver interface {
	LookupHost(ctx context.Context, name string) ([]string, error)
}

// NameServer is a cloud whose load balancers' DNS names only a DNS server
// of the cloud's own answers (fakecloud's AWS), where clients that resolve
// with the system's resolver must be pointed: the kind runtime has the
// cluster's DNS forward the zone to it, so that a pod resolves a Service's
// ingress hostname as in the cloud, and `ccm-harness upstream` runs
// Kubernetes' own e2e.test with it as its nameserver.
type NameServer interface {
	// NameServer is the server's address (host:port) and the zone of the
	// names it answers ("amazonaws.com").
	NameServer() (addr, zone string)
}
