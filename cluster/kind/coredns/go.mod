// This folder is built in a module generated for it, which requires CoreDNS
// at the version binaries.CoreDNS pins (internal/binaries/gomod): this
// go.mod only keeps it out of the harness's module, whose go.mod does not
// require CoreDNS.
module sigs.k8s.io/ccm-harness/cluster/kind/coredns

go 1.25.0
