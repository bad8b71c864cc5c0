// Package commits compares two builds of converge — another commit's and the
// working tree's — as separate `converge apiserver` processes in the default
// secure mode, side by side in one run. hack/bench-against-commit.sh builds
// both and runs:
//
//	CONVERGE_OLD=/path/old CONVERGE_NEW=/path/new go test -run '^$' -bench CreatesAgainstCommit -benchtime 40000x ./commits/
package commits
