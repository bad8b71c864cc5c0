package logs

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "0.log")
	content := "2024-01-01T00:00:01.5Z stdout F one\n" +
		"2024-01-01T00:00:02Z stderr F two\n" +
		"2024-01-01T00:00:03Z stdout P thr\n" +
		"2024-01-01T00:00:03Z stdout F ee\n" +
		"garbage\n" +
		"2024-01-01T00:00:04Z stdout F \n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	n := func(v int64) *int64 { return &v }
	since := time.Date(2024, 1, 1, 0, 0, 2, 0, time.UTC)
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"all", Options{}, "one\ntwo\nthree\n\n"},
		{"tail", Options{TailLines: n(2)}, "ee\n\n"},
		{"tail0", Options{TailLines: n(0)}, ""},
		{"timestamps", Options{TailLines: n(1), Timestamps: true}, "2024-01-01T00:00:04Z \n"},
		{"since", Options{SinceTime: &since}, "two\nthree\n\n"},
		{"limit", Options{LimitBytes: n(6)}, "one\ntw"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := Write(t.Context(), &b, path, c.o, nil); err != nil {
				t.Fatal(err)
			}
			if b.String() != c.want {
				t.Errorf("got %q, want %q", b.String(), c.want)
			}
		})
	}
}

func TestParseQuery(t *testing.T) {
	t.Parallel()
	o, err := ParseQuery(url.Values{"follow": {"true"}, "tailLines": {"5"}, "sinceSeconds": {"10"}, "previous": {"1"}})
	if err != nil || !o.Follow || *o.TailLines != 5 || o.SinceTime == nil || !o.Previous {
		t.Errorf("ParseQuery = %+v, %v", o, err)
	}
	if _, err := ParseQuery(url.Values{"tailLines": {"-1"}}); err == nil {
		t.Error("negative tailLines accepted")
	}
}

func TestRotate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := Rotate(path, 200); ok || err != nil {
		t.Fatalf("rotated a small file: %v %v", ok, err)
	}
	if ok, err := Rotate(path, 50); !ok || err != nil {
		t.Fatalf("Rotate = %v, %v", ok, err)
	}
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Errorf("size after rotation %d", fi.Size())
	}
	if fi, _ := os.Stat(path + ".1"); fi.Size() != 100 {
		t.Errorf("rotated size %d", fi.Size())
	}
}
