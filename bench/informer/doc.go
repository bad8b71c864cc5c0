// Package informer benchmarks Converge's framework/cache informer against
// client-go's shared informer in the same process, over the same in-process
// Converge API server (testenv) holding 10,000 Pods of about 1 KiB each.
//
// Each op starts one informer on all Pods (no transform), waits until it has
// synced, then measures the heap it retains: runtime.GC twice and
// runtime.ReadMemStats HeapAlloc minus a baseline taken the same way before the
// informer was created. The informer is then stopped and dropped before the next
// one runs. Besides ns/op (Start to synced) it reports sync-ms and heap-MB
// (mean over the iterations of the run). One op takes seconds, so run
//
//	go test -run '^$' -bench InformerSync -benchtime=1x -count=5 -timeout 30m ./informer/ | go run ./cmd/benchreport
//
// The server runs in the same process: any heap it keeps per watch (for example
// buffers of the open watch) is counted for both peers alike. The server answers
// LIST and WATCH in JSON even when the client prefers protobuf (see WIRE.md), so
// client-go decodes JSON here, as Converge's client does.
package informer
