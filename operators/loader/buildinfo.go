package loader

import (
	"cmp"
	"debug/buildinfo"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
)

// MismatchError says why a plugin cannot be loaded into this host.
type MismatchError struct {
	// Path is the plugin file.
	Path string
	// What names the first difference: "Go version", "-race", "module
	// github.com/google/uuid", ...
	What string
	// Host and Plugin are the two values ("" when absent).
	Host, Plugin string
	// Package is the plugin's main package (from its build info), which helps
	// find its source directory.
	Package string
}

// Error names the difference and the command that fixes it.
func (e *MismatchError) Error() string {
	name := strings.TrimSuffix(filepath.Base(e.Path), filepath.Ext(e.Path))
	dir := "DIR"
	if e.Package != "" && e.Package != "command-line-arguments" {
		dir = "DIR (the directory of " + e.Package + ")"
	}
	return fmt.Sprintf("operator plugin %s does not match this converge binary: %s differs (converge: %s, plugin: %s); "+
		"rebuild it with this converge: converge operator build %s -o %s.so",
		e.Path, e.What, orNone(e.Host), orNone(e.Plugin), dir, name)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// settingDefaults are the build settings compared, in order, with the value
// an absent setting means.
var settingDefaults = []struct{ key, def string }{
	{"-compiler", "gc"},
	{"-race", "false"},
	{"-msan", "false"},
	{"-asan", "false"},
	{"-trimpath", "false"},
	{"-tags", ""},
	{"-gcflags", ""},
	{"-asmflags", ""},
	{"GOEXPERIMENT", ""},
	{"GOOS", ""},
	{"GOARCH", ""},
	{"GO386", ""}, {"GOAMD64", ""}, {"GOARM", ""}, {"GOARM64", ""}, {"GOMIPS", ""}, {"GOMIPS64", ""},
	{"GOPPC64", ""}, {"GORISCV64", ""}, {"GOWASM", ""},
}

func setting(bi *debug.BuildInfo, key string) (string, bool) {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value, true
		}
	}
	return "", false
}

// CompareBuildInfo reports the first difference between the host's build
// info and a plugin's that keeps the plugin from loading, or nil. path is the
// plugin file, used in the error.
func CompareBuildInfo(host, plugin *debug.BuildInfo, path string) error {
	mismatch := func(what, h, p string) error {
		return &MismatchError{Path: path, What: what, Host: h, Plugin: p, Package: plugin.Path}
	}
	// The Go version first: a different toolchain crashes the host in plugin.Open.
	if host.GoVersion != plugin.GoVersion {
		return mismatch("Go version", host.GoVersion, plugin.GoVersion)
	}
	if mode, _ := setting(plugin, "-buildmode"); mode != "plugin" {
		return fmt.Errorf("%s is not a Go plugin (built with -buildmode=%s); build it with: converge operator build DIR -o %s",
			path, orNone(mode), filepath.Base(path))
	}
	if v, _ := setting(host, "CGO_ENABLED"); v != "1" {
		return fmt.Errorf("this converge binary was built with CGO_ENABLED=%s and cannot load plugins; rebuild converge with CGO_ENABLED=1", orNone(v))
	}
	if v, _ := setting(plugin, "CGO_ENABLED"); v != "1" {
		return mismatch("CGO_ENABLED", "1", v)
	}
	for _, s := range settingDefaults {
		h, ok := setting(host, s.key)
		if !ok {
			h = s.def
		}
		p, ok := setting(plugin, s.key)
		if !ok {
			p = s.def
		}
		if h != p {
			return mismatch(s.key, h, p)
		}
	}
	return compareModules(host, plugin, mismatch)
}

type module struct{ path, version, sum string }

// effective returns the module a dependency resolves to after replace.
func effective(m *debug.Module) module {
	if m.Replace != nil {
		return module{m.Replace.Path, m.Replace.Version, m.Replace.Sum}
	}
	return module{m.Path, m.Version, m.Sum}
}

func (m module) String() string {
	if m.version == "" {
		return m.path
	}
	return m.path + "@" + m.version
}

func describe(m *debug.Module) string {
	s := m.Path + "@" + m.Version
	if m.Replace != nil {
		s += " => " + effective(m).String()
	}
	return s
}

func compareModules(host, plugin *debug.BuildInfo, mismatch func(what, h, p string) error) error {
	hostMods := map[string]*debug.Module{}
	for _, m := range host.Deps {
		hostMods[m.Path] = m
	}
	deps := slices.Clone(plugin.Deps)
	slices.SortFunc(deps, func(a, b *debug.Module) int { return cmp.Compare(a.Path, b.Path) })
	for _, p := range deps {
		if p.Path == host.Main.Path {
			if err := compareHostMain(&host.Main, p, mismatch); err != nil {
				return err
			}
			continue
		}
		h, ok := hostMods[p.Path]
		if !ok {
			continue // only the plugin uses it
		}
		he, pe := effective(h), effective(p)
		if he.path != pe.path || he.version != pe.version {
			return mismatch("module "+p.Path, describe(h), describe(p))
		}
		if he.sum != "" && pe.sum != "" && he.sum != pe.sum {
			return mismatch("module "+p.Path+" checksum", he.sum, pe.sum)
		}
	}
	return nil
}

// compareHostMain compares the host's main module (converge itself) with the
// plugin's dependency on it. A host built from a source tree has version
// "(devel)" (or a VCS pseudo-version); the plugin then reaches the same tree
// through a directory replace or a workspace, which the build info cannot
// verify, so only a plugin pinned to a different released version is refused
// here (plugin.Open catches a different source).
func compareHostMain(h, p *debug.Module, mismatch func(what, h, p string) error) error {
	pe := effective(p)
	if pe.version == "" || pe.version == "(devel)" || h.Version == "" || h.Version == "(devel)" {
		return nil
	}
	if pe.path != h.Path || pe.version != h.Version {
		return mismatch("module "+h.Path, h.Path+"@"+h.Version, describe(p))
	}
	if h.Sum != "" && pe.sum != "" && h.Sum != pe.sum {
		return mismatch("module "+h.Path+" checksum", h.Sum, pe.sum)
	}
	return nil
}

// Check reads the build info of the plugin at path (without loading it) and
// compares it with host's.
func Check(host *debug.BuildInfo, path string) error {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read build info of operator plugin %s (is it a Go plugin built with converge operator build?): %w", path, err)
	}
	return CompareBuildInfo(host, bi, path)
}
