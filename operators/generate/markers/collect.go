package markers

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"slices"
	"strings"
)

// Marker is one parsed marker.
type Marker struct {
	// Name is the definition's name (kubebuilder:validation:Minimum).
	Name string
	// Value is nil for a flag, a string, int, float64, bool, []string, []any,
	// map[string]any or JSON value for a single value, and map[string]any
	// (argument name → value) for named arguments.
	Value any
	// Pos is where the marker's comment is.
	Pos token.Position
}

// Arg returns the named argument of an Args marker, or nil.
func (m Marker) Arg(name string) any {
	if a, ok := m.Value.(map[string]any); ok {
		return a[name]
	}
	return nil
}

// String returns the named argument as a string ("" when absent).
func (m Marker) String(name string) string {
	s, _ := m.Arg(name).(string)
	return s
}

// Strings returns the named argument as a list of strings.
func (m Marker) Strings(name string) []string {
	s, _ := m.Arg(name).([]string)
	return s
}

// Set is the markers of one node in source order.
type Set []Marker

// Get returns the first marker named name.
func (s Set) Get(name string) (Marker, bool) {
	for _, m := range s {
		if m.Name == name {
			return m, true
		}
	}
	return Marker{}, false
}

// Has reports whether a marker named name is present.
func (s Set) Has(name string) bool { _, ok := s.Get(name); return ok }

// All returns the markers named name.
func (s Set) All(name string) []Marker {
	var out []Marker
	for _, m := range s {
		if m.Name == name {
			out = append(out, m)
		}
	}
	return out
}

// File is the markers of one parsed file: by type spec, by struct field, and
// the package-level ones.
type File struct {
	Types   map[*ast.TypeSpec]Set
	Fields  map[*ast.Field]Set
	Package Set
}

// IsMarker reports whether a comment's text is a marker comment.
func IsMarker(text string) bool {
	if !strings.HasPrefix(text, "//") {
		return false
	}
	return strings.HasPrefix(strings.TrimSpace(text[2:]), "+")
}

// Collect associates the markers of f with its type specs, struct fields and
// package, and parses them. Errors name the file and line of each bad marker;
// the markers that parsed are returned with them.
func (r Registry) Collect(fset *token.FileSet, f *ast.File) (*File, error) {
	out := &File{Types: map[*ast.TypeSpec]Set{}, Fields: map[*ast.Field]Set{}}
	claimed := map[*ast.CommentGroup]bool{}
	var errs []error
	parse := func(groups []*ast.CommentGroup, t Target) Set {
		var set Set
		for _, g := range groups {
			claimed[g] = true
			for _, c := range g.List {
				if !IsMarker(c.Text) {
					continue
				}
				pos := fset.Position(c.Pos())
				m, err := r.Parse(c.Text[2:], t)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", pos, err))
					continue
				}
				if m == nil {
					// A package marker written above a type (an +kubebuilder:rbac
					// above a reconciler) is still a package marker.
					if pm, err := r.Parse(c.Text[2:], Package); err == nil && pm != nil {
						pm.Pos = pos
						out.Package = append(out.Package, *pm)
					}
					continue
				}
				m.Pos = pos
				set = append(set, *m)
			}
		}
		return set
	}
	// groupsFor returns the doc group and the group right above it, when no
	// code lies between (after ends at the previous node).
	groupsFor := func(doc *ast.CommentGroup, node ast.Node, after token.Pos) []*ast.CommentGroup {
		anchor := node.Pos()
		var groups []*ast.CommentGroup
		if doc != nil {
			anchor = doc.Pos()
			groups = append(groups, doc)
		}
		i, _ := slices.BinarySearchFunc(f.Comments, anchor, func(g *ast.CommentGroup, p token.Pos) int { return int(g.Pos() - p) })
		if i > 0 {
			prev := f.Comments[i-1]
			if prev.Pos() > after && fset.Position(prev.Pos()).Line > fset.Position(after).Line && prev != f.Doc && !claimed[prev] {
				groups = append([]*ast.CommentGroup{prev}, groups...)
			}
		}
		return groups
	}
	if f.Doc != nil {
		out.Package = append(out.Package, parse([]*ast.CommentGroup{f.Doc}, Package)...)
	}
	after := f.Name.End()
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			after = decl.End()
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			doc := ts.Doc
			node := ast.Node(ts)
			if doc == nil && !gd.Lparen.IsValid() {
				doc, node = gd.Doc, gd
			}
			out.Types[ts] = parse(groupsFor(doc, node, after), Type)
			after = ts.Name.End()
			if st, ok := ts.Type.(*ast.StructType); ok {
				after = st.Fields.Opening
				for _, fld := range st.Fields.List {
					out.Fields[fld] = parse(groupsFor(fld.Doc, fld, after), Field)
					after = fld.End()
				}
			}
			after = ts.End()
		}
		after = gd.End()
	}
	// Everything else (a reconciler's +kubebuilder:rbac, a +groupName in
	// another file's comment) is a package marker when defined as one.
	for _, g := range f.Comments {
		if claimed[g] {
			continue
		}
		for _, c := range g.List {
			if !IsMarker(c.Text) {
				continue
			}
			pos := fset.Position(c.Pos())
			m, err := r.Parse(c.Text[2:], Package)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", pos, err))
				continue
			}
			if m != nil {
				m.Pos = pos
				out.Package = append(out.Package, *m)
			}
		}
	}
	return out, errors.Join(errs...)
}

// Doc returns a doc comment as controller-gen writes it into a description:
// the comment's text without marker lines, lines starting with TODO left
// out and everything from a line starting with "---" on cut (outside ```
// or ~~~ code blocks), lines of a /* */ comment trimmed.
func Doc(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	var kept ast.CommentGroup
	block := false
	for _, c := range g.List {
		if IsMarker(c.Text) {
			continue
		}
		if strings.HasPrefix(c.Text, "/*") {
			block = true
		}
		kept.List = append(kept.List, c)
	}
	lines := strings.Split(kept.Text(), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	out := make([]string, 0, len(lines))
	code := false
	for _, line := range lines {
		if block {
			line = strings.TrimSpace(line)
		}
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			code = !code
		}
		if !code {
			if strings.HasPrefix(line, "TODO") {
				continue
			}
			if strings.HasPrefix(line, "---") {
				break
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
