package stats

import (
	"testing"
	"time"
)

func TestParseHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, stat, mem string
		cpu, ws         uint64
		wantErr         bool
	}{
		{"busy excludes idle and iowait", "cpu  100 10 50 1000 20 5 5 10 0 0\ncpu0 1 2 3 4 5 6 7 8\n",
			"MemTotal: 1000 kB\nMemFree: 100 kB\nMemAvailable: 400 kB\n", 180 * 10_000_000, 600 * 1024, false},
		{"no cpu line", "intr 1 2\n", "MemTotal: 1 kB\nMemAvailable: 1 kB\n", 0, 0, true},
		{"no MemAvailable", "cpu 1 1 1 1 1 1 1 1\n", "MemTotal: 1 kB\n", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := parseHost([]byte(tc.stat), []byte(tc.mem), time.Unix(0, 0))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if r.CPUNanos != tc.cpu || r.WorkingSet != tc.ws {
				t.Errorf("parseHost = cpu %d ws %d, want %d %d", r.CPUNanos, r.WorkingSet, tc.cpu, tc.ws)
			}
		})
	}
}
