package flowcontrol

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// compiledSchema is a schema bound to its level, with the ServiceAccount
// subjects turned into user names (or prefixes) once.
type compiledSchema struct {
	fs         *FlowSchema
	level      *level
	levelState *levelState
	rules      []compiledRule
	uidHeader  []string
	// capped: the schema's flows are users held to their share of the
	// level.
	capped bool
	// seats observes the requests' estimated seats
	// (apiserver_flowcontrol_work_estimated_seats).
	seats prometheus.Observer
}

type compiledRule struct {
	users, groups []string
	// saUsers are exact ServiceAccount user names, saPrefixes
	// "system:serviceaccount:NS:" for a namespace's every ServiceAccount.
	saUsers, saPrefixes []string
	resource            []ResourceRule
	nonResource         []NonResourceRule
}

func compileRule(r Rule) compiledRule {
	var c compiledRule
	for _, s := range r.Subjects {
		switch {
		case s.User != "":
			c.users = append(c.users, s.User)
		case s.Group != "":
			c.groups = append(c.groups, s.Group)
		case s.ServiceAccount != nil:
			prefix := filters.ServiceAccountUsernamePrefix + s.ServiceAccount.Namespace + ":"
			if s.ServiceAccount.Name == Wildcard {
				c.saPrefixes = append(c.saPrefixes, prefix)
			} else {
				c.saUsers = append(c.saUsers, prefix+s.ServiceAccount.Name)
			}
		}
	}
	c.resource, c.nonResource = r.ResourceRules, r.NonResourceRules
	return c
}

// request is what classification reads of a request.
type request struct {
	user   string
	groups []string
	ri     *filters.RequestInfo
}

func (c *compiledRule) matches(q *request) bool {
	return c.matchesSubject(q) && c.matchesRequest(q.ri)
}

func (c *compiledRule) matchesSubject(q *request) bool {
	for _, u := range c.users {
		if u == Wildcard || u == q.user {
			return true
		}
	}
	for _, g := range c.groups {
		if g == Wildcard {
			return true
		}
		for _, have := range q.groups {
			if have == g {
				return true
			}
		}
	}
	for _, u := range c.saUsers {
		if u == q.user {
			return true
		}
	}
	for _, p := range c.saPrefixes {
		if strings.HasPrefix(q.user, p) {
			return true
		}
	}
	return false
}

func (c *compiledRule) matchesRequest(ri *filters.RequestInfo) bool {
	if ri.IsResourceRequest {
		for i := range c.resource {
			if matchesResource(&c.resource[i], ri) {
				return true
			}
		}
		return false
	}
	for i := range c.nonResource {
		r := &c.nonResource[i]
		if contains(r.Verbs, ri.Verb) && matchesURL(r.NonResourceURLs, ri.Path) {
			return true
		}
	}
	return false
}

func matchesResource(r *ResourceRule, ri *filters.RequestInfo) bool {
	if !contains(r.Verbs, ri.Verb) || !contains(r.APIGroups, ri.APIGroup) {
		return false
	}
	found := false
	for _, res := range r.Resources {
		if res == Wildcard || isResource(res, ri.Resource, ri.Subresource) {
			found = true
			break
		}
	}
	if !found {
		return false
	}
	if ri.Namespace == "" {
		return r.ClusterScope
	}
	return contains(r.Namespaces, ri.Namespace)
}

// isResource reports whether s is resource, or resource/sub for a
// subresource request, without building the string.
func isResource(s, resource, sub string) bool {
	if sub == "" {
		return s == resource
	}
	return len(s) == len(resource)+1+len(sub) && s[:len(resource)] == resource && s[len(resource)] == '/' &&
		s[len(resource)+1:] == sub
}

// contains reports whether list has v or the wildcard.
func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v || s == Wildcard {
			return true
		}
	}
	return false
}

func matchesURL(urls []string, path string) bool {
	for _, u := range urls {
		switch {
		case u == Wildcard || u == path:
			return true
		case strings.HasSuffix(u, "*") && strings.HasPrefix(path, u[:len(u)-1]):
			return true
		}
	}
	return false
}

// flowHash is the FNV-1a hash of the schema name and the distinguisher: the
// flow's identity for shuffle sharding and the per-flow share.
func flowHash(schema, distinguisher string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(schema); i++ {
		h = (h ^ uint64(schema[i])) * prime
	}
	h = (h ^ 0xff) * prime
	for i := 0; i < len(distinguisher); i++ {
		h = (h ^ uint64(distinguisher[i])) * prime
	}
	return h
}
