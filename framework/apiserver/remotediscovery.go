package apiserver

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/converge-dev/converge/framework/api"
)

// RemoteVersion is a group version another server serves behind this one
// (an aggregated API server): discovery (/apis, legacy and aggregated)
// lists it beside the registry's, ordered as kube-aggregator orders
// APIServices, by group priority then version priority.
type RemoteVersion struct {
	Group, Version                 string
	GroupPriority, VersionPriority int32
	// ResourceList is the APIResourceList (JSON) the server answered for
	// /apis/GROUP/VERSION; aggregated discovery takes the version's
	// resources from it (none, and Freshness Stale, when nil).
	ResourceList []byte
}

// mergeRemote adds the remote versions of groups the registry does not
// serve to local (in discovery order) and returns every group ordered by
// priority (highest first) then name, with the remote versions by
// group version.
func (s *Server) mergeRemote(local []apiGroup) ([]apiGroup, map[api.GroupVersion]*RemoteVersion) {
	if s.opts.RemoteVersions == nil {
		return local, nil
	}
	remote := s.opts.RemoteVersions()
	if len(remote) == 0 {
		return local, nil
	}
	served := map[string]bool{}
	for _, g := range local {
		served[g.Name] = true
	}
	byGroup := map[string][]*RemoteVersion{}
	byGV := map[api.GroupVersion]*RemoteVersion{}
	prio := map[string]int32{}
	for i := range remote {
		rv := &remote[i]
		if served[rv.Group] || rv.Group == "" {
			continue
		}
		byGroup[rv.Group] = append(byGroup[rv.Group], rv)
		byGV[api.GroupVersion{Group: rv.Group, Version: rv.Version}] = rv
		prio[rv.Group] = max(prio[rv.Group], rv.GroupPriority)
	}
	out := slices.Clone(local)
	for g, vs := range byGroup {
		slices.SortFunc(vs, func(a, b *RemoteVersion) int {
			if c := cmp.Compare(b.VersionPriority, a.VersionPriority); c != 0 {
				return c
			}
			return CompareVersions(a.Version, b.Version)
		})
		ag := apiGroup{Name: g}
		for _, v := range vs {
			ag.Versions = append(ag.Versions, groupVersionForDiscovery{GroupVersion: g + "/" + v.Version, Version: v.Version})
		}
		ag.PreferredVersion = ag.Versions[0]
		out = append(out, ag)
	}
	priority := func(g string) int32 {
		if p, ok := prio[g]; ok {
			return p
		}
		return GroupPriority(g)
	}
	slices.SortStableFunc(out, func(a, b apiGroup) int {
		if c := cmp.Compare(priority(b.Name), priority(a.Name)); c != 0 {
			return c
		}
		if served[a.Name] && served[b.Name] {
			return compareGroups(a.Name, b.Name)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, byGV
}

// remoteDiscoveryVersion is the aggregated discovery of a remote version,
// from its APIResourceList.
func remoteDiscoveryVersion(rv *RemoteVersion) discoveryVersion {
	out := discoveryVersion{Version: rv.Version, Freshness: "Current", Resources: []discoveryResource{}}
	var list struct {
		Resources []apiResource `json:"resources"`
	}
	if rv.ResourceList == nil || json.Unmarshal(rv.ResourceList, &list) != nil {
		out.Freshness = "Stale"
		return out
	}
	top := map[string]int{}
	for _, r := range list.Resources {
		if strings.Contains(r.Name, "/") {
			continue
		}
		scope := "Cluster"
		if r.Namespaced {
			scope = "Namespaced"
		}
		dr := discoveryResource{Resource: r.Name, Scope: scope, SingularResource: r.SingularName, Verbs: r.Verbs,
			ShortNames: r.ShortNames, Categories: r.Categories,
			ResponseKind: discoveryGVK{Group: cmp.Or(r.Group, rv.Group), Version: cmp.Or(r.Version, rv.Version), Kind: r.Kind}}
		if dr.Verbs == nil {
			dr.Verbs = []string{}
		}
		top[r.Name] = len(out.Resources)
		out.Resources = append(out.Resources, dr)
	}
	for _, r := range list.Resources {
		parent, sub, ok := strings.Cut(r.Name, "/")
		i, found := top[parent]
		if !ok || !found {
			continue
		}
		ds := discoverySubresource{Subresource: sub, Verbs: r.Verbs,
			ResponseKind: discoveryGVK{Group: cmp.Or(r.Group, rv.Group), Version: cmp.Or(r.Version, rv.Version), Kind: r.Kind}}
		if ds.Verbs == nil {
			ds.Verbs = []string{}
		}
		out.Resources[i].Subresources = append(out.Resources[i].Subresources, ds)
	}
	slices.SortFunc(out.Resources, func(a, b discoveryResource) int { return strings.Compare(a.Resource, b.Resource) })
	return out
}
