# ccm-harness: conformance and migration tests for cloud-controller-managers.
#
#   make e2e                     the main job: fake provider, local cluster
#   make e2e PROVIDER=vsphere    the real vSphere CCM against vcsim
#   make e2e LABEL_FILTER=zone   a Ginkgo label filter
#   make test                    unit tests, every provider's suite and the negative controls
#   make up / make down          a cluster left running for kubectl

PROVIDER     ?= fake
# CCM_VERSION picks another pinned version of the provider's CCM
# (cluster/binaries/versions.go), e.g. PROVIDER=vsphere CCM_VERSION=v1.30.1.
CCM_VERSION  ?=
CLUSTER      ?= local
LABEL_FILTER ?=
# PROVIDER_CONFIG is the provider's config file (see the provider's Config).
PROVIDER_CONFIG ?=
ARTIFACTS    ?= $(CURDIR)/_artifacts
NAME         ?= ccm-harness
GO           ?= go

BIN          := $(CURDIR)/_output/bin
GO_SOURCES   := $(shell find . -name '*.go' -not -path './_*') go.mod go.sum
UNIT_PKGS     = $(shell $(GO) list ./... | grep -v -e '/e2e$$' -e '/e2e/controls$$')

export ARTIFACTS

.PHONY: all build binaries e2e e2e-vsphere test unit vet controls jobs up down clean clean-cache

all: build

$(BIN)/ccm-harness: $(GO_SOURCES)
	$(GO) build -o $@ ./cmd/ccm-harness

$(BIN)/e2e.test: $(GO_SOURCES)
	$(GO) test -c -o $@ ./e2e

# Upstream components go to the cache (built once per version), the
# harness's own binaries to _output/bin: what a cluster of PROVIDER runs.
binaries: $(BIN)/ccm-harness
	$(BIN)/ccm-harness binaries --provider=$(PROVIDER) --ccm-version='$(CCM_VERSION)'

build: binaries $(BIN)/e2e.test

e2e: build
	cd $(CURDIR) && $(BIN)/e2e.test -ginkgo.v -ginkgo.no-color \
		-ginkgo.label-filter='$(LABEL_FILTER)' -ginkgo.timeout=1h \
		--provider=$(PROVIDER) --ccm-version='$(CCM_VERSION)' --cluster=$(CLUSTER) --artifacts=$(ARTIFACTS) \
		--provider-config='$(PROVIDER_CONFIG)' 

# The vSphere suite in make test, its artifacts beside the default run's:
# the newest pinned CCM as configured by default, then the older one with
# dual-stack guests and inline credentials.
e2e-vsphere:
	$(MAKE) e2e PROVIDER=vsphere CCM_VERSION= PROVIDER_CONFIG= ARTIFACTS=$(ARTIFACTS)/vsphere
	$(MAKE) e2e PROVIDER=vsphere CCM_VERSION=v1.30.1 PROVIDER_CONFIG=$(CURDIR)/e2e/testdata/vsphere-dual-stack.yaml \
		ARTIFACTS=$(ARTIFACTS)/vsphere-v1.30.1

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

unit: build
	$(GO) test $(UNIT_PKGS)

# Every scenario run against a deliberately broken cloud must fail, naming
# the node, the expected and the actual value.
controls: build
	$(BIN)/ccm-harness binaries --provider=vsphere --ccm-version= >/dev/null
	E2E_TEST=$(BIN)/e2e.test $(GO) test -v -timeout 40m ./e2e/controls

# The Prow job configs load with Prow's own strict loader (a module of its
# own: Prow's dependencies stay out of the harness's build).
jobs:
	cd jobs && $(GO) vet ./... && $(GO) test ./...

test: vet unit jobs e2e e2e-vsphere controls

up: binaries
	$(BIN)/ccm-harness up --name $(NAME) --provider $(PROVIDER) --ccm-version='$(CCM_VERSION)'

down: $(BIN)/ccm-harness
	$(BIN)/ccm-harness down --name $(NAME)

clean:
	-[ -x $(BIN)/ccm-harness ] && $(BIN)/ccm-harness down --name $(NAME)
	rm -rf _output _artifacts

# The cache of upstream builds lives outside the repository.
clean-cache:
	rm -rf "$${CCM_HARNESS_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/ccm-harness}"
