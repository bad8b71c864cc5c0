package containerd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/builtin/node/cri"
)

func TestLogStream(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", maxLine+10)
	cases := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"lines", []string{"a\nb\n"}, []string{"stdout F a", "stdout F b"}},
		{"split writes", []string{"he", "llo\nwor", "ld\n"}, []string{"stdout F hello", "stdout F world"}},
		{"empty line", []string{"\n\n"}, []string{"stdout F ", "stdout F "}},
		{"unterminated last line", []string{"a\nrest"}, []string{"stdout F a", "stdout P rest"}},
		{"long line", []string{long + "\n"}, []string{"stdout P " + long[:maxLine], "stdout F xxxxxxxxxx"}},
		{"long unterminated", []string{long[:maxLine], long[maxLine:]}, []string{"stdout P " + long[:maxLine], "stdout P xxxxxxxxxx"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "log")
			l, err := openLog(path)
			if err != nil {
				t.Fatal(err)
			}
			at := time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 3600))
			l.now = func() time.Time { return at }
			s := l.stream("stdout")
			for _, w := range c.writes {
				if n, err := s.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			s.flush()
			l.close()
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
				ts, rest, _ := strings.Cut(line, " ")
				if ts != "2026-01-02T02:04:05.0000006Z" {
					t.Errorf("timestamp %q, want RFC3339Nano in UTC", ts)
				}
				got = append(got, rest)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSpecHelpers(t *testing.T) {
	t.Parallel()
	if got := cri.TruncateHostname(strings.Repeat("a", 62) + "-b-c"); got != strings.Repeat("a", 62) {
		t.Errorf("hostname = %q", got)
	}
	if reason(0, false) != "Completed" || reason(1, false) != "Error" || reason(137, true) != "OOMKilled" {
		t.Error("reason mapping")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "memory.oom_control")
	if err := os.WriteFile(f, []byte("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, ok := readCounter(f, "oom_kill"); !ok || n != 2 {
		t.Errorf("readCounter = %d, %v", n, ok)
	}
	if _, ok := readCounter(f, "missing"); ok {
		t.Error("readCounter found a missing key")
	}
}
