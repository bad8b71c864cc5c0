package controlplane

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestListContinueAfterCompaction is the e2e chunking spec "should support
// continue listing from the last key if the original version has been
// compacted away, though the list is inconsistent": a continue token whose
// revision was compacted is refused with 410 Expired carrying a token that
// goes on from the same key at the latest revision, and the pages from it
// count the items left after each page.
func TestListContinueAfterCompaction(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cp := startInsecure(t)
	type list struct {
		Metadata struct {
			ResourceVersion    string `json:"resourceVersion"`
			Continue           string `json:"continue"`
			RemainingItemCount *int64 `json:"remainingItemCount"`
		} `json:"metadata"`
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
		Reason string `json:"reason"`
	}
	do := func(method, path, body string) (int, list) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, cp.URL()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var l list
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return resp.StatusCode, l
	}
	const templates = "/api/v1/namespaces/default/podtemplates"
	const n = 7
	for i := range n {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"t%d"},"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}`, i)
		if code, _ := do(http.MethodPost, templates, body); code != http.StatusCreated {
			t.Fatalf("create t%d: %d", i, code)
		}
	}
	code, first := do(http.MethodGet, templates+"?limit=2", "")
	if code != http.StatusOK || len(first.Items) != 2 || first.Metadata.Continue == "" {
		t.Fatalf("first page: %d %+v", code, first)
	}

	// Another write, then compact everything before it away.
	if code, _ := do(http.MethodPost, templates, `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"t9"},"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}`); code != http.StatusCreated {
		t.Fatalf("create t9: %d", code)
	}
	rev, err := cp.Storage().CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Storage().Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}

	code, expired := do(http.MethodGet, templates+"?limit=2&continue="+first.Metadata.Continue, "")
	if code != http.StatusGone || expired.Reason != "Expired" || expired.Metadata.Continue == "" {
		t.Fatalf("compacted continue: %d %+v, want 410 Expired with a continue token", code, expired)
	}
	// From the token: t2, t3 at the latest revision, then the rest at that
	// same revision; t9 (written after the first page) shows up.
	var names []string
	for _, item := range first.Items {
		names = append(names, item.Metadata.Name)
	}
	cont, rv := expired.Metadata.Continue, ""
	for cont != "" {
		code, page := do(http.MethodGet, templates+"?limit=2&continue="+cont, "")
		if code != http.StatusOK {
			t.Fatalf("continue: %d %+v", code, page)
		}
		if rv == "" && page.Metadata.ResourceVersion == first.Metadata.ResourceVersion {
			t.Fatalf("the inconsistent continuation is at the first page's revision %s", rv)
		}
		if rv != "" && page.Metadata.ResourceVersion != rv {
			t.Fatalf("page at revision %s, want the continuation's %s", page.Metadata.ResourceVersion, rv)
		}
		rv = page.Metadata.ResourceVersion
		for _, item := range page.Items {
			names = append(names, item.Metadata.Name)
		}
		left := int64(n + 1 - len(names))
		if page.Metadata.Continue == "" {
			if page.Metadata.RemainingItemCount != nil || left != 0 {
				t.Fatalf("last page: remainingItemCount %v, %d items not listed", page.Metadata.RemainingItemCount, left)
			}
		} else if page.Metadata.RemainingItemCount == nil || *page.Metadata.RemainingItemCount != left {
			t.Fatalf("after %v: remainingItemCount %v, want %d", names, page.Metadata.RemainingItemCount, left)
		}
		cont = page.Metadata.Continue
	}
	if want := "t0 t1 t2 t3 t4 t5 t6 t9"; strings.Join(names, " ") != want {
		t.Fatalf("listed %v, want %s", names, want)
	}
}
