package kubectl

import (
	"encoding/json"
	"fmt"
	"github.com/converge-dev/converge/internal/shared"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

// conformanceDir holds upstream example manifests every server must accept.
var conformanceDir = shared.Path("conformance", "manifests")

var _ = Describe("conformance manifests", func() {
	files, err := os.ReadDir(conformanceDir)
	if err != nil || len(files) == 0 {
		It("finds the manifests", func() {
			Fail(fmt.Sprintf("read %s: %v (%d files)", conformanceDir, err, len(files)))
		})
		return
	}
	var entries []TableEntry
	for _, f := range files {
		if !f.IsDir() && f.Name() != "namespace-dev.yaml" {
			entries = append(entries, Entry(f.Name(), f.Name()))
		}
	}
	DescribeTable("apply -f and read back", func(ctx SpecContext, name string) {
		k := suite.dispatcher
		k.ok(ctx, "apply", "-f", filepath.Join(conformanceDir, "namespace-dev.yaml"))
		path := filepath.Join(conformanceDir, name)
		k.ok(ctx, "apply", "-f", path)
		content, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		for i, doc := range splitDocuments(string(content)) {
			var want map[string]any
			Expect(yaml.Unmarshal([]byte(doc), &want)).To(Succeed(), "document %d of %s", i, name)
			if len(want) == 0 {
				continue
			}
			asJSON, err := json.Marshal(want)
			Expect(err).NotTo(HaveOccurred())
			got := k.json(ctx, "get", "-f", writeFile(fmt.Sprintf("doc%d.json", i), string(asJSON)))
			if problems := subset("", want, got); len(problems) > 0 {
				Fail(fmt.Sprintf("%s document %d (%v %v) does not read back:\n  %s", name, i, want["kind"],
					nested(want, "metadata", "name"), strings.Join(problems, "\n  ")))
			}
		}
	}, entries)
})

// splitDocuments splits a YAML stream at "---" lines.
func splitDocuments(s string) []string {
	return regexp.MustCompile(`(?m)^---\s*$`).Split(s, -1)
}

// subset reports every field of want that is missing from got or differs.
// Defaulted fields in got are allowed; quantities and int-or-string values
// compare by meaning.
func subset(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %s", path, show(got))}
		}
		var out []string
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				if wv == nil || isEmpty(wv) {
					continue
				}
				out = append(out, fmt.Sprintf("%s.%s: missing (want %s)", path, k, show(wv)))
				continue
			}
			out = append(out, subset(path+"."+k, wv, gv)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want %s, got %s", path, show(want), show(got))}
		}
		var out []string
		for i := range w {
			out = append(out, subset(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	default:
		if sameScalar(want, got) {
			return nil
		}
		return []string{fmt.Sprintf("%s: want %s, got %s", path, show(want), show(got))}
	}
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

func sameScalar(want, got any) bool {
	if fmt.Sprint(want) == fmt.Sprint(got) {
		return true
	}
	wq, ok1 := quantity(fmt.Sprint(want))
	gq, ok2 := quantity(fmt.Sprint(got))
	return ok1 && ok2 && wq.Cmp(gq) == 0
}

var quantityRE = regexp.MustCompile(`^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$`)

// quantity parses a Kubernetes resource quantity into an exact rational.
func quantity(s string) (*big.Rat, bool) {
	m := quantityRE.FindStringSubmatch(s)
	if m == nil {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(m[1])
	if !ok {
		return nil, false
	}
	mult := map[string]string{"": "1", "m": "1/1000", "k": "1000", "M": "1000000", "G": "1000000000", "T": "1000000000000",
		"P": "1000000000000000", "E": "1000000000000000000", "Ki": "1024", "Mi": "1048576", "Gi": "1073741824",
		"Ti": "1099511627776", "Pi": "1125899906842624", "Ei": "1152921504606846976"}[m[2]]
	f, _ := new(big.Rat).SetString(mult)
	return r.Mul(r, f), true
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
