# Converge — build, test, benchmark.
GO ?= go
FUZZTIME ?= 5s
PKG := github.com/converge-dev/converge

.PHONY: all build test deps compat vet fmt-check unit race fuzz bench e2e clean

all: build

## build: the converge binary in bin/
build:
	$(GO) build -o bin/converge ./cmd/converge

## test: everything CI runs (vet, gofmt, unit + behaviour suites, race on the framework, short fuzzing)
test: deps vet fmt-check race unit compat fuzz

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

## compat: unmodified client-go and controller-runtime programs against Converge (the bench module)
compat:
	cd bench && $(GO) vet ./... && $(GO) test -count=1 ./compat/...

## fuzz: each fuzz target briefly
fuzz:
	@set -e; for spec in \
	  framework/api/labels:FuzzParse \
	  framework/api/fields:FuzzParse \
	  framework/patch:FuzzJSONPatch \
	  framework/patch:FuzzMergePatch \
	  framework/patch:FuzzStrategicMergePatch \
	  framework/apiserver/protobuf:FuzzDecode \
	  framework/api:FuzzDecodeMapFast \
	  framework/api:FuzzDecodeValue \
	  framework/api/validation:FuzzNameMatchers \
	  framework/apiserver/registry:FuzzCanonicalizeTypedFast; do \
	  pkg=$${spec%%:*}; target=$${spec##*:}; \
	  echo "fuzz $$pkg $$target ($(FUZZTIME))"; \
	  $(GO) test -run='^$$' -fuzz="^$$target\$$" -fuzztime=$(FUZZTIME) ./$$pkg; \
	done

## bench: run the side-by-side benchmarks and regenerate docs/PERFORMANCE.md
bench:
	./hack/bench.sh

clean:
	rm -rf bin
