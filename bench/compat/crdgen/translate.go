// Package crdgen compares `converge operator generate` with controller-gen
// (sigs.k8s.io/controller-tools, built from this module's go.mod tool
// directive) on the same type packages.
//
// controller-gen only knows Kubernetes' own packages (it finds kinds by
// their embedded metav1.TypeMeta and ObjectMeta), so the corpus — the
// scaffolded operator's types, the postgres operator's types and the
// generator's marker corpus, all written against Converge's framework/api —
// is first translated into a Kubernetes-style module: framework/api.X
// becomes metav1.X (resource.Quantity, intstr.IntOrString,
// runtime.RawExtension), builtin/api/core/v1 becomes k8s.io/api/core/v1,
// and everything but type declarations is dropped. Both generators then read
// that same module, so each compares its reading of the same source,
// markers on k8s.io types included.
package crdgen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ast/astutil"
)

const (
	convergeAPI  = "github.com/converge-dev/converge/framework/api"
	convergeCore = "github.com/converge-dev/converge/builtin/api/core/v1"
)

// target says where a framework/api name goes.
var target = map[string][2]string{ // name → {import name, path}
	"Quantity":     {"resource", "k8s.io/apimachinery/pkg/api/resource"},
	"IntOrString":  {"intstr", "k8s.io/apimachinery/pkg/util/intstr"},
	"RawExtension": {"runtime", "k8s.io/apimachinery/pkg/runtime"},
}

// Translate rewrites the Go file src (types only) for a Kubernetes module.
func Translate(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	// Keep type declarations only; drop the comments of what goes.
	var keep []ast.Decl
	var dropped []ast.Node
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && (gd.Tok == token.TYPE || gd.Tok == token.IMPORT) {
			keep = append(keep, d)
			continue
		}
		dropped = append(dropped, d)
	}
	f.Decls = keep
	f.Comments = slices.DeleteFunc(f.Comments, func(g *ast.CommentGroup) bool {
		for _, d := range dropped {
			start := d.Pos()
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc != nil {
				start = fd.Doc.Pos()
			}
			if gd, ok := d.(*ast.GenDecl); ok && gd.Doc != nil {
				start = gd.Doc.Pos()
			}
			if g.Pos() >= start && g.End() <= d.End() {
				return true
			}
		}
		return false
	})
	used := map[string]string{} // import name → path
	coreName := ""
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p == convergeCore {
			coreName = "v1"
			if imp.Name != nil {
				coreName = imp.Name.Name
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		switch {
		case x.Name == "api":
			if t, ok := target[sel.Sel.Name]; ok {
				x.Name = t[0]
				used[t[0]] = t[1]
			} else {
				x.Name = "metav1"
				used["metav1"] = "k8s.io/apimachinery/pkg/apis/meta/v1"
			}
		case coreName != "" && x.Name == coreName:
			used[coreName] = "k8s.io/api/core/v1"
		}
		return true
	})
	for _, imp := range slices.Clone(f.Imports) {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := ""
		if imp.Name != nil {
			name = imp.Name.Name
		}
		astutil.DeleteNamedImport(fset, f, name, p)
	}
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		astutil.AddNamedImport(fset, f, n, used[n])
	}
	var buf bytes.Buffer
	if err := printer.Fprint(&buf, fset, f); err != nil {
		return nil, fmt.Errorf("print: %w", err)
	}
	return buf.Bytes(), nil
}

// TranslateDir translates every non-test Go file of dir into out.
func TranslateDir(dir, out string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		t, err := Translate(src)
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		if err := os.WriteFile(filepath.Join(out, n), t, 0o644); err != nil {
			return err
		}
	}
	return nil
}
