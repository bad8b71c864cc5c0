package generate

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"

	"github.com/converge-dev/converge/operators/generate/markers"
	"github.com/converge-dev/converge/operators/generate/schema"
)

// sources reads declarations (doc comments and markers) from source files,
// parsing each file once. Types of the loaded packages and of their
// dependencies are found by the position go/types gives their names.
type sources struct {
	fset     *token.FileSet // the loader's: positions of types.Objects
	own      *token.FileSet // files parsed here
	registry markers.Registry
	files    map[string]*parsedFile
	pkgs     map[string]markers.Set // directory → package markers
	errs     []error
}

type parsedFile struct {
	ast     *ast.File
	markers *markers.File
}

func newSources(fset *token.FileSet) *sources {
	return &sources{fset: fset, own: token.NewFileSet(), registry: markers.CRD(),
		files: map[string]*parsedFile{}, pkgs: map[string]markers.Set{}}
}

func (s *sources) file(path string) (*parsedFile, error) {
	if f, ok := s.files[path]; ok {
		if f == nil {
			return nil, fmt.Errorf("parse %s: failed before", path)
		}
		return f, nil
	}
	s.files[path] = nil
	af, err := parser.ParseFile(s.own, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	mf, err := s.registry.Collect(s.own, af)
	if err != nil {
		s.errs = append(s.errs, err)
	}
	f := &parsedFile{ast: af, markers: mf}
	s.files[path] = f
	return f, nil
}

// packageMarkers returns the package markers of the Go package in dir
// (every non-test file of that package name).
func (s *sources) packageMarkers(dir, name string) markers.Set {
	if set, ok := s.pkgs[dir]; ok {
		return set
	}
	var set markers.Set
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := s.file(filepath.Join(dir, n))
		if err != nil || f.ast.Name.Name != name {
			continue
		}
		set = append(set, f.markers.Package...)
	}
	s.pkgs[dir] = set
	return set
}

// decl finds the declaration of obj in its source file.
func (s *sources) decl(obj *types.TypeName) (*schema.Decl, error) {
	pos := s.fset.Position(obj.Pos())
	if !pos.IsValid() || pos.Filename == "" {
		return nil, errors.New("no source position")
	}
	f, err := s.file(pos.Filename)
	if err != nil {
		return nil, err
	}
	for _, d := range f.ast.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			if ts.Name.Name != obj.Name() || s.own.Position(ts.Name.Pos()).Line != pos.Line {
				continue
			}
			doc := ts.Doc
			if doc == nil && !gd.Lparen.IsValid() {
				doc = gd.Doc
			}
			out := &schema.Decl{Doc: markers.Doc(doc), Markers: f.markers.Types[ts], Pos: s.own.Position(ts.Name.Pos())}
			if st, ok := ts.Type.(*ast.StructType); ok {
				for _, fld := range st.Fields.List {
					fd := schema.FieldDecl{Doc: markers.Doc(fld.Doc), Markers: f.markers.Fields[fld], Pos: s.own.Position(fld.Pos())}
					n := max(len(fld.Names), 1)
					for range n {
						out.Fields = append(out.Fields, fd)
					}
				}
			}
			out.Optional = s.packageMarkers(filepath.Dir(pos.Filename), f.ast.Name.Name).Has("kubebuilder:validation:Optional")
			return out, nil
		}
	}
	return nil, fmt.Errorf("%s: declaration of %s not found", pos, obj.Name())
}
