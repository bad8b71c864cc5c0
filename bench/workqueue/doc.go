// Package workqueue benchmarks Converge's framework/workqueue against client-go's
// util/workqueue in the same run. Run with
//
//	go test -run '^$' -bench . -benchtime=1s -count=1 ./workqueue/
//
// and pipe the output through ../cmd/benchreport for a table of ratios.
package workqueue
