package restmapper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client/rest"
)

// Mapping says which resource serves a kind.
type Mapping struct {
	// Resource is the plural resource (configmaps) in the kind's group-version.
	Resource api.GroupVersionResource
	// Kind is the kind the resource serves.
	Kind api.GroupVersionKind
	// Namespaced is false for cluster-scoped resources.
	Namespaced bool
	// Singular and ShortNames are alternative names of the resource.
	Singular   string
	ShortNames []string
	// Verbs the resource supports (get, list, watch, create, ...).
	Verbs []string
}

// NoKindMatchError is returned when discovery has no resource for a kind.
type NoKindMatchError struct {
	Kind api.GroupVersionKind
}

func (e *NoKindMatchError) Error() string {
	return fmt.Sprintf("no matches for kind %q in version %q", e.Kind.Kind, e.Kind.GroupVersion().String())
}

// NoResourceMatchError is returned when discovery has no resource of a name.
type NoResourceMatchError struct {
	Name string
}

func (e *NoResourceMatchError) Error() string {
	return fmt.Sprintf("the server doesn't have a resource type %q", e.Name)
}

// IsNoMatch reports whether err says a kind or resource is unknown to the server.
func IsNoMatch(err error) bool {
	var k *NoKindMatchError
	var r *NoResourceMatchError
	return errors.As(err, &k) || errors.As(err, &r)
}

// Options tune a Mapper. The zero value means defaults.
type Options struct {
	// MinRefreshInterval is the least time between two discovery re-reads of the
	// same document after a miss (default 1 s).
	MinRefreshInterval time.Duration
}

// Mapper is a lazy, self-refreshing discovery-based RESTMapper.
type Mapper struct {
	rc       *rest.Client
	interval time.Duration
	now      func() time.Time

	mu         sync.Mutex          // guards the fields below; never held during I/O
	groups     map[string][]string // group → versions, preferred first; nil until read
	groupsRead time.Time
	gvs        map[api.GroupVersion]*gvEntry
}

type gvEntry struct {
	read     time.Time
	mappings []Mapping
}

// New returns a Mapper reading discovery through rc.
func New(rc *rest.Client, opts Options) *Mapper {
	if opts.MinRefreshInterval <= 0 {
		opts.MinRefreshInterval = time.Second
	}
	return &Mapper{rc: rc, interval: opts.MinRefreshInterval, now: time.Now, gvs: map[api.GroupVersion]*gvEntry{}}
}

// RESTMapping returns the resource serving gvk.
func (m *Mapper) RESTMapping(ctx context.Context, gvk api.GroupVersionKind) (*Mapping, error) {
	find := func(e *gvEntry) *Mapping {
		for i := range e.mappings {
			if e.mappings[i].Kind == gvk {
				mp := e.mappings[i]
				return &mp
			}
		}
		return nil
	}
	gv := gvk.GroupVersion()
	for refreshed := false; ; refreshed = true {
		e, err := m.groupVersion(ctx, gv, refreshed)
		if err != nil {
			return nil, err
		}
		if e != nil {
			if mp := find(e); mp != nil {
				return mp, nil
			}
		}
		if refreshed {
			return nil, &NoKindMatchError{Kind: gvk}
		}
	}
}

// ResourceFor finds a resource by plural, singular or short name, optionally
// qualified by group ("deployments.apps", "deploy"). It reads discovery of every
// group's preferred version.
func (m *Mapper) ResourceFor(ctx context.Context, name string) (*Mapping, error) {
	name = strings.ToLower(name)
	res, group, qualified := strings.Cut(name, ".")
	for refreshed := false; ; refreshed = true {
		groups, err := m.groupList(ctx, refreshed)
		if err != nil {
			return nil, err
		}
		names := make([]string, 0, len(groups))
		for g := range groups {
			names = append(names, g)
		}
		slices.Sort(names) // core group "" first, then stable order
		for _, g := range names {
			if qualified && g != group {
				continue
			}
			versions := groups[g]
			if len(versions) == 0 {
				continue
			}
			e, err := m.groupVersion(ctx, api.GroupVersion{Group: g, Version: versions[0]}, refreshed)
			if err != nil {
				return nil, err
			}
			if e == nil {
				continue
			}
			for _, mp := range e.mappings {
				if mp.Resource.Resource == res || mp.Singular == res || slices.Contains(mp.ShortNames, res) {
					out := mp
					return &out, nil
				}
			}
		}
		if refreshed {
			return nil, &NoResourceMatchError{Name: name}
		}
	}
}

// Reset forgets everything learnt; the next lookup reads discovery again.
func (m *Mapper) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.groups, m.gvs = nil, map[api.GroupVersion]*gvEntry{}
}

// groupList returns group → versions, reading /api and /apis on first use, or
// again when refresh is asked and the last read is old enough.
func (m *Mapper) groupList(ctx context.Context, refresh bool) (map[string][]string, error) {
	m.mu.Lock()
	groups, read := m.groups, m.groupsRead
	m.mu.Unlock()
	if groups != nil && (!refresh || m.now().Sub(read) < m.interval) {
		return groups, nil
	}
	groups, err := m.readGroups(ctx)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.groups, m.groupsRead = groups, m.now()
	m.mu.Unlock()
	return groups, nil
}

// groupVersion returns the resource list of gv, or nil if the server does not
// serve gv. It reads discovery on first use and, when refresh is asked, again if
// the last read is old enough.
func (m *Mapper) groupVersion(ctx context.Context, gv api.GroupVersion, refresh bool) (*gvEntry, error) {
	m.mu.Lock()
	e := m.gvs[gv]
	m.mu.Unlock()
	if e != nil && (!refresh || m.now().Sub(e.read) < m.interval) {
		return e, nil
	}
	groups, err := m.groupList(ctx, refresh && e == nil)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(groups[gv.Group], gv.Version) {
		return nil, nil
	}
	mappings, err := m.readResources(ctx, gv)
	if apierrors.IsNotFound(err) {
		return nil, nil // removed between the two reads
	}
	if err != nil {
		return nil, err
	}
	e = &gvEntry{read: m.now(), mappings: mappings}
	m.mu.Lock()
	m.gvs[gv] = e
	m.mu.Unlock()
	return e, nil
}

func (m *Mapper) get(ctx context.Context, path string, into any) error {
	resp, err := m.rc.Do(ctx, rest.Request{Method: http.MethodGet, Path: path})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(resp.Body, into); err != nil {
		return fmt.Errorf("discovery %s: decode: %w", path, err)
	}
	return nil
}

func (m *Mapper) readGroups(ctx context.Context) (map[string][]string, error) {
	groups := map[string][]string{}
	var core struct {
		Versions []string `json:"versions"`
	}
	if err := m.get(ctx, "/api", &core); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	if len(core.Versions) > 0 {
		groups[""] = core.Versions
	}
	var list struct {
		Groups []struct {
			Name     string `json:"name"`
			Versions []struct {
				Version string `json:"version"`
			} `json:"versions"`
			PreferredVersion struct {
				Version string `json:"version"`
			} `json:"preferredVersion"`
		} `json:"groups"`
	}
	if err := m.get(ctx, "/apis", &list); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	for _, g := range list.Groups {
		var vs []string
		if p := g.PreferredVersion.Version; p != "" {
			vs = append(vs, p)
		}
		for _, v := range g.Versions {
			if !slices.Contains(vs, v.Version) {
				vs = append(vs, v.Version)
			}
		}
		groups[g.Name] = vs
	}
	return groups, nil
}

func (m *Mapper) readResources(ctx context.Context, gv api.GroupVersion) ([]Mapping, error) {
	path := "/apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "/api/" + gv.Version
	}
	var list struct {
		Resources []struct {
			Name         string   `json:"name"`
			SingularName string   `json:"singularName"`
			Namespaced   bool     `json:"namespaced"`
			Kind         string   `json:"kind"`
			Verbs        []string `json:"verbs"`
			ShortNames   []string `json:"shortNames"`
		} `json:"resources"`
	}
	if err := m.get(ctx, path, &list); err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	out := make([]Mapping, 0, len(list.Resources))
	for _, r := range list.Resources {
		if strings.Contains(r.Name, "/") || r.Kind == "" {
			continue
		}
		singular := r.SingularName
		if singular == "" {
			singular = strings.ToLower(r.Kind)
		}
		out = append(out, Mapping{
			Resource: gv.WithResource(r.Name), Kind: gv.WithKind(r.Kind), Namespaced: r.Namespaced,
			Singular: singular, ShortNames: r.ShortNames, Verbs: r.Verbs,
		})
	}
	return out, nil
}
