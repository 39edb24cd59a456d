# minicluster-fn — build, run the example, test.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
VERSION ?= v0.1.0-dev
LDFLAGS := -s -w -X github.com/minicluster-fn/minicluster-fn/internal/version.Version=$(VERSION)
KUSTOMIZE_VERSION := v5.8.2
KUSTOMIZE := $(BIN)/kustomize
FN := $(BIN)/minicluster-fn

export GOTOOLCHAIN := local
export GOFLAGS := -buildvcs=false

.PHONY: all build run test unit lint bench clean

all: build

## build: the static minicluster-fn binary in bin/
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(FN) ./cmd/minicluster-fn

## kustomize, pinned, installed into bin/ with go install
$(KUSTOMIZE):
	GOBIN=$(BIN) $(GO) install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)

## run: render the hello-world example with kustomize, as a user would
run: build $(KUSTOMIZE)
	$(KUSTOMIZE) build --enable-alpha-plugins --enable-exec examples/hello-world

## lint: gofmt and go vet
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## test: lint, unit and golden tests, and end-to-end tests with the real kustomize
test: build $(KUSTOMIZE) lint
	MINICLUSTER_FN=$(FN) KUSTOMIZE=$(KUSTOMIZE) $(GO) test -count=1 ./...

## bench: Go benchmarks and whole-process timings of the function
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./fn/ ./generators/
	bash tests/bench/process-time.sh $(FN)

clean:
	rm -rf $(BIN)
