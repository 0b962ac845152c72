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

// Command coredns is CoreDNS with the plugins of the Corefile kubeadm
// deploys (cmd/kubeadm/app/phases/addons/dns), and log: the kind node
// image's cluster DNS, built here because no registry is reachable for
// CoreDNS's image. CoreDNS's own main imports every plugin
// (core/plugin/zplugin.go), the clouds' DNS SDKs and a tracer among them;
// this one imports what kubeadm's Corefile names, as a build from a
// plugin.cfg cut to those would. It is built in a module generated for it
// (binaries.CoreDNS), which is why this folder has a go.mod of its own:
// it is not a package of the harness's module.
package main

import (
	"github.com/coredns/coredns/coremain"

	// The plugins kubeadm's Corefile names; dnsserver.Directives orders
	// them.
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func main() { coremain.Run() }
