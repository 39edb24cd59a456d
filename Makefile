# minicluster-fn — build, run the example, test.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
VERSION ?= v0.2.0-dev
# IMAGE_REPOSITORY:VERSION is the image `make image` tags and `minicluster-fn version` prints.
IMAGE_REPOSITORY ?= ghcr.io/minicluster-fn/minicluster-fn
# The commit the binary says it was built from (`minicluster-fn version`); empty outside git.
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -s -w -X github.com/minicluster-fn/minicluster-fn/internal/version.Version=$(VERSION) \
  -X github.com/minicluster-fn/minicluster-fn/internal/version.Commit=$(COMMIT) \
  -X github.com/minicluster-fn/minicluster-fn/internal/version.ImageRepository=$(IMAGE_REPOSITORY)
KUSTOMIZE_VERSION := v5.8.2
KUSTOMIZE := $(BIN)/kustomize
FN := $(BIN)/minicluster-fn
KPT := $(BIN)/kpt

# The Go toolchain of every go command here (tools/toolchain.sh says why).
export GOTOOLCHAIN := $(shell sed -n 's/^export GOTOOLCHAIN=//p' tools/toolchain.sh)
export GOFLAGS := -buildvcs=false
# Go's garbage collector at GOGC=400 for every Go process of every target, unless GOGC is set:
# the compilers and linkers, the tests, the live cluster's daemons. Each heap grows up to five
# times its live size between collections instead of twice, memory this 24 GiB machine has to
# spare, and collects less often: a cold `go build -o /dev/null` (empty GOCACHE) of
# cmd/minicluster-fn took 49-61 s wall at 400 against 62-77 s at 100, of kpt 141 s against 162 s
# (257 CPU-s against 296, peak RSS 1.1 GB against 1.0; docs/testing.md).
export GOGC ?= 400
# The root module's go commands (the binary, go vet, staticcheck, the tests, the benchmarks, the
# fuzzers) all without cgo and with -trimpath, the flags of the static binary and of the release's:
# one compile of the dependencies serves them all. The binary's flags and go test's defaults
# differed (cgo on), so a cold run compiled client-go and the rest twice; with an empty GOCACHE,
# the binary, go vet ./... and the test binaries took 537 CPU-s with the two flag sets and 404
# with one (docs/testing.md). make race keeps cgo, which the race detector needs. kustomize, kpt,
# tests/operator, tests/live and tools/release are built with them too: the standard library is
# then compiled once, and their modules' packages that the root module compiles at the same
# version are reused (kustomize after the binary: 10.8 CPU-s against 87.2 with go's defaults).
ROOT_GO = CGO_ENABLED=0 GOFLAGS='$(GOFLAGS) -trimpath' $(GO)
# go test of the root module's packages without go test's own vet: make lint runs go vet ./... on
# the same packages (their tests included) with every analyzer, a superset of go test's, and make
# check and make test run lint before them. go test's vet is a second vet with other flags, which
# type-checks every dependency again for its facts: with an empty GOCACHE it took 79 CPU-s after
# the compile of the unit tests and 39 after that of the race tests (docs/testing.md).
ROOT_TEST = $(ROOT_GO) test -vet=off

.PHONY: all deps build run check test test-all hygiene unit race integration operator-diff fuzz lint bench bench-once clean image container-test container-test-if-podman \
  release release-test \
  cluster-up cluster-down fluxcd-controllers fluxcd-up fluxcd-down argocd-up argocd-down argocd-components operator-up operator-down kueue-components kueue-up kueue-down live bench-live bench-sidebyside \
  bench-keygen-before-after

all: build

## deps: the Debian packages make test uses (root or sudo; tools/deps.sh; make test runs it first)
deps:
	bash tools/deps.sh

## build: the static minicluster-fn binary in bin/
build:
	$(ROOT_GO) build -ldflags '$(LDFLAGS)' -o $(FN) ./cmd/minicluster-fn

# The tools' targets are relative paths, so that `make bin/kustomize` and `make bin/kpt` work; the
# recipes and tests get absolute paths (KUSTOMIZE, KPT), since the tests run in other directories.

## kustomize, pinned, installed into bin/ with go install
bin/kustomize:
	GOBIN=$(BIN) $(ROOT_GO) install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)

## kpt for the e2e tests, built from the pinned tools module (go.sum committed, so a fresh module
## cache needs no GONOSUMDB); kpt prints the version set here
bin/kpt: tools/kpt/go.mod tools/kpt/go.sum
	cd tools/kpt && $(ROOT_GO) build -ldflags "-X github.com/GoogleContainerTools/kpt/run.version=$$($(GO) list -m -f '{{.Version}}' github.com/GoogleContainerTools/kpt)" \
	  -o $(KPT) github.com/GoogleContainerTools/kpt

## run: render the hello-world example with kustomize, as a user would. Only the manifests go to
## stdout (`make run > out.yaml` is valid YAML): the builds run quietly, their messages on stderr.
run:
	@$(MAKE) --no-print-directory build bin/kustomize >&2
	@$(KUSTOMIZE) build --enable-alpha-plugins --enable-exec examples/hello-world

## lint: gofmt, go vet, staticcheck (pinned in the tools module tools/lint/go.mod) and shellcheck of
## the project's own scripts (the script templates are checked rendered, in tests/outputcheck)
lint:
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(ROOT_GO) vet ./...
	$(ROOT_GO) tool -modfile=tools/lint/go.mod staticcheck ./...
	@if command -v shellcheck >/dev/null; then \
	  set -x; shellcheck -x $$(git ls-files '*.sh' .ci/run | grep -v -e '^generators/templates/' -e '/testdata/'); \
	else echo "lint: SKIPPED shellcheck of the project's scripts: shellcheck is not installed (Debian package shellcheck)"; fi

## check: the inner loop (at most 90 s warm, docs/testing.md): lint, and every test that needs no
## root, cluster, API server or podman: unit and golden tests, the checks of the generated scripts,
## and the end-to-end render tests with the real kustomize and kpt
check: lint unit

## test: everything CI runs, starting with deps, so a first run on a fresh machine is CI's run (the
## live tests skip loudly where the machine cannot run a kubelet, and fail there on CI). The steps
## run one after another (lint and unit are make check) and end with the phase report
## (tests/phases/run.sh): each step's, build's, test package's and live test's seconds, also when a
## step fails. The steps of TEST_BESIDE only compute (fuzzing, cross-compiling): they run beside
## the others at the lowest priority once the builds ahead have ended, in the CPU time the live
## tests leave idle while they wait for pods, and the run waits for them at its end.
TEST_STEPS := deps hygiene lint unit race bench-once integration operator-diff container-test-if-podman live
TEST_BESIDE := release-test fuzz
test:
	@MAKE='$(MAKE)' bash tests/phases/run.sh 'make test' $(addprefix --beside ,$(TEST_BESIDE)) $(TEST_STEPS)

## test-all: make test with the live tests that are exhaustive or comparative as well (the operator
## side by side on the whole runnable corpus and with the view from an image volume, the
## side-by-side fault table): run it before resolving a change to generated objects, scripts,
## GitOps outputs or the live harness (docs/testing.md)
test-all: export MINICLUSTER_FN_LIVE_ALL := 1
test-all:
	@MAKE='$(MAKE)' bash tests/phases/run.sh 'make test-all' $(addprefix --beside ,$(TEST_BESIDE)) $(TEST_STEPS)

## hygiene: no tracked file over 1 MB, and `go mod tidy -diff` clean in every module
hygiene:
	bash .ci/hygiene.sh

## unit: unit and golden tests, and end-to-end tests with the real kustomize and kpt
# Most unit tests wait on processes (the generated scripts in their sandboxes, kustomize, kpt):
# at go test's default, as many at once as there are cores, the generators' tests took 56 s for
# 37 CPU-s on 2 cores; 8 at once, 30 s.
UNIT_PARALLEL ?= 8
unit: build bin/kustomize bin/kpt
	MINICLUSTER_FN=$(FN) KUSTOMIZE=$(KUSTOMIZE) KPT=$(KPT) $(ROOT_TEST) -count=1 -parallel $(UNIT_PARALLEL) ./...

## race: MiniClusters are decoded, validated and rendered in parallel: the race detector over those
## paths (in make test, not make check: its build alone takes minutes cold)
# Without go test's vet, as ROOT_TEST: no file of the root module depends on cgo or the race tag,
# so make lint's go vet (no cgo) has vetted exactly these files.
race:
	CGO_ENABLED=1 $(GO) test -vet=off -race -count=1 ./api/... ./fn

## integration: tests against a real kube-apiserver (separate module tests/integration; the first
## run took 11 min in a cold CI run, module downloads included, and ~3 GB)
# With the root module's flags, which tools/node and tools/fluxcd build with too, so that
# tests/cluster/build-node.sh and build-fluxcd.sh reuse the compiled Kubernetes packages (the module
# versions match too; .ci/hygiene.sh) and all of them the standard library the root module's tests
# compiled. The in-process API server of a -trimpath build finds its certificate fixtures in the
# module cache (tests/integration/main_test.go).
INTEGRATION_GO = $(ROOT_GO)
# The in-process API server is stamped with the Kubernetes version it is built from, as
# build-node.sh stamps the node's (check reads /version; unstamped it says v0.0.0-master).
integration: build bin/kustomize
	cd tests/integration && k8s=$$($(GO) list -m -f '{{.Version}}' k8s.io/kubernetes) && minor=$${k8s#v1.} && \
	  MINICLUSTER_FN=$(FN) KUSTOMIZE=$(KUSTOMIZE) $(INTEGRATION_GO) test -count=1 \
	  -ldflags "-X k8s.io/component-base/version.gitVersion=$$k8s -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$${minor%%.*}" ./...

## operator-diff: the operator's own reconciler (built once from ../shared/vendor into
## $${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/operator-oracle-<hash>; ~4 min CPU cold) against
## our render, on every example, corpus file and tests/operator/testdata/fields (module tests/operator)
operator-diff: build
	cd tests/operator && MINICLUSTER_FN=$(FN) $(ROOT_GO) test -count=1 -timeout 30m ./...

# The image reference the built binary writes into keygen Jobs: `make image` tags exactly this.
FN_IMAGE = $$($(FN) version | sed -n 's/^keygen image: //p')

## image: the container image (Containerfile, FROM scratch) built with podman, no Docker needed
image: build
	@command -v podman >/dev/null || { echo "image: podman not found (Debian: apt-get install podman runc)" >&2; exit 1; }
	rm -rf $(BIN)/image && mkdir -p $(BIN)/image
	cp $(FN) $(BIN)/image/minicluster-fn
	printf 'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' > $(BIN)/image/passwd
	printf 'nogroup:x:65534:\n' > $(BIN)/image/group
	podman build --network=none --build-arg VERSION=$(VERSION) -f Containerfile -t "$(FN_IMAGE)" $(BIN)/image
	@echo "image: built $(FN_IMAGE)"

# podman settings for the container tests: runc and explicit ulimits. On the CI VMs (cgroup v1,
# no CAP_SYS_RESOURCE) crun cannot start containers and runc must not raise rlimits.
CONTAINERS_CONF_TEST := $(BIN)/containers.conf
$(CONTAINERS_CONF_TEST):
	mkdir -p $(BIN)
	printf '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n[engine]\nruntime = "runc"\n' > $@

## container-test: the image as a kustomize/kpt container function, and as the keygen Job's
## container against the test API server (podman)
container-test: image bin/kustomize bin/kpt $(CONTAINERS_CONF_TEST)
	CONTAINERS_CONF=$(CONTAINERS_CONF_TEST) MINICLUSTER_FN=$(FN) MINICLUSTER_FN_IMAGE="$(FN_IMAGE)" KUSTOMIZE=$(KUSTOMIZE) KPT=$(KPT) \
	  $(ROOT_TEST) -count=1 -run '^TestContainer' ./tests/e2e/
	cd tests/integration && CONTAINERS_CONF=$(CONTAINERS_CONF_TEST) MINICLUSTER_FN=$(FN) MINICLUSTER_FN_IMAGE="$(FN_IMAGE)" \
	  $(INTEGRATION_GO) test -count=1 -run '^TestAPIServer$$/^keygen_image$$' ./...

## container-test-if-podman: container-test, or a clear skip without podman
container-test-if-podman:
	@if command -v podman >/dev/null && command -v runc >/dev/null; then $(MAKE) --no-print-directory container-test; \
	  else echo "container-test: SKIPPED: podman and runc are not installed (Debian: apt-get install podman runc)"; fi

## cluster-up: a real Kubernetes of one node (etcd, control plane, kubelet, containerd, CNI bridge,
## kube-proxy, CoreDNS) as host processes, for the live tests and for trying things by hand; needs
## root. kubeconfig: $$MINICLUSTER_FN_CLUSTER_STATE/kubeconfig (default /var/tmp/minicluster-fn-cluster).
## The first run builds the node binaries from tools/node (15-40 min cold; cached in
## $$MINICLUSTER_FN_CACHE, default /var/cache/minicluster-fn). Load images with tests/cluster/load-image.sh.
## FLUXCD=1 also starts Flux CD's controllers (make fluxcd-up). NODES=N (1-4): N nodes, each a
## kubelet with its own containerd, bridge and pod network (tests/cluster/node.sh adds, stops,
## starts and removes them).
cluster-up:
	tests/cluster/up.sh $(if $(NODES),--nodes $(NODES)) $(if $(filter 1,$(FLUXCD)),--fluxcd)

## fluxcd-controllers: Flux CD's source-controller and kustomize-controller v1.9.6 (pinned in the
## tools module tools/fluxcd), their CRDs, and the flux CLI v2.9.5 (tools/fluxcd-cli, for
## render.sh -p), built once per machine into $${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/fluxcd-<key>
## (about 5 min and 1.7 GB cold), for running Flux CD against the live cluster; prints that directory
fluxcd-controllers:
	@tests/cluster/build-fluxcd.sh

## fluxcd-up: those controllers as host processes against the running cluster
## (tests/cluster/fluxcd-up.sh): their CRDs, namespace flux-system, metrics, health and artifact
## ports 18090-18094 on 127.0.0.1, logs in $$MINICLUSTER_FN_CLUSTER_STATE/log
fluxcd-up:
	tests/cluster/fluxcd-up.sh

## fluxcd-down: stops exactly the controllers fluxcd-up started; the cluster keeps running
## (cluster-down stops them too)
fluxcd-down:
	tests/cluster/fluxcd-down.sh

## argocd-components: Argo CD v3.6.1's application-controller, repo-server, cmp-server and
## git-ask-pass (one binary from the tools module tools/argocd, kept as *.src files, built with Go
## 1.27.3, which the go command fetches), their CRDs and the repo server's wrapper scripts, built
## once per machine into $${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/argocd-<key> (about
## 3.5-5 min and 1.8 GB cold); prints that directory
argocd-components:
	@tests/cluster/build-argocd.sh

## argocd-up: those components as host processes against the running cluster, with Debian's redis
## (tests/cluster/argocd-up.sh): their CRDs, namespace argocd with argocd-cm, argocd-secret and the
## AppProject default; the repo server and the plugin sidecar get bin/kustomize and
## bin/minicluster-fn on their PATH; ports 18097-18100 on 127.0.0.1, logs in $$MINICLUSTER_FN_CLUSTER_STATE/log
argocd-up: build bin/kustomize
	tests/cluster/argocd-up.sh

## argocd-down: stops exactly the components argocd-up started; the cluster keeps running
## (cluster-down stops them too)
argocd-down:
	tests/cluster/argocd-down.sh

## operator-up: the Flux Framework operator's manager, built once per machine from
## ../shared/vendor with its real keygen (tests/cluster/build-operator.sh, cached in
## $${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/operator-<key>), as a host process against the
## running cluster with its CRD and the RBAC of its own config/ (tests/cluster/operator-up.sh)
operator-up:
	tests/cluster/operator-up.sh

## operator-down: stops exactly the manager operator-up started; the cluster keeps running
## (cluster-down stops it too)
operator-down:
	tests/cluster/operator-down.sh

## kueue-components: builds Kueue's manager once per machine (tools/kueue, Kueue's controllers,
## scheduler and webhooks with the batch/Job integration; tests/cluster/build-kueue.sh, cached in
## $${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/kueue-<key>); prints that directory
kueue-components:
	@tests/cluster/build-kueue.sh

## kueue-up: Kueue's manager as a host process against the running cluster, with its CRDs and its
## webhooks on 127.0.0.1:18101, acting in namespaces labelled minicluster-fn.test/kueue=true
## (tests/cluster/kueue-up.sh; docs/kueue.md)
kueue-up:
	tests/cluster/kueue-up.sh

## kueue-down: stops exactly the manager kueue-up started and removes its webhooks; the cluster
## keeps running (cluster-down stops it too)
kueue-down:
	tests/cluster/kueue-down.sh

## cluster-down: stops exactly what cluster-up started and checks that nothing is left behind
cluster-down:
	tests/cluster/down.sh

## live: generated MiniClusters with real Flux Framework brokers on that cluster (tests/live): brings
## the cluster up (or uses a running one), builds and loads the stand-in images, runs, and takes a
## cluster it started down again, also when a test fails or the binary dies (with-cluster.sh).
## Skips loudly where the machine cannot run a kubelet (MINICLUSTER_FN_LIVE_REQUIRE=1: fails instead).
## LIVE_PARALLEL: how many tests (each with MiniClusters in namespaces of their own) act on the
## cluster at once; they spend most of their time waiting for the node, so more than the cores. Every
## test is parallel and takes one of these slots once what it needs is built (tests/live/slots_test.go),
## so go test's own -parallel only has to be above the number of tests.
LIVE_PARALLEL ?= 4
live: build bin/kustomize bin/kpt
	cd tests/live && MINICLUSTER_FN=$(FN) KUSTOMIZE=$(KUSTOMIZE) KPT=$(KPT) MINICLUSTER_FN_LIVE_PARALLEL=$(LIVE_PARALLEL) \
	  ../cluster/with-cluster.sh env $(ROOT_GO) test -count=1 -parallel 256 -timeout 75m -v ./...

## release: the release of VERSION (a semantic version with a leading v) from the commit checked
## out, into dist/ (replaced): the binaries for linux and darwin on amd64 and arm64 in .tar.gz
## archives, a CycloneDX SBOM of each, the linux/amd64 and linux/arm64 image in an OCI archive,
## checksums.txt. Reproducible: every timestamp is the commit's (tools/release; docs/releasing.md)
release:
	@case '$(VERSION)' in *-dev) echo "release: VERSION=$(VERSION) is a development version; say which release: make release VERSION=vX.Y.Z" >&2; exit 2;; esac
	cd tools/release && $(GO) run . -version '$(VERSION)' -commit "$$(git rev-parse HEAD)" -date "$$(git log -1 --format=%ct)" \
	  -image-repository '$(IMAGE_REPOSITORY)' -repo $(CURDIR) -dist $(CURDIR)/dist

## release-test: make release's tests (tools/release): the platforms and static binaries, the
## checksums, the SBOMs, the image's platforms and labels, and two releases byte for byte the same
# -timeout 60m here and in fuzz: make test runs both beside the live tests at the lowest priority
# (TEST_BESIDE), where they may wait long for the CPU; go test's default would end them at 10 min.
release-test:
	cd tools/release && $(ROOT_GO) vet ./... && $(ROOT_GO) test -vet=off -count=1 -timeout 60m ./...

## bench-once: every Go benchmark once, so they keep compiling and running (no timings asserted)
bench-once:
	$(ROOT_TEST) -count=1 -run '^$$' -bench . -benchtime=1x ./...

## fuzz: each fuzz target for a bounded number of runs (about 90 s in all on a 2-core machine).
## Counts, not durations: go1.26's fuzzer can fail a target with a bare "context deadline
## exceeded" when a -fuzztime duration ends while a worker runs (golang/go#75804, fixed in 1.27),
## which a count has no deadline to race. New inputs are minimized for a few runs only: every run
## of FuzzRender starts bash.
FUZZTIME_DECODE ?= 200000x
FUZZTIME_RENDER ?= 50000x
fuzz:
	$(ROOT_TEST) -timeout 60m -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME_DECODE) -fuzzminimizetime 20x ./api/v1alpha2
	$(ROOT_TEST) -timeout 60m -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(FUZZTIME_RENDER) -fuzzminimizetime 20x ./fn

## bench: Go benchmarks, whole-process figures of the function against a trivial kyaml
## fn/framework function measured in the same run (the budget is in tests/bench/process-time.sh),
## status of 1,000 MiniClusters in one namespace of a real API server with a view token
## (tests/integration's BenchmarkStatus, budget 2 s), then the live cluster's: bench-live and
## bench-sidebyside
bench: build bin/kustomize
	$(ROOT_TEST) -run '^$$' -bench . -benchmem ./fn/ ./generators/ ./impact/
	bash tests/bench/process-time.sh $(FN)
	set -o pipefail; cd tests/integration && MINICLUSTER_FN=$(FN) $(INTEGRATION_GO) test -count=1 -run '^$$' -bench '^BenchmarkStatus$$' -benchtime=5x -v ./... \
	  | grep -E '^(Benchmark|ok|FAIL|PASS)|status_test.go'
	$(MAKE) --no-print-directory bench-live
	$(MAKE) --no-print-directory bench-sidebyside

## bench-live: time to ready of hello-world (size 4) on the live cluster, LIVE_BENCH_RUNS runs:
## tests/live's BenchmarkTimeToReady (docs/benchmarks.md). Like make live, it brings the cluster up
## (or uses a running one) and skips loudly where the machine cannot run a kubelet.
LIVE_BENCH_RUNS ?= 5
bench-live: build bin/kustomize bin/kpt
	cd tests/live && MINICLUSTER_FN=$(FN) KUSTOMIZE=$(KUSTOMIZE) KPT=$(KPT) \
	  ../cluster/with-cluster.sh env $(ROOT_GO) test -count=1 -run '^$$' -bench '^BenchmarkTimeToReady$$' -benchtime=$(LIVE_BENCH_RUNS)x -timeout 45m ./...

## bench-sidebyside: the Flux Framework operator and our render side by side on the live cluster:
## hello-world at each size of LIVE_BENCH_SIZES, LIVE_BENCH_RUNS interleaved runs per size, apply ->
## all ranks joined and -> Job complete on each side (the operator; ours with the view copied, and
## with it from an image volume), with the floors of bare pods and of brokers alone measured in the
## same runs: tests/live's BenchmarkSideBySide (docs/benchmarks.md). Like
## bench-live it brings the cluster up (or uses a running one) and skips loudly where the machine
## cannot run a kubelet; it starts the operator as make operator-up does unless it runs.
## NODES=N (2-4) runs it on a cluster of N nodes that it brings up (tests/cluster/up.sh --nodes;
## a cluster already running is used as it is), at sizes N, 2N and 4N unless LIVE_BENCH_SIZES says.
LIVE_BENCH_SIZES ?= $(if $(NODES),$(NODES) $(shell echo $$(($(NODES) * 2))) $(shell echo $$(($(NODES) * 4))),4 8 16 32)
bench-sidebyside: build bin/kustomize bin/kpt
	cd tests/live && MINICLUSTER_FN=$(FN) KUSTOMIZE=$(KUSTOMIZE) KPT=$(KPT) LIVE_BENCH_SIZES='$(LIVE_BENCH_SIZES)' \
	  $(if $(NODES),MINICLUSTER_FN_CLUSTER_NODES=$(NODES)) \
	  ../cluster/with-cluster.sh env $(ROOT_GO) test -count=1 -run '^$$' -bench '^BenchmarkSideBySide$$' -benchtime=$(LIVE_BENCH_RUNS)x -timeout 90m ./...

## bench-keygen-before-after: the code of commit BEFORE (default 3e38822, before the keygen moved
## into the view image) beside the current code in one invocation of bench-live (LIVE_BENCH_RUNS
## runs) and one of bench-sidebyside (sizes BEFORE_SIZES, default 4 16; BEFORE_SIDEBYSIDE_RUNS runs,
## default 3), interleaved run by run, the keygen pod's steps broken down:
## tests/bench/keygen-before-after.sh builds that commit's binary and image as its Makefile did
## (docs/benchmarks.md). Like bench-live it brings the cluster up and down.
BEFORE ?= 3e38822
BEFORE_SIZES ?= 4 16
BEFORE_SIDEBYSIDE_RUNS ?= 3
bench-keygen-before-after:
	LIVE_BENCH_RUNS='$(LIVE_BENCH_RUNS)' BEFORE_SIZES='$(BEFORE_SIZES)' BEFORE_SIDEBYSIDE_RUNS='$(BEFORE_SIDEBYSIDE_RUNS)' \
	  tests/bench/keygen-before-after.sh '$(BEFORE)'

clean:
	rm -rf $(BIN)
