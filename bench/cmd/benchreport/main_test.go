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
PASS
`

func TestReport(t *testing.T) {
	results, header, err := parse(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	rows := pair(results)
	if len(rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(rows))
	}
	var out strings.Builder
	write(&out, header, rows)
	want := "| BenchmarkWorkqueue/*/p1 | clientgo | 120 (100–500) | 250 (200–300) | 2.08× | 0 | 40 | 0 | 0 | 3/3 |"
	if !strings.Contains(out.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, out.String())
	}
	if !strings.HasPrefix(out.String(), "goos: linux; goarch: amd64; cpu: Test CPU") {
		t.Errorf("report lacks the header:\n%s", out.String())
	}
}
