#!/usr/bin/env bash
# The CI-sized subset of `make conformance` (part of `make test`): the
# upstream [Conformance] specs of sig-api-machinery that need no container
# image and take seconds each — discovery (plain and aggregated), field
# validation, watches, CRDs and their OpenAPI publishing, ResourceQuota,
# priority and fairness, ValidatingAdmissionPolicy, Table negotiation, server
# version — against a default `converge up` (hack/conformance.sh). Fails when
# any selected spec fails; a spec the report classifies "cannot run here"
# would be a wrong selection, so it fails too. The report goes to
# conformance/.cache/smoke.md, never to docs/CONFORMANCE.md.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

export FOCUS='\[sig-api-machinery\] (AggregatedDiscovery|FieldValidation|Discovery|server version|Watchers|ResourceQuota should (manage the lifecycle|be able to update)|API priority and fairness|CustomResourceDefinition resources|CustomResourcePublishOpenAPI|Servers with support for Table|ValidatingAdmissionPolicy).*\[Conformance\]'
export SKIP='\[Slow\]|\[Serial\]|\[Disruptive\]'
export PROCS=${PROCS:-2}
# The selected specs run no image: the process runtime, no registry to fill.
export RUNTIME=${RUNTIME:-process}
export TIMEOUT=${TIMEOUT:-10}
export REPORT=conformance/.cache/smoke.md
export NOTE='CI smoke subset (hack/conformance-smoke.sh).'
mkdir -p conformance/.cache

./hack/conformance.sh

# The report's summary row: | **total** | **passed** | **failed** | **cannot run** | **not selected** |
total=$(grep '^| \*\*total\*\*' "$REPORT" | tr -d '*' | tr '|' ' ')
read -r _ passed failed cannot _ <<<"$total"
echo "conformance smoke: $passed passed, $failed failed, $cannot cannot run here (report: $REPORT)" >&2
if [[ $passed -lt 30 || $failed -ne 0 || $cannot -ne 0 ]]; then
	sed -n '/^## Failed/,$p' "$REPORT" >&2
	echo "conformance smoke: FAILED (expected at least 30 passed and nothing else)" >&2
	exit 1
fi
