package apiserver

import (
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Aggregated discovery (apidiscovery.k8s.io v2 and v2beta1): /api and /apis
// answer with every group, version and resource in one document when the
// client's Accept asks for it first, as kubectl 1.26+ and client-go do; any
// other Accept gets the legacy APIVersions / APIGroupList (discovery.go).
// Resources, verbs and subresources come from the same registry entries as
// the legacy documents, so both always agree, CRDs included.

// aggregatedVersion returns the apidiscovery version ("v2" or "v2beta1") the
// Accept header asks for before any plain JSON type, or "".
func aggregatedVersion(accept string) string {
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch {
		case mt == "application/json" && params["g"] == "apidiscovery.k8s.io" && params["as"] == "APIGroupDiscoveryList":
			if v := params["v"]; v == "v2" || v == "v2beta1" {
				return v
			}
		case mt == "application/json" && params["g"] == "" || mt == "*/*" || mt == "application/*":
			return "" // plain JSON comes first: legacy discovery
		}
	}
	return ""
}

type discoveryGVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type discoverySubresource struct {
	Subresource  string       `json:"subresource"`
	ResponseKind discoveryGVK `json:"responseKind"`
	Verbs        []string     `json:"verbs"`
}

type discoveryResource struct {
	Resource         string                 `json:"resource"`
	ResponseKind     discoveryGVK           `json:"responseKind"`
	Scope            string                 `json:"scope"`
	SingularResource string                 `json:"singularResource"`
	Verbs            []string               `json:"verbs"`
	ShortNames       []string               `json:"shortNames,omitempty"`
	Categories       []string               `json:"categories,omitempty"`
	Subresources     []discoverySubresource `json:"subresources,omitempty"`
}

type discoveryVersion struct {
	Version   string              `json:"version"`
	Resources []discoveryResource `json:"resources"`
	Freshness string              `json:"freshness"`
}

type discoveryGroup struct {
	Metadata map[string]any     `json:"metadata"`
	Versions []discoveryVersion `json:"versions"`
}

// serveAggregated writes the APIGroupDiscoveryList of the core group (core)
// or of every other group, in apidiscovery version v.
func (s *Server) serveAggregated(w http.ResponseWriter, v string, core bool) {
	byGV := map[api.GroupVersion][]*registry.Resource{}
	for _, res := range s.opts.Registry.All() {
		byGV[res.GroupVersion] = append(byGV[res.GroupVersion], res)
	}
	var items []discoveryGroup
	if core {
		v1 := api.GroupVersion{Version: "v1"}
		items = []discoveryGroup{{Metadata: map[string]any{}, Versions: []discoveryVersion{discoveryVersionOf(v1, byGV[v1])}}}
	} else {
		groups, remote := s.mergeRemote(s.groups())
		for _, g := range groups {
			dg := discoveryGroup{Metadata: map[string]any{"name": g.Name}}
			for _, v := range g.Versions { // preferred version first
				gv := api.GroupVersion{Group: g.Name, Version: v.Version}
				if rv := remote[gv]; rv != nil {
					dg.Versions = append(dg.Versions, remoteDiscoveryVersion(rv))
					continue
				}
				dg.Versions = append(dg.Versions, discoveryVersionOf(gv, byGV[gv]))
			}
			items = append(items, dg)
		}
	}
	if items == nil {
		items = []discoveryGroup{}
	}
	b, err := api.EncodeJSON(map[string]any{
		"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/" + v, "metadata": map[string]any{}, "items": items,
	})
	if err != nil {
		writeError(w, internalError("encode discovery: %v", err))
		return
	}
	w.Header().Set("Vary", "Accept")
	w.Header().Set("Content-Type", "application/json;g=apidiscovery.k8s.io;v="+v+";as=APIGroupDiscoveryList")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// discoveryVersionOf lists resources, those of gv, with their subresources.
func discoveryVersionOf(gv api.GroupVersion, resources []*registry.Resource) discoveryVersion {
	out := discoveryVersion{Version: gv.Version, Freshness: "Current", Resources: []discoveryResource{}}
	slices.SortFunc(resources, func(a, b *registry.Resource) int { return strings.Compare(a.Resource, b.Resource) })
	for _, res := range resources {
		entries := discoveryEntries(res)
		top := entries[0]
		scope := "Cluster"
		if res.Namespaced {
			scope = "Namespaced"
		}
		dr := discoveryResource{
			Resource: res.Resource, Scope: scope, SingularResource: top.SingularName, Verbs: top.Verbs,
			ShortNames: top.ShortNames, Categories: top.Categories,
			ResponseKind: discoveryGVK{Group: gv.Group, Version: gv.Version, Kind: top.Kind},
		}
		if dr.Verbs == nil {
			dr.Verbs = []string{}
		}
		for _, e := range entries[1:] {
			sub := discoverySubresource{Subresource: strings.TrimPrefix(e.Name, res.Resource+"/"), Verbs: e.Verbs,
				ResponseKind: discoveryGVK{Group: gv.Group, Version: gv.Version, Kind: e.Kind}}
			if e.Group != "" || e.Version != "" {
				sub.ResponseKind.Group, sub.ResponseKind.Version = e.Group, e.Version
			}
			if sub.Verbs == nil {
				sub.Verbs = []string{}
			}
			dr.Subresources = append(dr.Subresources, sub)
		}
		out.Resources = append(out.Resources, dr)
	}
	return out
}
