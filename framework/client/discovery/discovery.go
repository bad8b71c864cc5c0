// Package discovery reads the API server's legacy discovery documents (/api,
// /apis and one resource list per group version) and returns the served
// resources, for controllers that act on every resource (the garbage
// collector, namespace deletion).
package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client/rest"
)

// Resource is one served collection (subresources are left out).
type Resource struct {
	GVR        api.GroupVersionResource
	Kind       string
	Namespaced bool
	Verbs      []string
}

// GVK returns the kind the resource serves.
func (r Resource) GVK() api.GroupVersionKind {
	return api.GroupVersionKind{Group: r.GVR.Group, Version: r.GVR.Version, Kind: r.Kind}
}

// PreferredResources returns the resources of every group's preferred version
// that support all of verbs. Group versions whose resource list cannot be read
// are skipped and reported in the joined error, so a partial answer is usable.
func PreferredResources(ctx context.Context, rc *rest.Client, verbs ...string) ([]Resource, error) {
	get := func(path string, into any) error {
		resp, err := rc.Do(ctx, rest.Request{Method: http.MethodGet, Path: path})
		if err != nil {
			return fmt.Errorf("discovery %s: %w", path, err)
		}
		if err := json.Unmarshal(resp.Body, into); err != nil {
			return fmt.Errorf("discovery %s: decode: %w", path, err)
		}
		return nil
	}
	var core struct {
		Versions []string `json:"versions"`
	}
	if err := get("/api", &core); err != nil {
		return nil, err
	}
	var groups struct {
		Groups []struct {
			Name             string `json:"name"`
			PreferredVersion struct {
				Version string `json:"version"`
			} `json:"preferredVersion"`
		} `json:"groups"`
	}
	if err := get("/apis", &groups); err != nil {
		return nil, err
	}
	var gvs []api.GroupVersion
	if len(core.Versions) > 0 {
		gvs = append(gvs, api.GroupVersion{Version: core.Versions[0]})
	}
	for _, g := range groups.Groups {
		if g.PreferredVersion.Version != "" {
			gvs = append(gvs, api.GroupVersion{Group: g.Name, Version: g.PreferredVersion.Version})
		}
	}
	var out []Resource
	var errs []error
	for _, gv := range gvs {
		path := "/apis/" + gv.Group + "/" + gv.Version
		if gv.Group == "" {
			path = "/api/" + gv.Version
		}
		var list struct {
			Resources []struct {
				Name       string   `json:"name"`
				Namespaced bool     `json:"namespaced"`
				Kind       string   `json:"kind"`
				Verbs      []string `json:"verbs"`
			} `json:"resources"`
		}
		if err := get(path, &list); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, r := range list.Resources {
			if strings.Contains(r.Name, "/") || !containsAll(r.Verbs, verbs) {
				continue
			}
			out = append(out, Resource{
				GVR:  api.GroupVersionResource{Group: gv.Group, Version: gv.Version, Resource: r.Name},
				Kind: r.Kind, Namespaced: r.Namespaced, Verbs: r.Verbs,
			})
		}
	}
	return out, errors.Join(errs...)
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
