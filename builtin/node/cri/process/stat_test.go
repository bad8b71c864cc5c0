package process

import (
	"os"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		state      byte
		start      uint64
		wantErr    bool
	}{
		{"plain", "1234 (podserver) S 1 1234 1234 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 5 0 987654 1000 10 18446744073709551615", 'S', 987654, false},
		{"spaces and parens in the name", "77 (a b) (c)) Z 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0", 'Z', 42, false},
		{"truncated", "77 (x) R 1 2 3", 0, 0, true},
		{"no name", "garbage", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, start, err := parseStat(tc.line)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if st != tc.state || start != tc.start {
				t.Errorf("parseStat = %c %d, want %c %d", st, start, tc.state, tc.start)
			}
		})
	}
}

func TestTreeStats(t *testing.T) {
	t.Parallel()
	procs := map[int]proc{
		10: {ppid: 1, utime: 100, stime: 50, cutime: 10, cstime: 5, rssPages: 100},
		11: {ppid: 10, utime: 20, stime: 0, rssPages: 10},
		12: {ppid: 11, utime: 1, stime: 1, rssPages: 1},
		20: {ppid: 1, utime: 1000, rssPages: 1000}, // not in the tree
	}
	got := treeStats(procs, 10, time.Unix(0, 0))
	if want := uint64(187) * uint64(10*time.Millisecond); got.CPUUsageNanos != want {
		t.Errorf("CPUUsageNanos = %d, want %d", got.CPUUsageNanos, want)
	}
	if want := uint64(111 * os.Getpagesize()); got.MemoryWorkingSetBytes != want {
		t.Errorf("MemoryWorkingSetBytes = %d, want %d", got.MemoryWorkingSetBytes, want)
	}
	if got := treeStats(procs, 99, time.Unix(0, 0)); got.CPUUsageNanos != 0 {
		t.Errorf("missing root: CPUUsageNanos = %d, want 0", got.CPUUsageNanos)
	}
}

func TestParseProc(t *testing.T) {
	t.Parallel()
	p, err := parseProc("1234 (a (b)) R 77 1234 1234 0 -1 4194560 1 0 0 0 300 40 5 6 20 0 5 0 987654 1000 42 18446744073709551615")
	if err != nil {
		t.Fatal(err)
	}
	if want := (proc{ppid: 77, utime: 300, stime: 40, cutime: 5, cstime: 6, rssPages: 42}); p != want {
		t.Errorf("parseProc = %+v, want %+v", p, want)
	}
	if _, err := parseProc("1 (x) R 1 2"); err == nil {
		t.Error("short line: no error")
	}
}
