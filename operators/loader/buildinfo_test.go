package loader

import (
	"errors"
	"runtime/debug"
	"strings"
	"testing"
)

func hostInfo() *debug.BuildInfo {
	return &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Path:      "github.com/converge-dev/converge/cmd/converge",
		Main:      debug.Module{Path: "github.com/converge-dev/converge", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "github.com/go-logr/logr", Version: "v1.4.4", Sum: "h1:logr="},
			{Path: "github.com/google/uuid", Version: "v1.6.0", Sum: "h1:uuid="},
		},
		Settings: []debug.BuildSetting{
			{Key: "-buildmode", Value: "exe"}, {Key: "-compiler", Value: "gc"}, {Key: "CGO_ENABLED", Value: "1"},
			{Key: "GOARCH", Value: "amd64"}, {Key: "GOOS", Value: "linux"}, {Key: "GOAMD64", Value: "v1"},
		},
	}
}

func pluginInfo() *debug.BuildInfo {
	h := hostInfo()
	p := &debug.BuildInfo{
		GoVersion: h.GoVersion,
		Path:      "example.com/memcached/plugin",
		Main:      debug.Module{Path: "converge.local/operatorbuild", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "example.com/memcached", Version: "v0.0.0-00010101000000-000000000000",
				Replace: &debug.Module{Path: "/src/memcached"}},
			{Path: "github.com/converge-dev/converge", Version: "v0.0.0-00010101000000-000000000000",
				Replace: &debug.Module{Path: "/work/main"}},
			{Path: "github.com/go-logr/logr", Version: "v1.4.4", Sum: "h1:logr="},
			{Path: "github.com/google/uuid", Version: "v1.6.0", Sum: "h1:uuid=",
				Replace: &debug.Module{Path: "github.com/google/uuid", Version: "v1.6.0", Sum: "h1:uuid="}},
			{Path: "github.com/onlyplugin/x", Version: "v9.9.9"},
		},
	}
	for _, s := range h.Settings {
		if s.Key == "-buildmode" {
			s.Value = "plugin"
		}
		p.Settings = append(p.Settings, s)
	}
	return p
}

func set(bi *debug.BuildInfo, key, value string) {
	for i := range bi.Settings {
		if bi.Settings[i].Key == key {
			bi.Settings[i].Value = value
			return
		}
	}
	bi.Settings = append(bi.Settings, debug.BuildSetting{Key: key, Value: value})
}

func TestCompareBuildInfo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		host   func(*debug.BuildInfo)
		plugin func(*debug.BuildInfo)
		want   string // substring of the error; "" for none
	}{
		{name: "identical (pinned replace of the same version, plugin-only module)", want: ""},
		{name: "go toolchain", plugin: func(p *debug.BuildInfo) { p.GoVersion = "go1.25.3" },
			want: "Go version differs (converge: go1.26.8, plugin: go1.25.3)"},
		{name: "go toolchain is reported before everything else", plugin: func(p *debug.BuildInfo) {
			p.GoVersion = "go1.27.0"
			set(p, "-race", "true")
			p.Deps[3].Version = "v1.5.0"
		}, want: "Go version differs"},
		{name: "not a plugin", plugin: func(p *debug.BuildInfo) { set(p, "-buildmode", "exe") }, want: "is not a Go plugin"},
		{name: "host without cgo", host: func(h *debug.BuildInfo) { set(h, "CGO_ENABLED", "0") },
			want: "built with CGO_ENABLED=0 and cannot load plugins"},
		{name: "race", plugin: func(p *debug.BuildInfo) { set(p, "-race", "true") },
			want: "-race differs (converge: false, plugin: true)"},
		{name: "race on the host", host: func(h *debug.BuildInfo) { set(h, "-race", "true") },
			want: "-race differs (converge: true, plugin: false)"},
		{name: "trimpath", plugin: func(p *debug.BuildInfo) { set(p, "-trimpath", "true") }, want: "-trimpath differs"},
		{name: "tags", plugin: func(p *debug.BuildInfo) { set(p, "-tags", "netgo") }, want: "-tags differs (converge: none, plugin: netgo)"},
		{name: "gcflags", plugin: func(p *debug.BuildInfo) { set(p, "-gcflags", "all=-N -l") }, want: "-gcflags differs"},
		{name: "goamd64", plugin: func(p *debug.BuildInfo) { set(p, "GOAMD64", "v3") }, want: "GOAMD64 differs (converge: v1, plugin: v3)"},
		{name: "ldflags are not compared", plugin: func(p *debug.BuildInfo) { set(p, "-ldflags", "-X main.v=1") }, want: ""},
		{name: "module version", plugin: func(p *debug.BuildInfo) {
			p.Deps[3] = &debug.Module{Path: "github.com/google/uuid", Version: "v1.5.0", Sum: "h1:old="}
		}, want: "module github.com/google/uuid differs (converge: github.com/google/uuid@v1.6.0, plugin: github.com/google/uuid@v1.5.0)"},
		{name: "module replaced by a directory", plugin: func(p *debug.BuildInfo) {
			p.Deps[2].Replace = &debug.Module{Path: "../logr"}
		}, want: "module github.com/go-logr/logr differs (converge: github.com/go-logr/logr@v1.4.4, plugin: github.com/go-logr/logr@v1.4.4 => ../logr)"},
		{name: "module checksum", plugin: func(p *debug.BuildInfo) { p.Deps[2].Sum = "h1:other=" },
			want: "module github.com/go-logr/logr checksum differs"},
		{name: "released host, other converge version", host: func(h *debug.BuildInfo) { h.Main.Version = "v1.2.0" },
			plugin: func(p *debug.BuildInfo) {
				p.Deps[1] = &debug.Module{Path: "github.com/converge-dev/converge", Version: "v1.1.0"}
			}, want: "module github.com/converge-dev/converge differs (converge: github.com/converge-dev/converge@v1.2.0"},
		{name: "released host, same converge version", host: func(h *debug.BuildInfo) { h.Main.Version = "v1.2.0" },
			plugin: func(p *debug.BuildInfo) {
				p.Deps[1] = &debug.Module{Path: "github.com/converge-dev/converge", Version: "v1.2.0"}
			}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, p := hostInfo(), pluginInfo()
			if tt.host != nil {
				tt.host(h)
			}
			if tt.plugin != nil {
				tt.plugin(p)
			}
			err := CompareBuildInfo(h, p, "/plugins/memcached.so")
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CompareBuildInfo: %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CompareBuildInfo: %v\nwant it to contain %q", err, tt.want)
			}
			var me *MismatchError
			if errors.As(err, &me) && !strings.Contains(err.Error(), "converge operator build DIR (the directory of example.com/memcached/plugin) -o memcached.so") {
				t.Errorf("error does not say how to rebuild: %v", err)
			}
		})
	}
}

func TestTranslate(t *testing.T) {
	t.Parallel()
	raw := errors.New(`plugin.Open("/p/x"): plugin was built with a different version of package github.com/converge-dev/converge/framework/api`)
	err := translate(hostInfo(), "/p/x.so", raw)
	if strings.Contains(err.Error(), "plugin was built with") || !strings.Contains(err.Error(), "package github.com/converge-dev/converge/framework/api") ||
		!strings.Contains(err.Error(), "converge operator build") {
		t.Errorf("translate: %v", err)
	}
}
