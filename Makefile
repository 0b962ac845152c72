# Copyright 2026 The Kubernetes Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# ccm-harness: conformance and migration tests for cloud-controller-managers.
#
#   make e2e                     the main job: fake provider, local cluster
#   make e2e PROVIDER=vsphere    the real vSphere CCM against vcsim
#   make e2e PROVIDER=openstack  the real OpenStack CCM against fakecloud's OpenStack API
#   make e2e PROVIDER=aws        the real AWS CCM against fakecloud's EC2
#   make e2e CLUSTER=kind        real nodes in Docker: the [datapath] specs run
#   make e2e LABEL_FILTER=zone   a Ginkgo label filter
#   make e2e PROCS=1             the specs in one process (default: six, on a local cluster)
#   make e2e K8S_VERSION=v1.34   a cluster of another Kubernetes release
#   make matrix PROVIDER=aws     every Kubernetes release against every CCM version the skew policy allows
#   make test                    unit tests, every provider's suite and the negative controls
#   make up / make down          a cluster left running for kubectl

PROVIDER     ?= fake
# CCM_VERSION picks another pinned version of the provider's CCM
# (in the provider's folder, providers/<name>/), e.g. PROVIDER=vsphere CCM_VERSION=v1.30.1.
CCM_VERSION  ?=
# CCM_IMAGE runs the provider's CCM from a container image instead:
# docker-archive:PATH, oci:DIR or a registry reference (see internal/oci).
CCM_IMAGE    ?=
CLUSTER      ?= local
# K8S_VERSION is the cluster's Kubernetes release, or its minor (v1.34,
# v1.35, v1.36, v1.37; default v1.37.2); without CCM_VERSION the provider's
# CCM of that minor runs, else one minor older (the version skew policy).
K8S_VERSION  ?=
LABEL_FILTER ?=
# PROVIDER_CONFIG is the provider's config file (see the provider's Config);
# with PROVIDER=external, the profile file (providers.File).
PROVIDER_CONFIG ?=
# NODES are the nodes registered at start.
NODES        ?= 3
ARTIFACTS    ?= $(CURDIR)/_artifacts
NAME         ?= ccm-harness
GO           ?= go

BIN          := $(CURDIR)/_output/bin
GO_SOURCES   := $(shell find . -name '*.go' -not -path './_*') conformance/schema.json go.mod go.sum
# The harness's version, for the conformance report (the commit the suite
# was built from; -dirty with changes not committed).
HARNESS_VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
UNIT_PKGS     = $(shell $(GO) list ./... | grep -v -e '/e2e$$' -e '/e2e/controls$$')

export ARTIFACTS
# One build configuration for every go command here (builds, vet, tests),
# the -trimpath the harness's builds of Kubernetes' binaries use: a package
# the suite and kube-apiserver share is compiled once, not once each way.
export GOFLAGS += -trimpath

.PHONY: cli controls-oldest e2e-upstream e2e-routes-watch e2e-coordinated jobs-matrix docs verify bench all build binaries matrix e2e-oldest prebuild e2e e2e-vsphere e2e-openstack e2e-aws e2e-aws-lb e2e-older-ccms e2e-vsphere-older e2e-openstack-older e2e-aws-older e2e-vsphere-upgrade e2e-openstack-upgrade e2e-openstack-kind e2e-aws-kind e2e-kind e2e-kind-datapath e2e-image e2e-plugin e2e-reached e2e-reached-openstack e2e-reached-vsphere e2e-reached-control e2e-foreign e2e-incluster e2e-existing e2e-dry-run e2e-serial test unit vet controls controls-all compare images jobs up down clean clean-cache kubetest2

all: build

# quiet-go runs a go command with Go's "go: downloading" lines (about 80 on
# a first run) folded into a count every 25 modules; the rest of its output
# as it is, and its exit status.
quiet-go = { $(1) 2>&1; echo $$? > $@.status.$$$$; } | awk '/^go: downloading/ { if (++n % 25 == 0) { print "  go: downloaded " n " modules so far"; fflush() } next } { print; fflush() } END { if (n) print "  go: downloaded " n " modules" }'; \
	exit $$(cat $@.status.$$$$; rm -f $@.status.$$$$)

# -s -w: no symbol table or DWARF, which halves the link (e2e.test: 12 s
# instead of 27 s, at every change of the suite); stack traces keep their
# function names and lines.
$(BIN)/ccm-harness: $(GO_SOURCES)
	@mkdir -p $(BIN); echo "$(GO) build -ldflags='-s -w' -o $@ ./cmd/ccm-harness"; $(call quiet-go,$(GO) build -ldflags='-s -w' -o $@ ./cmd/ccm-harness)

# The ginkgo CLI runs the suite's processes in parallel; the harness's
# go.mod pins ginkgo, so the CLI matches the suite's library.
$(BIN)/ginkgo: go.mod go.sum
	@mkdir -p $(BIN); $(GO) build -ldflags='-s -w' -o $@ github.com/onsi/ginkgo/v2/ginkgo

E2E_LDFLAGS := -s -w -X sigs.k8s.io/ccm-harness/conformance.HarnessVersion=$(HARNESS_VERSION)
$(BIN)/e2e.test: $(GO_SOURCES)
	@mkdir -p $(BIN); echo "$(GO) test -c -ldflags='$(E2E_LDFLAGS)' -o $@ ./e2e"; $(call quiet-go,$(GO) test -c -ldflags='$(E2E_LDFLAGS)' -o $@ ./e2e)

# Upstream components go to the cache (built once per version), the
# harness's own binaries to _output/bin: what a cluster of PROVIDER runs,
# and release N's managers only if LABEL_FILTER selects a leader-migration
# spec.
BINARIES_FLAGS = --provider=$(PROVIDER) --ccm-version='$(CCM_VERSION)' --ccm-image='$(CCM_IMAGE)' --provider-config='$(PROVIDER_CONFIG)' \
	--cluster=$(CLUSTER) --kubernetes-version='$(K8S_VERSION)'
binaries: $(BIN)/ccm-harness
	$(BIN)/ccm-harness binaries $(BINARIES_FLAGS) --label-filter='$(LABEL_FILTER)' 

build: binaries $(BIN)/e2e.test $(BIN)/ginkgo

# The CLI alone: make test builds it first, so that prebuild can start.
cli: $(BIN)/ccm-harness

# Quiet unless V=1: the bring-up, a line per spec as it ends, failures with
# their log excerpts, the summary; the full verbose output goes to
# $(ARTIFACTS)/e2e.log.
QUIET = $(if $(V),,--quiet)

# PROCS are the suite's parallel processes (ginkgo -p): the first brings
# the cluster up, the others attach to it, and specs marked [Serial] run
# last in the first. A local cluster is shared so; the others run in one.
# Six: the three leader-migration specs start first, each on an HA
# control plane of its own, and three processes take the rest; the run
# lasts about as long as its longest spec, mostly waits (make bench
# compares it with PROCS=1).
PROCS ?= $(if $(filter local,$(CLUSTER)),6,1)
# WAIT_SCALE multiplies every spec's timeout: a negative control, which
# must fail, need not wait the whole of them. LIFECYCLE_NODES, with
# CLUSTER=existing, lends the node-lifecycle specs nodes whose machines
# they may stop, start and terminate through the cloud's API; JOIN_HOOK
# is the command that makes the specs' new nodes there (`hook NODE`).
# COORDINATED_LEADER_ELECTION=true runs a local cluster's API server with
# coordinated leader election (KEP-4355) and its kube-controller-managers
# as candidates. DUAL_STACK=true makes a kind cluster of both families.
# LEADER_MIGRATION_CONFIG, CCM_LEADER_MIGRATION_CONFIG,
# ROLLBACK_LEADER_MIGRATION_CONFIG and LEADER_MIGRATION_DEFAULT (any
# value) are the suite's leader-migration flags of those names; E2E_FLAGS
# passes any other suite flag (e2e.test --help), --dry-run among them.
SUITE_FLAGS = --provider=$(PROVIDER) --ccm-version='$(CCM_VERSION)' --cluster=$(CLUSTER) --artifacts=$(ARTIFACTS) \
	--provider-config='$(PROVIDER_CONFIG)' --ccm-image='$(CCM_IMAGE)' --nodes=$(NODES) --kubernetes-version='$(K8S_VERSION)' \
	$(if $(WAIT_SCALE),--wait-scale=$(WAIT_SCALE)) $(if $(LIFECYCLE_NODES),--lifecycle-nodes=$(LIFECYCLE_NODES)) \
	$(if $(JOIN_HOOK),--join-hook='$(JOIN_HOOK)') \
	$(if $(COORDINATED_LEADER_ELECTION),--coordinated-leader-election=$(COORDINATED_LEADER_ELECTION)) \
	$(if $(DUAL_STACK),--dual-stack=$(DUAL_STACK)) \
	$(if $(LEADER_MIGRATION_CONFIG),--leader-migration-config='$(LEADER_MIGRATION_CONFIG)') \
	$(if $(CCM_LEADER_MIGRATION_CONFIG),--ccm-leader-migration-config='$(CCM_LEADER_MIGRATION_CONFIG)') \
	$(if $(ROLLBACK_LEADER_MIGRATION_CONFIG),--rollback-leader-migration-config='$(ROLLBACK_LEADER_MIGRATION_CONFIG)') \
	$(if $(LEADER_MIGRATION_DEFAULT),--leader-migration-default) $(E2E_FLAGS)
# In one process the suite sends its own verbose output to e2e.log; in
# several, the ginkgo CLI gathers it, and is sent there, while each
# process writes its short lines, and the first the summary, to the
# terminal, as fd 3 (with V=1 too: the CLI would keep the summary).
ifeq ($(PROCS),1)
RUN_SUITE = $(BIN)/e2e.test -ginkgo.v -ginkgo.no-color $(QUIET) -ginkgo.label-filter='$(LABEL_FILTER)' -ginkgo.timeout=1h $(SUITE_FLAGS)
else
RUN_SUITE = $(if $(V),,: > $(ARTIFACTS)/e2e.log;) $(BIN)/ginkgo --procs=$(PROCS) --randomize-all -v --no-color --label-filter='$(LABEL_FILTER)' --timeout=1h \
	$(BIN)/e2e.test -- --workdir=$(CURDIR) $(SUITE_FLAGS) $(QUIET) --console=/dev/fd/3 3>&1 $(if $(V),,>>$(ARTIFACTS)/e2e.log 2>&1)
endif

# The cluster's components are built first; the leader-migration specs'
# managers (release N's, the older CCM: minutes on a cold cache, their
# module downloads included) are built niced in the background from the
# start, beside the cluster's components, while e2e.test compiles and the
# other specs run, and a migration spec that starts first waits on its
# build's lock, saying so. Its log: $(ARTIFACTS)/build-migration.log.
e2e: $(BIN)/ccm-harness
	@mkdir -p $(ARTIFACTS); log=$(ARTIFACTS)/build-migration.log; \
	nice -n 19 $(BIN)/ccm-harness binaries $(BINARIES_FLAGS) --label-filter='$(LABEL_FILTER)' --leader-migration-only >$$log 2>&1 & bg=$$!; \
	$(BIN)/ccm-harness binaries $(BINARIES_FLAGS) --label-filter='!leader-migration' >/dev/null && \
	$(MAKE) --no-print-directory -s $(BIN)/e2e.test $(if $(filter 1,$(PROCS)),,$(BIN)/ginkgo) && \
	cd $(CURDIR) && $(RUN_SUITE); \
	status=$$?; kill $$bg 2>/dev/null; wait $$bg 2>/dev/null; exit $$status

# The version matrix of PROVIDER: a run of the suite for each Kubernetes
# release (MATRIX_CLUSTERS, default all) with each pinned CCM version
# (MATRIX_CCMS, default all) of the same minor or one older; with
# MATRIX_OUTSIDE=true also the CCM one minor newer, marked outside the skew
# policy. Each cell is a run folder under $(ARTIFACTS)/matrix; it ends with
# the builds' times, a line per cell, the specs that pass in one cell and
# fail in another (findings.txt) and grid.html. Builds every release it
# runs (minutes each, once). The periodics ci-ccm-harness-matrix-* run it.
MATRIX_CLUSTERS ?=
MATRIX_CCMS     ?=
MATRIX_OUTSIDE  ?=
matrix: build
	cd $(CURDIR) && $(BIN)/ccm-harness matrix --suite=$(BIN)/e2e.test --provider=$(PROVIDER) --provider-config='$(PROVIDER_CONFIG)' \
		--ccm-image='$(CCM_IMAGE)' --ccm-version='$(CCM_VERSION)' \
		--cluster=$(CLUSTER) --nodes=$(NODES) --label-filter='$(LABEL_FILTER)' --artifacts=$(ARTIFACTS)/matrix \
		--kubernetes-versions='$(MATRIX_CLUSTERS)' --ccm-versions='$(MATRIX_CCMS)' $(if $(filter true,$(MATRIX_OUTSIDE)),--outside-policy)

# One cell of the matrix: the oldest supported release, v1.34, with the
# fakecloud CCM built on it (its control plane and CCM built in modules
# generated for that release), through the matrix's own door. The
# leader-migration specs are left out: their managers are release N's
# (v1.30.14) whatever the cluster's release, and make e2e runs them. Not in
# make test, whose representative run of the matrix is the default
# release's: on empty caches its release's control plane is a second
# Kubernetes to compile (about 20 of the 100 minutes of make test's run at
# 4e53cc5, past the 75 of CI's budget). The presubmit
# pull-ccm-harness-e2e-oldest runs it when the builds, the local runtime,
# the fake provider or the specs change, and the periodics
# ci-ccm-harness-matrix-fake (every cell) and
# ci-ccm-harness-matrix-fake-k8s-1-34-ccm-1-34 (this one) daily.
e2e-oldest: build
	$(MAKE) matrix PROVIDER=fake PROVIDER_CONFIG= MATRIX_CLUSTERS=v1.34 MATRIX_CCMS= LABEL_FILTER='!leader-migration' ARTIFACTS=$(ARTIFACTS)/oldest

# The vSphere suite in make test, its artifacts beside the default run's:
# the newest pinned CCM as configured by default, then the same packed
# into an image (ccm-harness pack) and run in runc as its ServiceAccount,
# under cloud-provider-vsphere's own RBAC (providers/vsphere/manifests).
# Its leader-migration spec (the CCM upgrade from v1.30.1) is
# e2e-vsphere-upgrade's, the older CCM's own run e2e-vsphere-older's.
VSPHERE_IMAGE = $(IMAGE_DIR)/vsphere-ccm.tar
e2e-vsphere: build
	$(MAKE) e2e PROVIDER=vsphere CCM_VERSION= PROVIDER_CONFIG= LABEL_FILTER='!leader-migration' ARTIFACTS=$(ARTIFACTS)/vsphere
	mkdir -p $(IMAGE_DIR) && ccm=$$($(BIN)/ccm-harness binaries --provider=vsphere --ccm-version= --label-filter='!leader-migration' | awk '$$1 == "vsphere-cloud-controller-manager" {print $$2}') && \
		$(BIN)/ccm-harness pack $$ccm --tag ccm-harness.local/vsphere-ccm:dev --out $(VSPHERE_IMAGE)
	$(MAKE) e2e PROVIDER=vsphere CCM_VERSION= PROVIDER_CONFIG= CCM_IMAGE=docker-archive:$(VSPHERE_IMAGE) \
		ARTIFACTS=$(ARTIFACTS)/vsphere-image

# The OpenStack suite in make test, its artifacts beside the default run's:
# the newest pinned CCM logging in to fakecloud's Keystone with a password.
# Its leader-migration spec (the CCM upgrade from v1.35.0) is
# e2e-openstack-upgrade's, the older CCM's own run e2e-openstack-older's.
e2e-openstack: build
	$(MAKE) e2e PROVIDER=openstack CCM_VERSION= PROVIDER_CONFIG= LABEL_FILTER='!leader-migration' ARTIFACTS=$(ARTIFACTS)/openstack

# Each provider's older pinned CCM, in a configuration of its own: vSphere
# v1.30.1 with dual-stack guests and inline credentials, OpenStack v1.35.0
# with an application credential in a region of its own, AWS v1.36.2 in a
# cloud with IPv6 (its nodes dual-stack), then with Network Load Balancers;
# and the CCM upgrades from vSphere's and OpenStack's older CCMs to their
# newest. Not in make test, whose budget holds one run of each CCM (the
# newest, as configured by default; make test's dual-stack specs are the
# fake provider's) and one of each way into the leader-migration specs
# (the fake provider's, from an in-tree kube-controller-manager; the AWS
# CCM's, from its older CCM alone, with its negative control): each
# upgrade is a control plane of three members whose CCMs are rolled member
# by member, minutes of both cores, and each older CCM one more build
# (both are built with this repository's libraries, a minute or two each
# on empty caches). On empty caches make test is at the edge of CI's 75
# minutes (72.7 at e93402f; docs/development.md). Each provider's presubmit runs its own when its
# files change, and the daily periodic ci-ccm-harness-e2e-older-ccms all
# of them.
e2e-older-ccms: e2e-vsphere-older e2e-openstack-older e2e-aws-older e2e-vsphere-upgrade e2e-openstack-upgrade
e2e-vsphere-upgrade: build
	$(MAKE) e2e PROVIDER=vsphere CCM_VERSION= PROVIDER_CONFIG= LABEL_FILTER=leader-migration ARTIFACTS=$(ARTIFACTS)/vsphere-upgrade
e2e-openstack-upgrade: build
	$(MAKE) e2e PROVIDER=openstack CCM_VERSION= PROVIDER_CONFIG= LABEL_FILTER=leader-migration ARTIFACTS=$(ARTIFACTS)/openstack-upgrade
e2e-vsphere-older: build
	$(MAKE) e2e PROVIDER=vsphere CCM_VERSION=v1.30.1 PROVIDER_CONFIG=$(CURDIR)/e2e/testdata/vsphere-dual-stack.yaml \
		ARTIFACTS=$(ARTIFACTS)/vsphere-v1.30.1
e2e-openstack-older: build
	$(MAKE) e2e PROVIDER=openstack CCM_VERSION=v1.35.0 PROVIDER_CONFIG=$(CURDIR)/e2e/testdata/openstack-application-credential.yaml \
		ARTIFACTS=$(ARTIFACTS)/openstack-v1.35.0
e2e-aws-older: build
	$(MAKE) e2e PROVIDER=aws CCM_VERSION=v1.36.2 PROVIDER_CONFIG=$(CURDIR)/e2e/testdata/aws-dual-stack.yaml LABEL_FILTER='!leader-migration' ARTIFACTS=$(ARTIFACTS)/aws-v1.36.2
	$(MAKE) e2e PROVIDER=aws CCM_VERSION=v1.36.2 PROVIDER_CONFIG=$(AWS_NLB) LABEL_FILTER=loadbalancer ARTIFACTS=$(ARTIFACTS)/aws-nlb-v1.36.2

# The OpenStack and AWS CCMs' data path on kind: packets through Octavia's
# listeners to pods and between nodes over the Neutron router's routes, and
# to the address an AWS load balancer's DNS name stands for. Not in make
# test: each is a kind cluster (minutes of both cores) beside make e2e-kind,
# the data path's representative run there (fakecloud's CCM, the same
# listeners); the provider presubmits run them when the provider's files
# change, and the periodic ci-ccm-harness-e2e-kind-providers daily.
e2e-openstack-kind: build
	$(MAKE) e2e PROVIDER=openstack CLUSTER=kind LABEL_FILTER=datapath CCM_VERSION= PROVIDER_CONFIG= ARTIFACTS=$(ARTIFACTS)/openstack-kind
e2e-aws-kind: build
	$(MAKE) e2e PROVIDER=aws CLUSTER=kind LABEL_FILTER=datapath CCM_VERSION= PROVIDER_CONFIG= ARTIFACTS=$(ARTIFACTS)/aws-kind

# The AWS suite in make test, its artifacts beside the default run's: the
# newest pinned CCM against fakecloud's EC2 and Elastic Load Balancing
# (classic load balancers), including the CCM upgrade from v1.36.2 (the
# older CCM, whose own run is e2e-aws-older's); the upgrade from v1.35.3
# the older's would take, minutes of building its own libraries, is left
# to the matrix's periodic (ci-ccm-harness-matrix-aws).
e2e-aws: build
	$(MAKE) e2e PROVIDER=aws CCM_VERSION= PROVIDER_CONFIG= ARTIFACTS=$(ARTIFACTS)/aws

# The rest of the AWS suite, a target of its own so that make test runs it
# beside e2e-aws: the newest CCM with Network Load Balancers (Elastic Load
# Balancing v2), for the load-balancer specs, the only ones the kind of
# load balancer changes.
AWS_NLB = $(CURDIR)/e2e/testdata/aws-nlb.yaml
e2e-aws-lb: build
	$(MAKE) e2e PROVIDER=aws CCM_VERSION= PROVIDER_CONFIG=$(AWS_NLB) LABEL_FILTER=loadbalancer ARTIFACTS=$(ARTIFACTS)/aws-nlb

# The AWS CCM against fakecloud's AWS, judged through the example cloud
# plugin (examples/cloud-plugin/aws-cli.sh, the AWS CLI and jq) in place of
# the harness's own inspector, named by a profile file as a CCM maintainer
# would name theirs (docs/cloud-plugin.md); make compare checks that every
# spec ends as in make e2e-aws's run. Two processes: each question runs
# the AWS CLI a few times, a second of CPU each. By default the specs that
# ask every verb of the plugin (the node, lifecycle and route specs, and
# the load-balancer specs about nodes joining and a failed creation, with
# the leak check after each): the whole suite through the plugin takes
# 6 to 7 minutes of both cores, beyond make test's budget, and runs in the
# daily periodic ci-ccm-harness-e2e-plugin (PLUGIN_LABEL_FILTER='!leader-migration').
PLUGIN_LABEL_FILTER ?= !leader-migration && (!loadbalancer || Serial)
e2e-plugin: build
	@command -v aws >/dev/null && command -v jq >/dev/null || { echo "e2e-plugin: the example cloud plugin needs the AWS CLI and jq (apt-get install awscli jq)"; exit 1; }
	$(MAKE) e2e PROVIDER=external PROVIDER_CONFIG=$(CURDIR)/e2e/testdata/aws-plugin.yaml CCM_VERSION= CCM_IMAGE= K8S_VERSION= \
		LABEL_FILTER='$(PLUGIN_LABEL_FILTER)' PROCS=2 ARTIFACTS=$(ARTIFACTS)/aws-plugin

# The fakecloud CCM packed into an image with no Docker (ccm-harness pack),
# and the suite run from that image through a profile file, as the README
# shows for a provider's own CCM: PROVIDER=external PROVIDER_CONFIG=<file>.
# The leader-migration specs build their own managers, so they are left
# out.
IMAGE_DIR := $(CURDIR)/_output/image
IMAGE     := $(IMAGE_DIR)/fakecloud-ccm.tar
$(IMAGE): $(BIN)/ccm-harness $(GO_SOURCES)
	CGO_ENABLED=1 $(GO) build -trimpath -ldflags '-s -w' -o $(IMAGE_DIR)/fakecloud-ccm ./fakecloud/cmd/fakecloud-ccm
	$(BIN)/ccm-harness pack $(IMAGE_DIR)/fakecloud-ccm --tag ccm-harness.local/fakecloud-ccm:dev --out $@

# A test CCM that works only in a cluster (its own clients from the
# ServiceAccount, a ConfigMap read at start) and claims load balancers
# alone, run through its profile file with cloud: none: a provider's CCM
# the harness has no Go code for.
INCLUSTER_IMAGE := $(IMAGE_DIR)/incluster-ccm.tar
$(INCLUSTER_IMAGE): $(BIN)/ccm-harness $(GO_SOURCES)
	$(GO) build -trimpath -ldflags '-s -w' -o $(IMAGE_DIR)/incluster-ccm ./e2e/incluster-ccm
	$(BIN)/ccm-harness pack $(IMAGE_DIR)/incluster-ccm --tag ccm-harness.local/incluster-ccm:dev --out $@

e2e-incluster: $(INCLUSTER_IMAGE)
	$(MAKE) e2e PROVIDER=external PROVIDER_CONFIG=$(CURDIR)/e2e/incluster-ccm/profile.yaml CCM_VERSION= CCM_IMAGE= \
		LABEL_FILTER='!leader-migration' ARTIFACTS=$(ARTIFACTS)/incluster

# fakecloud's CCM from its image, named by a profile file, through the
# matrix's door: the image at its release (the Kubernetes libraries it is
# built on) is one CCM version, run on the releases of its own minor (one
# cell, $(ARTIFACTS)/image/matrix/k8s-<release>_ccm-<release>).
FAKECLOUD_CCM_RELEASE := $(shell awk '$$1 == "k8s.io/kubernetes" {print $$2}' go.mod)
e2e-image: $(IMAGE)
	$(MAKE) matrix PROVIDER=external PROVIDER_CONFIG=$(CURDIR)/e2e/testdata/fakecloud-ccm-image.yaml \
		CCM_IMAGE=docker-archive:$(IMAGE) CCM_VERSION=$(FAKECLOUD_CCM_RELEASE) MATRIX_CLUSTERS=$(FAKECLOUD_CCM_RELEASE) MATRIX_CCMS= \
		LABEL_FILTER='!leader-migration' ARTIFACTS=$(ARTIFACTS)/image

# The suite against a cluster it did not make (CLUSTER=existing): a local
# cluster brought up beforehand with make up, its CCM from the image
# e2e-image packs, plays someone else's, and is taken down after, whatever
# the suite did.
EXISTING_STATE := $(CURDIR)/_output/existing-state
e2e-existing: build $(IMAGE)
	CCM_HARNESS_STATE=$(EXISTING_STATE) $(MAKE) up NAME=existing PROVIDER=fake CCM_VERSION= PROVIDER_CONFIG= \
		CCM_IMAGE=docker-archive:$(IMAGE) ARTIFACTS=$(ARTIFACTS)/existing/cluster
	status=0; cd $(CURDIR) && $(BIN)/e2e.test -ginkgo.no-color -ginkgo.label-filter='!leader-migration' --dry-run \
		--provider=fake --cluster=existing --kubeconfig=$(EXISTING_STATE)/existing/admin.kubeconfig \
		--artifacts=$(ARTIFACTS)/existing/dry-run >/dev/null && \
	$(BIN)/e2e.test -ginkgo.v -ginkgo.no-color $(QUIET) -ginkgo.timeout=1h \
		-ginkgo.label-filter='!leader-migration' --provider=fake --cluster=existing \
		--kubeconfig=$(EXISTING_STATE)/existing/admin.kubeconfig --artifacts=$(ARTIFACTS)/existing || status=$$?; \
	CCM_HARNESS_STATE=$(EXISTING_STATE) $(BIN)/ccm-harness down --name existing; exit $$status

# Clusters and clouds the suite did not make, judged through the clouds'
# own APIs, as a provider's CI would judge theirs: make up leaves a local
# cluster running with fakecloud speaking AWS (then OpenStack) and its
# CCM in it, leading by a lease; the suite then gets only the cluster's
# kubeconfig, the cloud's own tools' usual configuration for an inspector
# of its own (AWS: shared config and credentials files, the endpoints in
# AWS_ENDPOINT_URL_*; OpenStack: clouds.yaml and OS_CLOUD; what
# e2e/testdata/reach.sh writes) and a profile file that reaches that cloud
# with no ccm (the cluster's runs already). AWS is judged through the AWS
# SDK and, with REACHED_PLUGIN=true, then through the example cloud plugin
# too (the specs that ask it every verb), make compare checking that the
# two agree spec by spec: the daily periodic ci-ccm-harness-e2e-plugin's.
# make test's run through the plugin is make e2e-plugin's, which keeps the
# second run's AWS CLI (about a second of CPU a question) out of its
# budget. OpenStack through gophercloud (e2e-reached-openstack). Each run lends the
# node-lifecycle specs two nodes of its own (LIFECYCLE_NODES), which they
# stop, start and terminate through the cloud's API alone (fakecloud
# silences a stopped instance's kwok kubelet, as a real machine's goes
# down with it), and makes the specs' new nodes by a join hook
# (JOIN_HOOK): `ccm-harness join`, which adds a node to a cluster left by
# make up as a machine's kubelet joins, its instance made first. Each
# cluster is taken down after, whatever the suite did. The control is
# e2e-reached-control.
REACHED_STATE := $(CURDIR)/_output/reached-state
REACHED       := $(CURDIR)/_output/reached
REACHED_E2E    = $(MAKE) e2e CLUSTER=existing PROVIDER=external CCM_VERSION= CCM_IMAGE= K8S_VERSION=
# JOIN is the join hook for the reached cluster $(1) of provider $(2),
# made as make up made it: its flags, not the suite's environment (its
# PROVIDER_CONFIG is the reached profile), which the hook inherits.
JOIN           = env CCM_HARNESS_STATE=$(REACHED_STATE) $(BIN)/ccm-harness join --name $(1) --provider=$(2) \
	--provider-config= --ccm-version= --ccm-image= --kubernetes-version=
REACHED_PLUGIN ?= false
# (a variable of its own, as FOREIGN_PLUGIN_RUN is)
REACHED_PLUGIN_RUN = $(REACHED_E2E) PROVIDER_CONFIG=$(REACHED)/aws/aws-reached-plugin.yaml LABEL_FILTER='$(PLUGIN_LABEL_FILTER)' \
	LIFECYCLE_NODES=node-6,node-7 JOIN_HOOK='$(call JOIN,reached,aws)' ARTIFACTS=$(ARTIFACTS)/reached-plugin
e2e-reached: build
	CCM_HARNESS_STATE=$(REACHED_STATE) $(MAKE) up NAME=reached PROVIDER=aws CCM_VERSION= CCM_IMAGE= PROVIDER_CONFIG= K8S_VERSION= \
		NODES=$(if $(filter true,$(REACHED_PLUGIN)),7,5) ARTIFACTS=$(ARTIFACTS)/reached/cluster
	status=0; e2e/testdata/reach.sh aws $(REACHED_STATE)/reached/cloud-admin $(REACHED)/aws && . $(REACHED)/aws/env && \
	export KUBECONFIG=$(REACHED_STATE)/reached/admin.kubeconfig && \
	$(REACHED_E2E) PROVIDER_CONFIG=$(REACHED)/aws/aws-reached.yaml LABEL_FILTER='!leader-migration' \
		LIFECYCLE_NODES=node-4,node-5 JOIN_HOOK='$(call JOIN,reached,aws)' ARTIFACTS=$(ARTIFACTS)/reached \
		$(if $(filter true,$(REACHED_PLUGIN)),&& $(REACHED_PLUGIN_RUN)) || status=$$?; \
	CCM_HARNESS_STATE=$(REACHED_STATE) $(BIN)/ccm-harness down --name reached; [ $$status = 0 ]

# The route specs with the route controller's watch-based reconciliation
# on (KEP-5237; the gate CloudControllerManagerWatchBasedRoutesReconciliation,
# alpha and off by default in k8s.io/cloud-provider v0.37.2): fakecloud's
# CCM with the gate, described by a profile file whose known difference
# (a route deleted behind the CCM's back is restored only on a node event or
# the informer's resync) carries its evidence.
e2e-routes-watch: build
	$(MAKE) e2e PROVIDER=external PROVIDER_CONFIG=e2e/testdata/fakecloud-watch-routes.yaml LABEL_FILTER=route \
		CCM_VERSION= CCM_IMAGE= K8S_VERSION= ARTIFACTS=$(ARTIFACTS)/routes-watch

# The leader-migration specs on clusters that run coordinated leader
# election (KEP-4355, beta and off by default): the API server elects
# among release N's kube-controller-managers, which exit when they yield
# their lease and are started again, as a kubelet would; the in-tree
# kube-controller-manager (v1.30) and the CCMs cannot take part.
e2e-coordinated: build
	$(MAKE) e2e PROVIDER=fake CLUSTER=local CCM_VERSION= CCM_IMAGE= PROVIDER_CONFIG= K8S_VERSION= LABEL_FILTER=leader-migration \
		COORDINATED_LEADER_ELECTION=true ARTIFACTS=$(ARTIFACTS)/coordinated

# e2e-reached's OpenStack, a target of its own that make test runs beside
# the others.
e2e-reached-openstack: build
	CCM_HARNESS_STATE=$(REACHED_STATE) $(MAKE) up NAME=reached-openstack PROVIDER=openstack CCM_VERSION= CCM_IMAGE= PROVIDER_CONFIG= \
		K8S_VERSION= NODES=5 ARTIFACTS=$(ARTIFACTS)/reached-openstack/cluster
	status=0; e2e/testdata/reach.sh openstack $(REACHED_STATE)/reached-openstack/cloud-admin $(REACHED)/openstack && \
	. $(REACHED)/openstack/env && export KUBECONFIG=$(REACHED_STATE)/reached-openstack/admin.kubeconfig && \
	$(REACHED_E2E) PROVIDER_CONFIG=$(REACHED)/openstack/openstack-reached.yaml LABEL_FILTER='!leader-migration' LIFECYCLE_NODES=node-4,node-5 \
		JOIN_HOOK='$(call JOIN,reached-openstack,openstack)' ARTIFACTS=$(ARTIFACTS)/reached-openstack || status=$$?; \
	CCM_HARNESS_STATE=$(REACHED_STATE) $(BIN)/ccm-harness down --name reached-openstack; [ $$status = 0 ]

# e2e-reached's vSphere: vcsim, started by make up as the vCenter of a
# cluster with the vSphere CCM, reached as govc reaches a vCenter (GOVC_*,
# the harness's admin user at vcsim's port of its own: not the CCM's) and
# judged through govmomi, joining nodes through the hook. Not the
# lifecycle specs: a VM powered off in vcsim powers off no kwok node, so
# they would fail for the emulation, not the CCM (make e2e-vsphere runs
# them, the harness powering both). Its control: an inspector told the
# tag categories the wrong way round (zone for region) must fail the zone
# spec, with the zone it reads, and the node's, named.
e2e-reached-vsphere: build
	CCM_HARNESS_STATE=$(REACHED_STATE) $(MAKE) up NAME=reached-vsphere PROVIDER=vsphere CCM_VERSION= CCM_IMAGE= PROVIDER_CONFIG= \
		K8S_VERSION= NODES=3 ARTIFACTS=$(ARTIFACTS)/reached-vsphere/cluster
	status=0; e2e/testdata/reach.sh vsphere $(REACHED_STATE)/reached-vsphere/cloud-admin $(REACHED)/vsphere && \
	REACH='regionCategory: k8s-zone, zoneCategory: k8s-region' e2e/testdata/reach.sh vsphere $(REACHED_STATE)/reached-vsphere/cloud-admin $(REACHED)/vsphere-swapped && \
	. $(REACHED)/vsphere/env && export KUBECONFIG=$(REACHED_STATE)/reached-vsphere/admin.kubeconfig && \
	$(REACHED_E2E) PROVIDER_CONFIG=$(REACHED)/vsphere/vsphere-reached.yaml LABEL_FILTER='!leader-migration && !node-lifecycle' \
		JOIN_HOOK='$(call JOIN,reached-vsphere,vsphere)' ARTIFACTS=$(ARTIFACTS)/reached-vsphere || status=$$?; \
	if [ $$status = 0 ]; then \
		if $(REACHED_E2E) PROVIDER_CONFIG=$(REACHED)/vsphere-swapped/vsphere-reached.yaml LABEL_FILTER=zone WAIT_SCALE=0.25 \
			ARTIFACTS=$(ARTIFACTS)/reached-vsphere-control > $(ARTIFACTS)/reached-vsphere-control.log 2>&1; then \
			echo "e2e-reached-vsphere: the control passed: an inspector reading the wrong tags was not caught ($(ARTIFACTS)/reached-vsphere-control.log)"; status=1; \
		elif grep -q "$(VSPHERE_CONTROL_SHOWS)" $(ARTIFACTS)/reached-vsphere-control.log; then \
			echo "e2e-reached-vsphere: the control failed, as it must: the zone read from the region's tag is not the node's"; \
		else echo "e2e-reached-vsphere: the control failed, but not on the zone ($(ARTIFACTS)/reached-vsphere-control.log)"; status=1; fi; \
	fi; \
	CCM_HARNESS_STATE=$(REACHED_STATE) $(BIN)/ccm-harness down --name reached-vsphere; [ $$status = 0 ]
# (dots for the quotes the recipe's shell would take)
VSPHERE_CONTROL_SHOWS := expected label topology.kubernetes.io/zone=.region-a. (the cloud.s zone), actual .zone-a

# The control of e2e-reached: an AWS that lies to the CCM alone about
# five nodes (e2e/testdata/aws-lying.yaml), judged through the SDK, with
# two of them lent to the lifecycle specs, must fail the zone,
# instance-type, address and both lifecycle specs (make compare's
# TestReachedControl says which and why). A quarter of each wait: about
# three minutes of specs that must time out.
e2e-reached-control: build
	CCM_HARNESS_STATE=$(REACHED_STATE) $(MAKE) up NAME=reached-lying PROVIDER=aws CCM_VERSION= CCM_IMAGE= K8S_VERSION= \
		NODES=5 PROVIDER_CONFIG=$(CURDIR)/e2e/testdata/aws-lying.yaml ARTIFACTS=$(ARTIFACTS)/reached-control/cluster
	status=0; e2e/testdata/reach.sh aws $(REACHED_STATE)/reached-lying/cloud-admin $(REACHED)/aws-lying && \
	. $(REACHED)/aws-lying/env && export KUBECONFIG=$(REACHED_STATE)/reached-lying/admin.kubeconfig && \
	if $(REACHED_E2E) PROVIDER_CONFIG=$(REACHED)/aws-lying/aws-reached.yaml LABEL_FILTER='zone || instance-type || node-address || node-lifecycle' \
		LIFECYCLE_NODES=node-4,node-5 WAIT_SCALE=0.25 ARTIFACTS=$(ARTIFACTS)/reached-control > $(ARTIFACTS)/reached-control.log 2>&1; then \
		echo "e2e-reached-control: the control passed: a CCM lied to about five nodes was not caught ($(ARTIFACTS)/reached-control.log)"; status=1; \
	else echo "e2e-reached-control: the control failed, as it must (make compare checks which specs and why: TestReachedControl)"; fi; \
	CCM_HARNESS_STATE=$(REACHED_STATE) $(BIN)/ccm-harness down --name reached-lying; [ $$status = 0 ]

# A cluster and a cloud the harness did not make, made with their own
# tools (e2e/testdata/foreign.sh): fakecloud on its own as an AWS whose
# machines are the node containers, a kind cluster from kind's command
# line, the AWS CCM from its own manifests with kubectl (no route
# controller: the manifests' --configure-cloud-routes=false). The suite
# gets the kubeconfig and the cloud's endpoint alone (reach.sh), checks
# which controllers the CCM's pod runs against the claims, runs the data
# path on the cluster's nodes, and judges through the AWS SDK, then, with
# FOREIGN_PLUGIN=true, through the example cloud plugin; each run lends the
# lifecycle specs two nodes of its own, which they power through EC2's API
# (the machine's container stops with its instance). make compare checks
# the SDK's run, and that the two runs agree spec by spec
# (TestForeignPluginMatchesSDK). The plugin's run is the daily periodic's
# (ci-ccm-harness-e2e-foreign-plugin): make test judges through the plugin
# in make e2e-plugin, and keeps the 6-node cluster's minutes of the AWS CLI
# out of its budget. The specs that add
# nodes get them from the cluster's own join hook (foreign.sh join: a node
# container joined with kubeadm, as kind's command line cannot add one),
# and terminate them through the cloud's API. Its control: a profile claiming routes too must stop before any spec, as the
# CCM's pod runs no route controller.
FOREIGN      := $(CURDIR)/_output/foreign
FOREIGN_NODE  = ccm-harness-foreign-worker$(1)
FOREIGN_JOIN := BIN=$(BIN) $(CURDIR)/e2e/testdata/foreign.sh join $(FOREIGN)
FOREIGN_PLUGIN ?= false
# The nodes foreign.sh adds to kind's worker, the first two lent to the SDK
# run, the last two to the plugin's: without the plugin's run, one that
# runs pods beside kind's worker (the rolling update needs two).
FOREIGN_NODES = 2 3 4 $(if $(filter true,$(FOREIGN_PLUGIN)),5)
# (a variable of its own: the commas of a command written inside $(if)
# would split its arguments)
FOREIGN_PLUGIN_RUN = $(REACHED_E2E) PROVIDER_CONFIG=$(FOREIGN)/reach/aws-reached-plugin.yaml LABEL_FILTER='$(PLUGIN_LABEL_FILTER)' \
	LIFECYCLE_NODES=$(call FOREIGN_NODE,4),$(call FOREIGN_NODE,5) JOIN_HOOK='$(FOREIGN_JOIN)' ARTIFACTS=$(ARTIFACTS)/foreign-plugin
e2e-foreign: build $(BIN)/kind
	@# One shell, so that the cluster and its cloud go whatever ends it
	@# (a failure, Ctrl-C).
	trap 'ARTIFACTS=$(ARTIFACTS)/foreign e2e/testdata/foreign.sh down $(FOREIGN)' EXIT; \
	ARTIFACTS=$(ARTIFACTS)/foreign e2e/testdata/foreign.sh up $(FOREIGN) $(foreach i,$(FOREIGN_NODES),$(call FOREIGN_NODE,$(i))) && \
	CAPABILITIES='instances, zones, node-lifecycle, load-balancers' e2e/testdata/reach.sh aws $(FOREIGN)/cloud-admin $(FOREIGN)/reach && \
	. $(FOREIGN)/reach/env && export KUBECONFIG=$(FOREIGN)/kubeconfig && \
	$(REACHED_E2E) PROVIDER_CONFIG=$(FOREIGN)/reach/aws-reached.yaml LABEL_FILTER='!leader-migration' \
		LIFECYCLE_NODES=$(call FOREIGN_NODE,2),$(call FOREIGN_NODE,3) JOIN_HOOK='$(FOREIGN_JOIN)' ARTIFACTS=$(ARTIFACTS)/foreign && \
	$(if $(filter true,$(FOREIGN_PLUGIN)),$(FOREIGN_PLUGIN_RUN) &&) \
	CAPABILITIES='instances, zones, node-lifecycle, load-balancers, routes' e2e/testdata/reach.sh aws $(FOREIGN)/cloud-admin $(FOREIGN)/claims && \
	if $(REACHED_E2E) PROVIDER_CONFIG=$(FOREIGN)/claims/aws-reached.yaml LABEL_FILTER=route ARTIFACTS=$(ARTIFACTS)/foreign-claims \
		> $(ARTIFACTS)/foreign-claims.log 2>&1; then \
		echo "e2e-foreign: the claims control passed: routes claimed for a CCM that runs no route controller ($(ARTIFACTS)/foreign-claims.log)"; false; \
	elif grep -q "but its CCM runs no node-route-controller" $(ARTIFACTS)/foreign-claims.log; then \
		echo "e2e-foreign: the claims control failed, as it must: the CCM's pod runs no route controller"; \
	else echo "e2e-foreign: the claims control failed, but not on the claim; its last output lines: (those naming an error; all: $(ARTIFACTS)/foreign-claims.log)"; \
		grep -E 'FAIL|[Ee]rror|failed|cannot|timed out|does not answer|no CCM' $(ARTIFACTS)/foreign-claims.log | tail -8 | cut -c1-300 | sed 's/^/	/'; false; fi

# Kubernetes' own load-balancer e2e as a cross-check of ours: the e2e.test
# of the cluster's release (built once into the cache), its
# [Feature:LoadBalancer] specs, against a kind cluster the
# harness brings up for it and takes down after, with the provider's CCM
# (the fake provider's from its image). Every upstream spec must pass or be
# listed, with why, in providers/$(PROVIDER)/upstream.yaml; a listed spec
# that passes fails the run too (fake, openstack and aws, whose load
# balancers' DNS names the suite resolves with fakecloud's DNS, which takes
# root; vsphere is refused, saying why). The result: $(ARTIFACTS)/upstream-$(PROVIDER)/upstream/summary.md.
# UPSTREAM_SKIP leaves specs out (e2e.test's --ginkgo.skip); by default
# upstream's two rolling-update specs (five rollouts of every node, each
# pod draining 60 s: about 10 minutes each), which our datapath/rolling-update
# spec checks in make test. UPSTREAM_ALL=true runs every spec, the listed
# ones too, which checks the list (the periodics); by default the listed
# ones are left out (--skip-listed), as each waits out a timeout of ten
# minutes or more before it fails.
# UPSTREAM_EXPECT names another list than providers/$(PROVIDER)/upstream.yaml
# (your CCM's, with PROVIDER=external and its profile file). UPSTREAM_TIMEOUT
# is the suite's (default 90m): each listed spec whose Service gets no
# ingress waits out upstream's 15 minutes. UPSTREAM_PROCS runs the specs in
# that many processes under Ginkgo's command line, as Kubernetes' own jobs
# do: by default 1, and 12 with UPSTREAM_ALL, so that the listed specs'
# waits overlap (the AWS CCM's ten, one after another, take two and a half
# hours).
# Not in make test, as issue 39 allows only within the CI budget: alone on
# the 2-core machine it takes about 400 s and 530 s of CPU (the kind
# nodes' 280 of it), a tenth of make test's CPU, which is over the budget.
# The presubmit pull-ccm-harness-e2e-upstream runs it when fakecloud, the
# fake provider, the upstream runner or a list changes, and the daily
# periodics ci-ccm-harness-e2e-upstream-{fake,openstack,aws} every spec.
UPSTREAM_SKIP ?= $(if $(filter true,$(UPSTREAM_ALL)),,rolling update)
UPSTREAM_PROCS ?= $(if $(filter true,$(UPSTREAM_ALL)),12,1)
e2e-upstream: $(BIN)/ccm-harness $(if $(filter fake,$(PROVIDER)),$(IMAGE))
	$(BIN)/ccm-harness upstream --name=ccm-harness-upstream-$(PROVIDER) --cluster=kind --provider=$(PROVIDER) \
		$(if $(filter fake,$(PROVIDER)),--ccm-image=docker-archive:$(IMAGE),--ccm-version='$(CCM_VERSION)') --provider-config='$(PROVIDER_CONFIG)' \
		--kubernetes-version='$(K8S_VERSION)' --artifacts=$(ARTIFACTS)/upstream-$(PROVIDER) $(if $(UPSTREAM_SKIP),--skip='$(UPSTREAM_SKIP)') \
		$(if $(filter true,$(UPSTREAM_ALL)),,--skip-listed) $(if $(UPSTREAM_EXPECT),--expect='$(UPSTREAM_EXPECT)') \
		$(if $(UPSTREAM_TIMEOUT),--timeout=$(UPSTREAM_TIMEOUT)) --procs=$(UPSTREAM_PROCS)

$(BIN)/kind: go.mod go.sum
	@mkdir -p $(BIN); $(GO) build -ldflags='-s -w' -o $@ sigs.k8s.io/kind

# The suite on real nodes: a kind cluster made for the CCM (no default CNI,
# kubeadm's CoreDNS, --cloud-provider=external), where the [datapath] specs carry
# packets through fakecloud's load balancers to pods, and pods on different
# nodes reach each other only over the routes the CCM made. Needs Docker
# (on machines whose sandbox lacks CAP_SYS_RESOURCE, run .ci/docker-setup
# first). The node image is built on the machine, once per recipe.
#
# The CCM runs as it is deployed: the fakecloud CCM's image (e2e-image's),
# loaded into the nodes' containerd, as a Deployment's pod on the
# control-plane node under the fake provider's manifests.
e2e-kind: $(IMAGE)
	$(MAKE) e2e CLUSTER=kind PROVIDER=fake CCM_VERSION= CCM_IMAGE=docker-archive:$(IMAGE) PROVIDER_CONFIG= ARTIFACTS=$(ARTIFACTS)/kind

# make test's run on kind: the specs only real nodes can check, the data
# path and the routes the network fabric carries between pods. The rest of
# the suite on kind (5.4 of the 8.8 minutes of specs at 4e53cc5: nodes
# joined with kubeadm, stopped and terminated) is make e2e-kind's, in the
# presubmit pull-ccm-harness-e2e-kind and the daily periodic
# ci-ccm-harness-e2e-kind-providers; in make test those specs run on the
# local clusters, and on real kubelets with the AWS CCM (make e2e-foreign).
# Its cluster is dual-stack (DUAL_STACK=true): pods of both families over
# the routes of both, the data path through an IPv6 ingress, and real
# kubelets given a dual-stack --node-ip (the specs that need IPv6 nodes or
# dual-stack Services).
KIND_DATAPATH = datapath || route || needs-ipv6-nodes || needs-dual-stack-services
e2e-kind-datapath: $(IMAGE)
	$(MAKE) e2e-kind LABEL_FILTER='$(KIND_DATAPATH)' DUAL_STACK=true

# The default suite again in one process, its artifacts beside the
# parallel run's: e2e/controls' TestSerialMatchesParallel checks that the
# two end spec by spec alike. Not the leader-migration specs: each brings
# up HA control planes of its own and shares nothing with the others.
e2e-serial: build
	$(MAKE) e2e PROVIDER=fake CLUSTER=local CCM_VERSION= CCM_IMAGE= PROVIDER_CONFIG= K8S_VERSION= LABEL_FILTER='!leader-migration' PROCS=1 ARTIFACTS=$(ARTIFACTS)/serial

# Which specs would run and why the others would be skipped, for PROVIDER
# on CLUSTER: the cluster comes up, nothing runs, and every spec is
# reported skipped with its reason ("dry run: would run" for the rest).
e2e-dry-run: build
	cd $(CURDIR) && $(BIN)/e2e.test -ginkgo.no-color -ginkgo.label-filter='$(LABEL_FILTER)' --dry-run \
		--provider=$(PROVIDER) --ccm-version='$(CCM_VERSION)' --cluster=$(CLUSTER) --artifacts=$(ARTIFACTS)/dry-run \
		--provider-config='$(PROVIDER_CONFIG)' --ccm-image='$(CCM_IMAGE)' --kubernetes-version='$(K8S_VERSION)'

# Figures, as Go benchmark lines for benchstat, also in $(ARTIFACTS)/bench.txt:
# warm bring-up against kwokctl's (5 each), the default suite's wall time
# and peak memory, and 100, 300 and 1,000 nodes joining at once with the
# CCM's default settings and tuned.
bench: build
	@mkdir -p $(ARTIFACTS)
	$(GO) test -run '^$$' -bench 'BringUp' -benchtime 5x -timeout 20m ./bench > $(ARTIFACTS)/bench.txt 2>&1; \
	status=$$?; cat $(ARTIFACTS)/bench.txt; [ $$status -eq 0 ] || exit $$status; \
	E2E_TEST=$(BIN)/e2e.test $(GO) test -run '^$$' -bench 'Suite|Scale' -benchtime 1x -timeout 60m ./bench > $(ARTIFACTS)/bench-more.txt 2>&1; \
	status=$$?; cat $(ARTIFACTS)/bench-more.txt; cat $(ARTIFACTS)/bench-more.txt >> $(ARTIFACTS)/bench.txt; rm $(ARTIFACTS)/bench-more.txt; exit $$status

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

# The generated docs: docs/profile-file.md, the profile file's reference,
# from its Go types and the registry (a unit test fails when it is stale).
docs:
	$(GO) run ./hack/profiledoc

# What a kubernetes-sigs repository's hack/verify-* scripts check, as one
# target make test runs first: formatting and vet, the license headers,
# the generated docs current and every doc link resolving, and tidy go.mod
# files in each of the three modules.
verify: vet
	hack/verify-boilerplate.sh
	hack/verify-file-length.sh
	$(GO) test ./hack/profiledoc ./docs
	@for m in . kubetest2-deployer jobs; do \
		(cd $$m && $(GO) mod tidy -diff >/dev/null) || { echo "verify: the go.mod of $$m is not tidy: run go mod tidy in $$m"; exit 1; }; \
	done

# The vSphere provider's tests run vcsim, the CLI's bad-input tests the
# OpenStack CCM: built first, so a cold cache's build is not charged to a
# test's deadline.
unit: build
	$(BIN)/ccm-harness binaries --provider=vsphere --ccm-version= --kubernetes-version= --label-filter='!leader-migration' >/dev/null
	$(BIN)/ccm-harness binaries --provider=openstack --ccm-version= --kubernetes-version= --label-filter='!leader-migration' >/dev/null
	$(BIN)/ccm-harness binaries --provider=aws --ccm-version= --kubernetes-version= --label-filter='!leader-migration' >/dev/null
	@# -parallel 8: the CLI's tests bring clusters up and mostly wait on them.
	$(GO) test -parallel 8 $(UNIT_PKGS)

# Every scenario run against a deliberately broken cloud must fail, naming
# the node, the expected and the actual value. Of the providers' older
# CCMs only the AWS CCM's: its leader-migration control is make test's
# (make controls-all adds none of vSphere's or OpenStack's).
controls: build $(IMAGE) $(INCLUSTER_IMAGE)
	$(BIN)/ccm-harness binaries --provider=vsphere --ccm-version= --kubernetes-version= --label-filter='!leader-migration' >/dev/null
	$(BIN)/ccm-harness binaries --provider=openstack --ccm-version= --kubernetes-version= --label-filter='!leader-migration' >/dev/null
	$(BIN)/ccm-harness binaries --provider=aws --ccm-version= --kubernetes-version= >/dev/null
	@# The kind node image too: on empty caches its build (debootstrap,
	@# kubelet) ran inside the first kind control's bring-up, 1,099 s of
	@# its 20 minutes, and the control timed out before its specs.
	$(BIN)/ccm-harness binaries --provider=fake --cluster=kind --ccm-version= --kubernetes-version='$(K8S_VERSION)' --label-filter='!leader-migration' >/dev/null
	@# -parallel 64: the negative controls take turns of their own, four
	@# clusters at a time, the longest first (controlClusters). The
	@# comparisons of earlier targets' runs are make compare's.
	CONTROLS_ALL=$(CONTROLS_ALL) K8S_VERSION='$(K8S_VERSION)' E2E_TEST=$(BIN)/e2e.test GINKGO=$(BIN)/ginkgo $(GO) test -count=1 -v -parallel 64 -timeout 40m -skip '$(COMPARE_TESTS)' \
		$(if $(CONTROLS_RUN),-run '$(CONTROLS_RUN)') ./e2e/controls

# Every control: make controls leaves out those marked exhaustive (a second
# control of specs others already fail: another provider's cloud, another
# migration config, a second kind cluster), which cost make test's budget
# more than they add to it. The presubmit pull-ccm-harness-controls runs
# them when the specs, clouds or profiles change, and the daily periodic
# ci-ccm-harness-controls always.
CONTROLS_ALL ?= false
controls-all:
	$(MAKE) controls CONTROLS_ALL=true

# The negative controls of the specs issue 39 added (session affinity,
# rolling updates, ipMode, nodes of another owner, dual-stack, coordinated
# leader election) at the oldest supported release, where each must still fail
# its spec: a daily periodic (make test runs every control at the default
# release). The fake provider's only: the other providers' default CCMs
# are newer than the skew policy allows on v1.34.
CONTROLS_OLDEST := TestNegativeControls/(route_never_created,_load_balancer_session_affinity_dropped|load_balancer_PROXY_protocol_dropped|load_balancer_session_affinity_kept_once_switched_off|kind_load_balancers_with_no_health_check|a_CCM_that|dual-stack_load_balancer_made_IPv4_alone|CCM_leader_migration_config_without_service-lb-controller)
controls-oldest:
	$(MAKE) controls K8S_VERSION=v1.34 CONTROLS_ALL=true CONTROLS_RUN='$(CONTROLS_OLDEST)'

# The images the small suites and the controls share, made once before
# make test runs them at once: each of them would otherwise write the same
# tarball while another reads it.
images: $(IMAGE) $(INCLUSTER_IMAGE)

# The runs of earlier targets of make test compared, spec by spec: the
# serial run with the parallel one, each dry run with its real run, the
# image's run with the binary's, the plugins' with the AWS SDK's. They read $(ARTIFACTS) and run no suite,
# so make test runs them last, once every run they compare has ended.
COMPARE_TESTS := ^(TestConformanceReports|TestPublishedReports|TestSerialMatchesParallel|TestDryRunMatchesRealRun|TestImageRunMatchesBinaryRun|TestPluginMatchesBuiltinInspector|TestReachedPluginMatchesSDK|TestForeignPluginMatchesSDK|TestReachedControl)$$
COMPARE_RUN ?= $(COMPARE_TESTS)
compare:
	FOREIGN_PLUGIN=$(FOREIGN_PLUGIN) REACHED_PLUGIN=$(REACHED_PLUGIN) $(GO) test -count=1 -v -run '$(COMPARE_RUN)' ./e2e/controls

# The Prow job configs load with Prow's own strict loader (a module of its
# own: Prow's dependencies stay out of the harness's build).
jobs:
	cd jobs && $(GO) vet ./... && $(GO) test ./...

# The matrix periodics, generated from the cells the harness computes
# (make jobs fails when they are stale).
jobs-matrix:
	cd jobs && $(GO) run ./cmd/genmatrix

# The components later targets of make test build beyond each provider's
# default: the managers of its leader-migration specs (the fake provider's
# release N kube-controller-manager and older fakecloud CCM, the AWS CCM
# upgraded from). make test builds them in the background, niced, while
# the suites mostly wait on their CCMs, so that on a cold cache their
# minutes of compiling cost little wall time; a target that needs one
# first waits on that build's lock. It needs only the CLI, so it starts
# before verify: on a cold cache verify and build wait minutes on module
# downloads and single-threaded links, time these builds fill. Warm, they
# are all in the cache at once.
prebuild: $(BIN)/ccm-harness
	nice -n 19 $(BIN)/ccm-harness binaries --provider=fake --ccm-version= --kubernetes-version= --leader-migration-only >/dev/null
	nice -n 19 $(BIN)/ccm-harness binaries --provider=aws --ccm-version= --kubernetes-version= --leader-migration-only >/dev/null

# make test runs these in order (hack/make-test.sh), stops starting them at
# the first that fails, and ends with each one's time (also in
# $(ARTIFACTS)/test-times.txt), so a target that grows shows against the CI
# budget. A target ending in @ runs in the background beside the rest;
# make test waits for it at "wait" (compare reads its run). The harness's
# binaries are built once, first, so that no two targets at once build the
# same file. Then the suites share the two cores as a pool: target:W takes
# W of TEST_CAPACITY while it runs, and as one ends the next that fits
# starts, in the order listed (the longest first, so that none is left to
# run alone at the end); none passes one that waits for room unless both
# fit (light ones taking each freed place left e2e-foreign to the end). The weights are what each loads the machine with:
# a kind cluster of 3 nodes (each a kubelet and a control plane or
# containerd) 3, e2e-foreign's of 5 nodes 4, the three leader-migration HA
# control planes a suite starts at once (its specs start first) 2, a
# plugin run's AWS CLI (a second of CPU a question) 2, the unit tests'
# compiling and linking 4 (both cores: at 3, beside make e2e-kind, a kind
# node's containerd took over 2 minutes to answer, so no kind suite runs
# beside them; kubetest2 beside them slowed both, unit 366 s to 483,
# kubetest2 381 to 591, and make test by minutes; beside make e2e-kind
# instead, it fills the room the unit tests wait for), the controls' four
# clusters at once, kind ones among them,
# 5, so that one light target at a time runs beside them, those that
# mostly wait (the clusters make up leaves, whose suites and controls wait
# on the cloud and on timeouts), one after another (at 4 of 8, a kind
# cluster beside them took over 8 minutes to join its workers; at 6 of 8,
# one of theirs did, beside a plugin run; at 6 of 6 alone, the machine
# idled a third of their last five minutes, and at 5 of 6 with only two
# short ones beside, 40 % of the ten after their first four); 1 for a
# local cluster that mostly waits on its CCM. Fixed groups of six or
# seven loaded the two cores to 90 where their clusters and migration
# specs started together: API servers then took over 2 s to answer a lease
# renewal, managers that missed their renew deadline exited, and kind
# nodes' kubelets went NotReady. A pool keeps the load level at a fixed
# worth, and the wall time is about the same: the CPU is the bound, not the
# waits. A node image is built by
# whichever kind suite asks first, the others waiting on its lock. Each
# target's output also goes to $(ARTIFACTS)/make-test/<target>.log; a failed
# target's error lines are printed again after the times, last.
TEST_CAPACITY ?= 6
TEST_TARGETS := cli prebuild@ verify build images \
	controls:5 jobs:1 e2e-reached:1 e2e-reached-control:1 e2e-existing:1 e2e-reached-vsphere:1 e2e-dry-run:1 \
	e2e-reached-openstack:1 e2e-foreign:4 e2e-serial:1 e2e-plugin:2 e2e-kind-datapath:3 e2e-openstack:2 kubetest2:1 \
	e2e-aws-lb:1 e2e-aws:1 e2e-vsphere:2 unit:4 e2e-routes-watch:1 e2e:2 e2e-coordinated:2 \
	e2e-image:1 e2e-incluster:1 \
	wait compare
test:
	@MAKE='$(MAKE)' hack/make-test.sh $(ARTIFACTS) $(TEST_CAPACITY) $(TEST_TARGETS)

# A cluster make up leaves runs no leader-migration spec (each brings up its
# own managers): their builds are left out, which on empty caches would
# hold make up for minutes (the older CCM's).
up: LABEL_FILTER = !leader-migration
up: binaries
	$(BIN)/ccm-harness up --name $(NAME) --provider=$(PROVIDER) --ccm-version='$(CCM_VERSION)' --ccm-image='$(CCM_IMAGE)' \
		--provider-config='$(PROVIDER_CONFIG)' --nodes=$(NODES) --kubernetes-version='$(K8S_VERSION)'

down: $(BIN)/ccm-harness
	$(BIN)/ccm-harness down --name $(NAME)

clean:
	-[ -x $(BIN)/ccm-harness ] && $(BIN)/ccm-harness down --name $(NAME)
	rm -rf _output _artifacts

# The cache of upstream builds lives outside the repository.
clean-cache:
	rm -rf "$${CCM_HARNESS_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/ccm-harness}"

# The harness as a kubetest2 deployer (kubetest2-deployer/, a module of its
# own: kubetest2's dependencies stay out of the harness's build). Its test
# builds kubetest2 and its exec and ginkgo testers from the pinned module,
# then runs kubetest2 ccm-harness --build --up --test --down for real.
kubetest2:
	@cd kubetest2-deployer && test -z "$$(gofmt -l .)" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	@# -count=1: the test's inputs are the binaries it builds and runs,
	@# which go test's result cache does not see.
	cd kubetest2-deployer && $(GO) vet ./... && $(GO) test -count=1 -v -timeout 20m ./...
