package apiserver

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Legacy (non-aggregated) discovery, generated from the registry. Clients that
// ask for aggregated discovery first get it instead (aggregated.go).

type groupVersionForDiscovery struct {
	GroupVersion string `json:"groupVersion"`
	Version      string `json:"version"`
}

type apiGroup struct {
	Kind             string                     `json:"kind,omitempty"`
	APIVersion       string                     `json:"apiVersion,omitempty"`
	Name             string                     `json:"name"`
	Versions         []groupVersionForDiscovery `json:"versions"`
	PreferredVersion groupVersionForDiscovery   `json:"preferredVersion"`
}

type apiResource struct {
	Name               string   `json:"name"`
	SingularName       string   `json:"singularName"`
	Namespaced         bool     `json:"namespaced"`
	Group              string   `json:"group,omitempty"`
	Version            string   `json:"version,omitempty"`
	Kind               string   `json:"kind"`
	Verbs              []string `json:"verbs"`
	ShortNames         []string `json:"shortNames,omitempty"`
	Categories         []string `json:"categories,omitempty"`
	StorageVersionHash string   `json:"storageVersionHash,omitempty"`
}

func (s *Server) serveAPIVersions(w http.ResponseWriter, r *http.Request) {
	if v := aggregatedVersion(r.Header.Get("Accept")); v != "" {
		s.serveAggregated(w, v, true)
		return
	}
	w.Header().Set("Vary", "Accept")
	writeJSON(w, http.StatusOK, map[string]any{
		"kind": "APIVersions", "versions": []string{"v1"},
		"serverAddressByClientCIDRs": []map[string]string{{"clientCIDR": "0.0.0.0/0", "serverAddress": r.Host}},
	})
}

// groups returns every non-core group with its versions in preference order.
func (s *Server) groups() []apiGroup {
	versions := map[string][]string{}
	var names []string
	for _, res := range s.opts.Registry.All() {
		g := res.GroupVersion.Group
		if g == "" {
			continue
		}
		if _, ok := versions[g]; !ok {
			names = append(names, g)
		}
		if !slices.Contains(versions[g], res.GroupVersion.Version) {
			versions[g] = append(versions[g], res.GroupVersion.Version)
		}
	}
	slices.SortFunc(names, compareGroups)
	out := make([]apiGroup, 0, len(names))
	for _, g := range names {
		vs := versions[g]
		slices.SortFunc(vs, CompareVersions)
		ag := apiGroup{Name: g}
		for _, v := range vs {
			ag.Versions = append(ag.Versions, groupVersionForDiscovery{GroupVersion: g + "/" + v, Version: v})
		}
		ag.PreferredVersion = ag.Versions[0]
		out = append(out, ag)
	}
	return out
}

// builtinGroupOrder puts Kubernetes' own groups first, in the order kube-apiserver
// lists them; other groups follow alphabetically.
var builtinGroupOrder = []string{"apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
	"authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io", "networking.k8s.io", "policy",
	"rbac.authorization.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io",
	"scheduling.k8s.io", "coordination.k8s.io", "node.k8s.io", "discovery.k8s.io", "flowcontrol.apiserver.k8s.io"}

// GroupPriority is the groupPriorityMinimum of a group's APIService: Kubernetes'
// own groups from 18000 down in discovery order (the core group 18000 too),
// others 1000 (what kube-apiserver gives custom resources' groups).
func GroupPriority(group string) int32 {
	if group == "" {
		return 18000
	}
	if i := slices.Index(builtinGroupOrder, group); i >= 0 {
		return int32(18000 - 100*i)
	}
	return 1000
}

func compareGroups(a, b string) int {
	ia, ib := slices.Index(builtinGroupOrder, a), slices.Index(builtinGroupOrder, b)
	switch {
	case ia >= 0 && ib >= 0:
		return ia - ib
	case ia >= 0:
		return -1
	case ib >= 0:
		return 1
	}
	return strings.Compare(a, b)
}

// CompareVersions orders Kubernetes versions by priority: GA before beta before
// alpha, higher numbers first, non-conforming names last alphabetically.
func CompareVersions(a, b string) int {
	pa, pb := versionPriority(a), versionPriority(b)
	for i := range pa {
		if pa[i] != pb[i] {
			if pa[i] > pb[i] {
				return -1
			}
			return 1
		}
	}
	return strings.Compare(a, b)
}

// versionPriority returns (level, major, minor): level 3 GA, 2 beta, 1 alpha, 0 other.
func versionPriority(v string) [3]int {
	if !strings.HasPrefix(v, "v") {
		return [3]int{}
	}
	rest := v[1:]
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 {
		return [3]int{}
	}
	major, _ := strconv.Atoi(rest[:i])
	rest = rest[i:]
	if rest == "" {
		return [3]int{3, major, 0}
	}
	level := 0
	switch {
	case strings.HasPrefix(rest, "beta"):
		level, rest = 2, rest[4:]
	case strings.HasPrefix(rest, "alpha"):
		level, rest = 1, rest[5:]
	default:
		return [3]int{}
	}
	minor, err := strconv.Atoi(rest)
	if err != nil {
		return [3]int{}
	}
	return [3]int{level, major, minor}
}

func (s *Server) serveAPIGroupList(w http.ResponseWriter, r *http.Request) {
	if v := aggregatedVersion(r.Header.Get("Accept")); v != "" {
		s.serveAggregated(w, v, false)
		return
	}
	w.Header().Set("Vary", "Accept")
	groups, _ := s.mergeRemote(s.groups())
	writeJSON(w, http.StatusOK, map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

func (s *Server) serveAPIGroup(w http.ResponseWriter, r *http.Request, group string) {
	for _, g := range s.groups() {
		if g.Name == group {
			g.Kind, g.APIVersion = "APIGroup", "v1"
			writeJSON(w, http.StatusOK, g)
			return
		}
	}
	writeError(w, notFoundPath(r.URL.Path))
}

func (s *Server) serveResourceList(w http.ResponseWriter, r *http.Request, gv api.GroupVersion) {
	var resources []apiResource
	for _, res := range s.opts.Registry.All() {
		if res.GroupVersion != gv {
			continue
		}
		resources = append(resources, discoveryEntries(res)...)
	}
	if resources == nil {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv.String(), "resources": resources,
	})
}

func discoveryEntries(res *registry.Resource) []apiResource {
	singular := res.Singular
	if singular == "" {
		singular = strings.ToLower(res.Kind)
	}
	out := []apiResource{{
		Name: res.Resource, SingularName: singular, Namespaced: res.Namespaced, Kind: res.Kind,
		Verbs: res.ServedVerbs(), ShortNames: res.ShortNames, Categories: res.Categories,
	}}
	if res.StatusSubresource {
		out = append(out, apiResource{Name: res.Resource + "/status", Namespaced: res.Namespaced, Kind: res.Kind,
			Verbs: []string{"get", "patch", "update"}})
	}
	if res.Scale != nil {
		out = append(out, apiResource{Name: res.Resource + "/scale", Namespaced: res.Namespaced,
			Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: []string{"get", "patch", "update"}})
	}
	names := make([]string, 0, len(res.Subresources))
	for n := range res.Subresources {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		sub := res.Subresources[n]
		e := apiResource{Name: res.Resource + "/" + n, Namespaced: res.Namespaced, Kind: res.Kind, Verbs: sub.Verbs()}
		if gvk := sub.Kind(); gvk.Kind != "" {
			e.Kind = gvk.Kind
			if gvk.GroupVersion() != res.GroupVersion && gvk.Version != "" {
				e.Group, e.Version = gvk.Group, gvk.Version
			}
		}
		out = append(out, e)
	}
	return out
}
