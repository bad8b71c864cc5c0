package main

import (
	"strings"
	"testing"
)

const input = `goos: linux
goarch: amd64
cpu: Test CPU
BenchmarkWorkqueue/converge/p1-2   	 100	       100.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkWorkqueue/clientgo/p1-2   	 100	       250.0 ns/op	      41 B/op	       0 allocs/op
BenchmarkWorkqueue/converge/p1-2   	 100	       120.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkWorkqueue/clientgo/p1-2   	 100	       300.0 ns/op	      40 B/op	       0 allocs/op
BenchmarkWorkqueue/converge/p1-2   	 100	       500.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkWorkqueue/clientgo/p1-2   	 100	       200.0 ns/op	      40 B/op	       0 allocs/op
BenchmarkOther/alone-2             	 100	       1 ns/op
BenchmarkInformerSync/converge/pods10k-2 	1	 500000000 ns/op	        46.00 heap-MB	       500.0 sync-ms
BenchmarkInformerSync/clientgo/pods10k-2 	1	 600000000 ns/op	        52.00 heap-MB	       600.0 sync-ms
BenchmarkInformerSync/converge/pods10k-2 	1	 400000000 ns/op	        46.20 heap-MB	       400.0 sync-ms
BenchmarkInformerSync/clientgo/pods10k-2 	1	 700000000 ns/op	        51.80 heap-MB	       700.0 sync-ms
PASS
`

func TestReport(t *testing.T) {
	results, header, err := parse(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	rows := pair(results)
	if len(rows) != 2 {
		t.Fatalf("got %d rows, want 2", len(rows))
	}
	var out strings.Builder
	write(&out, header, rows)
	want := "| BenchmarkWorkqueue/*/p1 | clientgo | 120 (100–500) | 250 (200–300) | 2.08× | 0 | 40 | 0 | 0 | 3/3 |"
	if !strings.Contains(out.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, out.String())
	}
	for _, want := range []string{
		"| BenchmarkInformerSync/*/pods10k | clientgo | 450000000 (400000000–500000000) | 650000000 (600000000–700000000) | 1.44× |",
		"| BenchmarkInformerSync/*/pods10k | clientgo | heap-MB | 46.1 (46–46.2) | 51.9 (51.8–52) | 0.89× | 2/2 |",
		"| BenchmarkInformerSync/*/pods10k | clientgo | sync-ms | 450 (400–500) | 650 (600–700) | 0.69× | 2/2 |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.HasPrefix(out.String(), "goos: linux; goarch: amd64; cpu: Test CPU") {
		t.Errorf("report lacks the header:\n%s", out.String())
	}
}
