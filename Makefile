# Converge — build, test, benchmark.
GO ?= go
FUZZTIME ?=
FUZZMINIMIZE ?= 2000x
PKG := github.com/converge-dev/converge

.PHONY: all build test deps compat crdgen envtest-compare peer-bin kubebuilder-accept vet fmt-check unit race fuzz bench bench-against-commit e2e conformance conformance-smoke clean

all: build

## build: the converge binary in bin/
build:
	$(GO) build -o bin/converge ./cmd/converge

## test: everything CI runs (vet, gofmt, unit + behaviour suites, race on the framework, short fuzzing)
test: deps vet fmt-check race unit compat fuzz conformance-smoke

## deps: what the tests need that a fresh machine lacks (containerd and runc from Debian)
deps:
	./hack/ci-deps.sh

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## race: the framework under the race detector
race:
	$(GO) test -race -count=1 ./framework/...

## unit: every other package (built-ins, CRDs, CLI, testenv, kubectl end to end)
unit:
	$(GO) test -count=1 $$($(GO) list ./... | grep -v '/framework/')

## compat: unmodified client-go and controller-runtime programs, and Helm 4 (install, upgrade, rollback),
## against Converge (the bench module)
compat:
	cd bench && $(GO) vet ./... && $(GO) test -count=1 ./compat/... ./helm/...

## crdgen: `converge operator generate` against controller-gen (built from the bench module's tool
## directive) on the scaffolded operator's, the postgres operator's and the marker corpus' types (also in compat)
crdgen:
	cd bench && $(GO) test -count=1 -v -run TestGenerateMatchesControllerGen ./compat/crdgen/

## envtest-compare: the memcached envtest suite (bench/compat/envtestsuite) and the kubebuilder project's webhook
## suite (TestKubebuilderProject, as kubebuilder-accept) under envtest with kube-apiserver and etcd built from the
## k8s.io/kubernetes and go.etcd.io/etcd modules (bench/envtestbin; cold: many minutes) and under converge testenv;
## prints the median wall times for docs/PERFORMANCE.md. Not part of test.
envtest-compare: peer-bin
	cd bench/envtestbin && \
	  GOFLAGS=-mod=mod $(GO) build -o ../.envtest-bin/etcd go.etcd.io/etcd/server/v3
	cd bench && ENVTEST_ASSETS=$$PWD/.envtest-bin $(GO) test -tags envtestcompare,kubebuilder -count=1 -v -timeout 40m \
	  -run 'TestEnvtestWallTimes|TestKubebuilderProject' ./compat/envtestsuite/

## peer-bin: kube-apiserver v1.34 built from the k8s.io/kubernetes module (bench/envtestbin, staging modules pinned by
## replace) into bench/.envtest-bin, the peer of bench/peer's BenchmarkKubeAPIServer (make bench; cold: many minutes)
peer-bin:
	cd bench/envtestbin && GOFLAGS=-mod=mod $(GO) build -o ../.envtest-bin/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver

## kubebuilder-accept: a kubebuilder v4 project (kubebuilder installed from sigs.k8s.io/kubebuilder/v4; an API in
## two versions with defaulting, validating and conversion webhooks) gets its manifests from converge operator
## generate (equal to its make manifests) and its envtest suites, the controller's and the webhook's, pass unchanged
## under converge testenv -- go test ./... (several minutes; not part of test)
kubebuilder-accept:
	cd bench && $(GO) test -tags kubebuilder -count=1 -v -timeout 20m -run TestKubebuilderProject ./compat/envtestsuite/

## fuzz: each fuzz target briefly. Budgets are execution counts (N x), about
## 3 s each on 2 cores, not durations: with a duration, Go 1.26's fuzz
## coordinator can report its own deadline as a failure ("context deadline
## exceeded", no crasher; go.dev/issue/75804, fixed in Go 1.27). Minimizing a
## new input is capped by count too, so a large one cannot stall the run.
## FUZZTIME=30s (or 1000000x) overrides every budget for a longer local run.
## The bench module's differential targets (framework/patch against the
## library the Kubernetes API server uses) run last, from bench/.
fuzz:
	@set -e; for spec in \
	  framework/api/labels:FuzzParse:40000 \
	  framework/api/fields:FuzzParse:100000 \
	  framework/patch:FuzzJSONPatch:100000 \
	  framework/patch:FuzzMergePatch:100000 \
	  framework/patch:FuzzStrategicMergePatch:80000 \
	  framework/apiserver/protobuf:FuzzDecode:150000 \
	  framework/api:FuzzDecodeMapFast:60000 \
	  framework/api:FuzzDecodeValue:150000 \
	  framework/api:FuzzDecodeHead:60000 \
	  framework/api/validation:FuzzNameMatchers:40000 \
	  framework/apiserver/registry:FuzzCanonicalizeTypedFast:20000 \
	  framework/apiserver/fieldmanager:FuzzParseFieldsV1:20000 \
	  framework/apiserver/fieldmanager:FuzzApplyTwoManagers:5000 \
	  framework/apiserver/h2serve:FuzzConn:60000 \
	  framework/tracing/otlpexport:FuzzAppendRequest:15000; do \
	  pkg=$${spec%%:*}; rest=$${spec#*:}; target=$${rest%%:*}; budget=$${rest##*:}x; \
	  if [ -n "$(FUZZTIME)" ]; then budget=$(FUZZTIME); fi; \
	  echo "fuzz $$pkg $$target ($$budget)"; \
	  $(GO) test -run='^$$' -fuzz="^$$target\$$" -fuzztime=$$budget -fuzzminimizetime=$(FUZZMINIMIZE) ./$$pkg; \
	done
	@set -e; for target in FuzzJSONPatchAgainstEvanphx FuzzMergePatchAgainstEvanphx; do \
	  budget=30000x; if [ -n "$(FUZZTIME)" ]; then budget=$(FUZZTIME); fi; \
	  echo "fuzz bench/compat/patch $$target ($$budget)"; \
	  (cd bench && $(GO) test -run='^$$' -fuzz="^$$target\$$" -fuzztime=$$budget -fuzzminimizetime=$(FUZZMINIMIZE) ./compat/patch); \
	done

## bench: run the side-by-side benchmarks and regenerate the generated section of docs/PERFORMANCE.md (curated text kept)
bench:
	./hack/bench.sh

## bench-against-commit: creates/s of the working tree's `converge apiserver` against COMMIT's (default bbe7e82^,
## before managedFields; issue 23), both secure, side by side (bench/commits)
COMMIT ?= bbe7e82^
bench-against-commit:
	./hack/bench-against-commit.sh '$(COMMIT)'

## conformance: every upstream Kubernetes [Conformance] spec (e2e.test of
## k8s.io/kubernetes v1.34.4, built and cached by the conformance module),
## Serial and Slow included, against a default `converge up` whose node runs
## pods on containerd, the upstream images served from a local registry;
## writes docs/CONFORMANCE.md. Installs what it needs first (hack/ci-deps.sh).
## Not part of test (≈35 of at most 45 minutes on 2 cores). FOCUS, SKIP,
## PROCS, TIMEOUT (minutes) and RUNTIME (containerd, or process: no images
## but pause) narrow it, e.g.
##   make conformance FOCUS='\[sig-api-machinery\].*\[Conformance\]' SKIP='\[Slow\]|\[Serial\]'
conformance: deps
	FOCUS='$(FOCUS)' SKIP='$(SKIP)' PROCS='$(PROCS)' TIMEOUT='$(TIMEOUT)' RUNTIME='$(RUNTIME)' NOTE='$(NOTE)' ./hack/conformance.sh

## conformance-smoke: the CI-sized subset of conformance (part of test): about 40 API-level sig-api-machinery
## [Conformance] specs that need no image, against a default converge up; fails on any failure. Builds e2e.test on
## first use (conformance/build.sh, cached by the conformance module's go.sum).
conformance-smoke:
	./hack/conformance-smoke.sh

clean:
	rm -rf bin
