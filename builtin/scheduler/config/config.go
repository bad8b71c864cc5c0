package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"

	"sigs.k8s.io/yaml"
)

// DefaultSchedulerName is the profile used by pods without spec.schedulerName.
const DefaultSchedulerName = "default-scheduler"

// Plugin names an enabled or disabled plugin; Weight applies to Score.
type Plugin struct {
	Name   string `json:"name"`
	Weight int32  `json:"weight,omitempty"`
}

// PluginSet enables and disables plugins at one extension point.
type PluginSet struct {
	Enabled  []Plugin `json:"enabled,omitempty"`
	Disabled []Plugin `json:"disabled,omitempty"`
}

// Plugins configures every extension point. MultiPoint enables a plugin at
// every extension point it implements.
type Plugins struct {
	PreEnqueue PluginSet `json:"preEnqueue,omitempty"`
	PreFilter  PluginSet `json:"preFilter,omitempty"`
	Filter     PluginSet `json:"filter,omitempty"`
	PostFilter PluginSet `json:"postFilter,omitempty"`
	PreScore   PluginSet `json:"preScore,omitempty"`
	Score      PluginSet `json:"score,omitempty"`
	Reserve    PluginSet `json:"reserve,omitempty"`
	Permit     PluginSet `json:"permit,omitempty"`
	PreBind    PluginSet `json:"preBind,omitempty"`
	Bind       PluginSet `json:"bind,omitempty"`
	PostBind   PluginSet `json:"postBind,omitempty"`
	MultiPoint PluginSet `json:"multiPoint,omitempty"`
}

// PluginConfig holds a plugin's args as raw JSON.
type PluginConfig struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Profile is one scheduler name with its plugins.
type Profile struct {
	SchedulerName string         `json:"schedulerName,omitempty"`
	Plugins       *Plugins       `json:"plugins,omitempty"`
	PluginConfig  []PluginConfig `json:"pluginConfig,omitempty"`
	// PercentageOfNodesToScore overrides the global value for this profile.
	PercentageOfNodesToScore *int32 `json:"percentageOfNodesToScore,omitempty"`
}

// Configuration is the file's content.
type Configuration struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	// PercentageOfNodesToScore: 0 means the adaptive default
	// (50 − nodes/125 %, at least 5 %, at least 100 nodes).
	PercentageOfNodesToScore *int32 `json:"percentageOfNodesToScore,omitempty"`
	// Parallelism is the number of Filter/Score workers (default 16).
	Parallelism int32     `json:"parallelism,omitempty"`
	Profiles    []Profile `json:"profiles,omitempty"`
}

// DefaultMultiPoint is Kubernetes' default plugin set with its score
// weights, in order.
func DefaultMultiPoint() []Plugin {
	return []Plugin{
		{Name: "SchedulingGates"},
		{Name: "NodeUnschedulable"},
		{Name: "NodeName"},
		{Name: "TaintToleration", Weight: 3},
		{Name: "NodeAffinity", Weight: 2},
		{Name: "NodePorts"},
		{Name: "NodeResourcesFit", Weight: 1},
		{Name: "VolumeBinding"},
		{Name: "PodTopologySpread", Weight: 2},
		{Name: "InterPodAffinity", Weight: 2},
		{Name: "DefaultPreemption"},
		{Name: "NodeResourcesBalancedAllocation", Weight: 1},
		{Name: "ImageLocality", Weight: 1},
		{Name: "DefaultBinder"},
	}
}

// Load reads a file; an empty path gives the defaults.
func Load(path string) (*Configuration, error) {
	if path == "" {
		c := &Configuration{}
		return c, c.Complete()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scheduler config: %w", err)
	}
	return Parse(data)
}

// Parse decodes YAML or JSON and completes defaults.
func Parse(data []byte) (*Configuration, error) {
	c := &Configuration{}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		return nil, fmt.Errorf("decode scheduler config: %w", err)
	}
	if err := c.Complete(); err != nil {
		return nil, err
	}
	return c, nil
}

// Complete applies defaults and validates.
func (c *Configuration) Complete() error {
	if len(c.Profiles) == 0 {
		c.Profiles = []Profile{{}}
	}
	if c.Parallelism == 0 {
		c.Parallelism = 16
	}
	var errs []error
	seen := map[string]bool{}
	for i := range c.Profiles {
		p := &c.Profiles[i]
		if p.SchedulerName == "" {
			p.SchedulerName = DefaultSchedulerName
		}
		if seen[p.SchedulerName] {
			errs = append(errs, fmt.Errorf("profiles[%d].schedulerName: Duplicate value: %q", i, p.SchedulerName))
		}
		seen[p.SchedulerName] = true
		if p.PercentageOfNodesToScore == nil {
			p.PercentageOfNodesToScore = c.PercentageOfNodesToScore
		}
		if v := p.PercentageOfNodesToScore; v != nil && (*v < 0 || *v > 100) {
			errs = append(errs, fmt.Errorf("profiles[%d].percentageOfNodesToScore: Invalid value: %d: not in valid range [0-100]", i, *v))
		}
	}
	if c.Parallelism < 0 {
		errs = append(errs, fmt.Errorf("parallelism: Invalid value: %d: should be an integer greater than 0", c.Parallelism))
	}
	return errors.Join(errs...)
}

// ExtensionPoint names the extension points in Plugins.
type ExtensionPoint string

// Extension points.
const (
	PreEnqueue ExtensionPoint = "preEnqueue"
	PreFilter  ExtensionPoint = "preFilter"
	Filter     ExtensionPoint = "filter"
	PostFilter ExtensionPoint = "postFilter"
	PreScore   ExtensionPoint = "preScore"
	Score      ExtensionPoint = "score"
	Reserve    ExtensionPoint = "reserve"
	Permit     ExtensionPoint = "permit"
	PreBind    ExtensionPoint = "preBind"
	Bind       ExtensionPoint = "bind"
	PostBind   ExtensionPoint = "postBind"
)

// Set returns the PluginSet of an extension point.
func (p *Plugins) Set(ep ExtensionPoint) PluginSet {
	if p == nil {
		return PluginSet{}
	}
	switch ep {
	case PreEnqueue:
		return p.PreEnqueue
	case PreFilter:
		return p.PreFilter
	case Filter:
		return p.Filter
	case PostFilter:
		return p.PostFilter
	case PreScore:
		return p.PreScore
	case Score:
		return p.Score
	case Reserve:
		return p.Reserve
	case Permit:
		return p.Permit
	case PreBind:
		return p.PreBind
	case Bind:
		return p.Bind
	case PostBind:
		return p.PostBind
	}
	return PluginSet{}
}

// Resolve returns the ordered plugins of an extension point: the multiPoint
// plugins (defaults, then the profile's multiPoint.enabled) minus those
// disabled there or at the point, then the point's own enabled plugins
// (which also override a default's weight). implements reports whether a
// plugin implements the point (multiPoint plugins are only used where they do).
func (p *Profile) Resolve(ep ExtensionPoint, defaults []Plugin, implements func(name string) bool) []Plugin {
	set := p.Plugins.Set(ep)
	var multi PluginSet
	if p.Plugins != nil {
		multi = p.Plugins.MultiPoint
	}
	disabled := func(name string) bool {
		for _, d := range append(slices.Clone(multi.Disabled), set.Disabled...) {
			if d.Name == "*" || d.Name == name {
				return true
			}
		}
		return false
	}
	var out []Plugin
	add := func(pl Plugin) {
		if i := slices.IndexFunc(out, func(o Plugin) bool { return o.Name == pl.Name }); i >= 0 {
			out[i] = pl
			return
		}
		out = append(out, pl)
	}
	for _, pl := range defaults {
		if !disabled(pl.Name) && implements(pl.Name) {
			add(pl)
		}
	}
	for _, pl := range multi.Enabled {
		if implements(pl.Name) {
			add(pl)
		}
	}
	for _, pl := range set.Enabled {
		add(pl)
	}
	return out
}

// Args returns the raw args of a plugin in the profile, or nil.
func (p *Profile) Args(name string) json.RawMessage {
	for _, pc := range p.PluginConfig {
		if pc.Name == name {
			return pc.Args
		}
	}
	return nil
}
