package filters

import (
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// Impersonation request headers (kubectl --as, --as-group, --as-uid).
const (
	HeaderImpersonateUser        = "Impersonate-User"
	HeaderImpersonateGroup       = "Impersonate-Group"
	HeaderImpersonateUID         = "Impersonate-Uid"
	HeaderImpersonateExtraPrefix = "Impersonate-Extra-"
)

// WithImpersonation lets an authenticated user act as another one with the
// Impersonate-* headers, as kube-apiserver does: the caller must be allowed
// to "impersonate" users (or serviceaccounts in their namespace), each group,
// the uid (authentication.k8s.io uids) and each extra value
// (authentication.k8s.io userextras/KEY); otherwise 403. Groups, uid or extras
// without a user are a 400. The request then runs as the impersonated user:
// the given groups (a ServiceAccount gets its groups when none are given)
// plus system:authenticated. The headers are removed.
func WithImpersonation(next http.Handler, az Authorizer) http.Handler {
	extraPrefix := textproto.CanonicalMIMEHeaderKey(HeaderImpersonateExtraPrefix)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.Header.Get(HeaderImpersonateUser)
		groups := r.Header.Values(HeaderImpersonateGroup)
		uid := r.Header.Get(HeaderImpersonateUID)
		var extra map[string][]string // allocated only when a request impersonates extras
		for k, vs := range r.Header {
			if rest, ok := strings.CutPrefix(k, extraPrefix); ok && rest != "" {
				key, err := url.PathUnescape(rest)
				if err != nil {
					key = rest
				}
				if extra == nil {
					extra = map[string][]string{}
				}
				extra[strings.ToLower(key)] = vs
			}
		}
		if name == "" && len(groups) == 0 && uid == "" && len(extra) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		if name == "" {
			WriteStatus(w, apierrors.NewBadRequest("requested impersonation of groups, uid or extra fields without impersonating a user"))
			return
		}
		ctx := r.Context()
		caller, _ := UserFrom(ctx)
		check := func(group, resource, namespace, objName string) bool {
			a := Attributes{User: caller, Verb: "impersonate", ResourceRequest: true, APIGroup: group,
				Resource: resource, Namespace: namespace, Name: objName}
			if d, _, _ := az.Authorize(ctx, a); d == DecisionAllow {
				return true
			}
			msg := ForbiddenMessage(a)
			WriteStatus(w, apierrors.NewForbidden(api.GroupResource{Group: group, Resource: resource}, objName, fmt.Errorf("%s", msg)))
			return false
		}
		u := &User{Name: name, UID: uid}
		if ns, sa, ok := ServiceAccountOf(name); ok {
			if !check("", "serviceaccounts", ns, sa) {
				return
			}
			if len(groups) == 0 {
				u.Groups = []string{GroupServiceAccounts, GroupServiceAccounts + ":" + ns}
			}
		} else if !check("", "users", "", name) {
			return
		}
		for _, g := range groups {
			if !check("", "groups", "", g) {
				return
			}
		}
		if uid != "" && !check("authentication.k8s.io", "uids", "", uid) {
			return
		}
		for k, vs := range extra {
			for _, v := range vs {
				if !check("authentication.k8s.io", "userextras/"+k, "", v) {
					return
				}
			}
			if u.Extra == nil {
				u.Extra = map[string][]string{}
			}
			u.Extra[k] = vs
		}
		u.Groups = append(u.Groups, groups...)
		switch {
		case name == UserAnonymous:
			if !u.InGroup(GroupUnauthenticated) {
				u.Groups = append(u.Groups, GroupUnauthenticated)
			}
		case !u.InGroup(GroupAuthenticated):
			u.Groups = append(u.Groups, GroupAuthenticated)
		}
		r = r.Clone(WithUser(ctx, u))
		for k := range r.Header {
			if strings.HasPrefix(k, "Impersonate-") {
				r.Header.Del(k)
			}
		}
		recordImpersonation(r.Context(), u)
		next.ServeHTTP(w, r)
	})
}
