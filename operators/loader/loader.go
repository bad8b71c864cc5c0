package loader

import (
	"errors"
	"fmt"
	"path/filepath"
	"plugin"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/converge-dev/converge/operators"
)

// ErrNoHostBuildInfo is returned when the running binary carries no build
// info (it was not built by the go command), so plugins cannot be checked.
var ErrNoHostBuildInfo = errors.New("loader: this binary has no Go build info; plugins cannot be checked")

type result struct {
	op  operators.Operator
	err error
}

// Plugins are process-global in Go (never unloaded, one load per path), so
// the cache is too.
var (
	mu    sync.Mutex
	cache = map[string]*result{}
)

// Load loads the operator plugin at path into this process: it checks the
// plugin's build info against this binary's (see the package documentation),
// opens it and finds its Operator (operators.FromSymbols). Each absolute path
// is loaded once; later calls return the first result, error included.
func Load(path string) (operators.Operator, error) {
	host, ok := debug.ReadBuildInfo()
	if !ok {
		return nil, ErrNoHostBuildInfo
	}
	return LoadWith(host, path)
}

// LoadWith is Load with the host's build info given (for hosts that know
// better than debug.ReadBuildInfo, and for tests).
func LoadWith(host *debug.BuildInfo, path string) (operators.Operator, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("operator plugin %s: %w", path, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	mu.Lock()
	defer mu.Unlock()
	if r, ok := cache[abs]; ok {
		return r.op, r.err
	}
	op, err := load(host, abs)
	cache[abs] = &result{op, err}
	return op, err
}

func load(host *debug.BuildInfo, path string) (op operators.Operator, err error) {
	if err := Check(host, path); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			op, err = nil, fmt.Errorf("operator plugin %s panicked while loading: %v\n%s", path, r, debug.Stack())
		}
	}()
	p, err := plugin.Open(path)
	if err != nil {
		return nil, translate(host, path, err)
	}
	op, err = operators.FromSymbols(func(name string) (any, error) { return p.Lookup(name) })
	if err != nil {
		return nil, fmt.Errorf("operator plugin %s: %w (export `var Operator operators.Operator = ...` or `func New() operators.Operator` from its main package)", path, err)
	}
	return op, nil
}

var differentPackage = regexp.MustCompile(`different version of package (\S+)`)

// translate turns plugin.Open's errors into actionable ones.
func translate(host *debug.BuildInfo, path string, err error) error {
	msg := err.Error()
	if m := differentPackage.FindStringSubmatch(msg); m != nil {
		pkg := m[1]
		e := &MismatchError{Path: path, What: "the compiled source of package " + pkg,
			Host: "as built into this binary", Plugin: "different source or build flags"}
		if strings.HasPrefix(pkg, host.Main.Path+"/") || pkg == host.Main.Path {
			e.Host = host.Main.Path + " source this converge was built from"
			e.Plugin = "another copy of that source (edited since converge was built?)"
		}
		return e
	}
	if strings.Contains(msg, "plugin already loaded") {
		return fmt.Errorf("operator plugin %s: a plugin with the same main package is already loaded in this process "+
			"(Go cannot unload plugins); restart converge to load a rebuilt plugin", path)
	}
	if strings.Contains(msg, "not implemented") {
		return fmt.Errorf("operator plugin %s: this converge binary cannot load plugins (built without cgo or on an unsupported platform)", path)
	}
	return fmt.Errorf("operator plugin %s: %w", path, err)
}
