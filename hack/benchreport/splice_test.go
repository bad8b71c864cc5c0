package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSplice(t *testing.T) {
	section := "## Latest\n\nfigures\n"
	block := beginMarker + "\n" + section + endMarker + "\n"
	for _, tc := range []struct {
		name, doc, want, err string
	}{
		{"empty document", "", block, ""},
		{"appended after curated text", "# Performance\n\nanalysis\n", "# Performance\n\nanalysis\n\n" + block, ""},
		{"replaced between markers, text around kept", "# P\n\nbefore\n\n" + beginMarker + "\nold figures\n" + endMarker + "\n\nafter\n",
			"# P\n\nbefore\n\n" + block + "\nafter\n", ""},
		{"end marker only", "x\n" + endMarker + "\n", "", "not both present"},
		{"markers reversed", endMarker + "\n" + beginMarker + "\n", "", "not both present"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := splice(tc.doc, section)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("splice = %q, %v\nwant %q", got, err, tc.want)
			}
		})
	}
}

func TestDemote(t *testing.T) {
	in := "# Title\n\ntext # not a heading\n## Section\n```\n# a shell comment\n```\n| a | b |\n"
	want := "## Title\n\ntext # not a heading\n### Section\n```\n# a shell comment\n```\n| a | b |\n"
	if got := demote(in); got != want {
		t.Fatalf("demote = %q, want %q", got, want)
	}
}

// TestWriteIntoKeepsCuratedText regenerates a document twice from an empty
// run directory: the curated text stays and the generated section is not
// duplicated.
func TestWriteIntoKeepsCuratedText(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "PERFORMANCE.md")
	curated := "# Performance\n\nCurated analysis.\n"
	if err := os.WriteFile(doc, []byte(curated), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := writeInto(doc, t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.HasPrefix(s, curated) || strings.Count(s, beginMarker) != 1 || !strings.Contains(s, "## Latest `make bench` run") {
		t.Fatalf("document after two runs:\n%s", s)
	}
}
