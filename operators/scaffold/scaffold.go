package scaffold

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"go/format"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"
)

//go:embed templates/*.tmpl
var templates embed.FS

// ConvergeModule is the module path of Converge.
const ConvergeModule = "github.com/converge-dev/converge"

// DefaultVersions are the versions of the libraries a scaffolded module
// requires besides Converge when no Converge source tree is given; a test
// keeps them equal to Converge's go.mod.
var DefaultVersions = map[string]string{
	"github.com/onsi/ginkgo/v2": "v2.34.0",
	"github.com/onsi/gomega":    "v1.44.0",
}

// Options configure Init.
type Options struct {
	// Dir is where the module is written (default: ./<Name>). It must not
	// exist or be empty.
	Dir string
	// Name of the operator (a DNS label: "memcached").
	Name string
	// Group, Version and Kind of its API ("cache.example.com", "v1alpha1",
	// "Memcached").
	Group, Version, Kind string
	// Module path (default "example.com/<Name>").
	Module string
	// ConvergeSource is a Converge source tree to use through a replace
	// directive (for a converge built from source).
	ConvergeSource string
	// ConvergeVersion is the Converge version to require when
	// ConvergeSource is empty (the released version of the running binary).
	ConvergeVersion string
	// GoVersion for the go directive (default: Converge's, else "1.26").
	GoVersion string
}

var (
	nameRE    = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	groupRE   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$`)
	versionRE = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)
	kindRE    = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

func (o *Options) complete() error {
	var errs []error
	if !nameRE.MatchString(o.Name) || len(o.Name) > 63 {
		errs = append(errs, fmt.Errorf("name %q: use a lowercase DNS label (memcached, my-app)", o.Name))
	}
	if !groupRE.MatchString(o.Group) {
		errs = append(errs, fmt.Errorf("--group %q: use a DNS subdomain with a dot (cache.example.com)", o.Group))
	}
	if !versionRE.MatchString(o.Version) {
		errs = append(errs, fmt.Errorf("--version %q: use v1, v1alpha1, v2beta1, ...", o.Version))
	}
	if !kindRE.MatchString(o.Kind) {
		errs = append(errs, fmt.Errorf("--kind %q: use UpperCamelCase (Memcached)", o.Kind))
	}
	if o.ConvergeSource == "" && o.ConvergeVersion == "" {
		errs = append(errs, errors.New("neither a Converge source tree nor a Converge version to require: pass --converge-src"))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if o.Dir == "" {
		o.Dir = o.Name
	}
	if o.Module == "" {
		o.Module = "example.com/" + o.Name
	}
	return nil
}

type data struct {
	Options
	Package, Plural, Singular string
	Requires, Indirect        []req
	Replaces                  []repl
}

type req struct{ Path, Version string }
type repl struct{ Path, To string }

// Plural returns the lowercase plural of kind as Kubernetes tools form it.
func Plural(kind string) string {
	s := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(s, "y") && !strings.HasSuffix(s, "ay") && !strings.HasSuffix(s, "ey") && !strings.HasSuffix(s, "oy"):
		return s[:len(s)-1] + "ies"
	case strings.HasSuffix(s, "s"), strings.HasSuffix(s, "x"), strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	}
	return s + "s"
}

// Init writes the operator module and returns the files written, relative
// to Dir:
//
//	go.mod, go.sum, Makefile, README.md
//	operator.go                    the operators.Operator implementation
//	webhooks.go                    a validating and a defaulting webhook, off until renamed to Webhooks
//	plugin/main.go                 plugin symbol + standalone main
//	api/<version>/types.go         Kind, KindSpec, KindStatus, KindList, AddToScheme
//	api/<version>/crd.yaml         the CRD (embedded), as make manifests generates it
//	api/<version>/crd_test.go      fails when crd.yaml and the types disagree
//	controller/controller.go       reconciler: finalizer, owned ConfigMap, Ready condition
//	controller/suite_test.go       Ginkgo suite on testenv
//	controller/controller_test.go  the behaviour spec
func Init(opts Options) ([]string, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	if ents, err := os.ReadDir(opts.Dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("%s exists and is not empty", opts.Dir)
	}
	d := data{Options: opts, Package: strings.ReplaceAll(opts.Name, "-", ""), Plural: Plural(opts.Kind),
		Singular: strings.ToLower(opts.Kind)}
	versions := DefaultVersions
	var sum []byte
	if opts.ConvergeSource != "" {
		src, err := filepath.Abs(opts.ConvergeSource)
		if err != nil {
			return nil, err
		}
		gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
		if err != nil {
			return nil, fmt.Errorf("converge source: %w", err)
		}
		mod, goVersion, reqs := parseGoMod(gomod)
		if mod != ConvergeModule {
			return nil, fmt.Errorf("converge source %s: go.mod is module %q, not %s", src, mod, ConvergeModule)
		}
		if d.GoVersion == "" {
			d.GoVersion = goVersion
		}
		versions = map[string]string{}
		for k := range DefaultVersions {
			versions[k] = reqs[k]
		}
		// Converge's whole requirement list, so that the module is tidy (Go
		// lists every module providing a package of the build) and builds
		// with -mod=readonly right away.
		for _, p := range slices.Sorted(maps.Keys(reqs)) {
			if _, direct := DefaultVersions[p]; !direct {
				d.Indirect = append(d.Indirect, req{p, reqs[p]})
			}
		}
		sum, _ = os.ReadFile(filepath.Join(src, "go.sum"))
		d.Requires = append(d.Requires, req{ConvergeModule, "v0.0.0-00010101000000-000000000000"})
		d.Replaces = append(d.Replaces, repl{ConvergeModule, src})
	} else {
		d.Requires = append(d.Requires, req{ConvergeModule, opts.ConvergeVersion})
	}
	if d.GoVersion == "" {
		d.GoVersion = "1.26"
	}
	for _, k := range []string{"github.com/onsi/ginkgo/v2", "github.com/onsi/gomega"} {
		d.Requires = append(d.Requires, req{k, versions[k]})
	}
	v := opts.Version
	files := []struct{ tmpl, out string }{
		{"go.mod.tmpl", "go.mod"},
		{"Makefile.tmpl", "Makefile"},
		{"README.md.tmpl", "README.md"},
		{"operator.go.tmpl", "operator.go"},
		{"webhooks.go.tmpl", "webhooks.go"},
		{"plugin_main.go.tmpl", "plugin/main.go"},
		{"types.go.tmpl", "api/" + v + "/types.go"},
		{"crd.yaml.tmpl", "api/" + v + "/crd.yaml"},
		{"crd_test.go.tmpl", "api/" + v + "/crd_test.go"},
		{"controller.go.tmpl", "controller/controller.go"},
		{"suite_test.go.tmpl", "controller/suite_test.go"},
		{"controller_test.go.tmpl", "controller/controller_test.go"},
	}
	t, err := template.ParseFS(templates, "templates/*.tmpl")
	if err != nil {
		return nil, err
	}
	var written []string
	for _, f := range files {
		var buf bytes.Buffer
		if err := t.ExecuteTemplate(&buf, f.tmpl, d); err != nil {
			return nil, fmt.Errorf("render %s: %w", f.out, err)
		}
		out := buf.Bytes()
		if strings.HasSuffix(f.out, ".go") {
			if out, err = format.Source(out); err != nil {
				return nil, fmt.Errorf("format %s: %w", f.out, err)
			}
		}
		if err := write(filepath.Join(opts.Dir, f.out), out); err != nil {
			return nil, err
		}
		written = append(written, f.out)
	}
	if err := write(filepath.Join(opts.Dir, "go.sum"), sum); err != nil {
		return nil, err
	}
	return append(written, "go.sum"), nil
}

func write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// parseGoMod returns the module path, go version and required versions.
func parseGoMod(data []byte) (module, goVersion string, reqs map[string]string) {
	reqs = map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	inBlock := false
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "module" && len(f) == 2:
			module = strings.Trim(f[1], `"`)
		case f[0] == "go" && len(f) == 2:
			goVersion = f[1]
		case f[0] == "require" && len(f) == 2 && f[1] == "(":
			inBlock = true
		case f[0] == "require" && len(f) == 3:
			reqs[f[1]] = f[2]
		case inBlock && f[0] == ")":
			inBlock = false
		case inBlock && len(f) == 2:
			reqs[f[0]] = f[1]
		}
	}
	return module, goVersion, reqs
}
