package filters

import (
	"context"
	"slices"
)

// Well-known users and groups.
const (
	// GroupMasters is always allowed everything (cluster-admin by construction).
	GroupMasters = "system:masters"
	// GroupAuthenticated is added to every authenticated user.
	GroupAuthenticated = "system:authenticated"
	// GroupUnauthenticated is the group of the anonymous user.
	GroupUnauthenticated = "system:unauthenticated"
	// UserAnonymous is the user of requests without credentials on public paths.
	UserAnonymous = "system:anonymous"
	// GroupServiceAccounts holds every ServiceAccount.
	GroupServiceAccounts = "system:serviceaccounts"
	// ServiceAccountUsernamePrefix starts a ServiceAccount's user name
	// (system:serviceaccount:NAMESPACE:NAME).
	ServiceAccountUsernamePrefix = "system:serviceaccount:"
)

// User is an authenticated identity.
type User struct {
	Name   string              `json:"username"`
	UID    string              `json:"uid,omitempty"`
	Groups []string            `json:"groups,omitempty"`
	Extra  map[string][]string `json:"extra,omitempty"`
}

// InGroup reports whether u is a member of group.
func (u *User) InGroup(group string) bool { return u != nil && slices.Contains(u.Groups, group) }

// ServiceAccountUser returns the user of ServiceAccount namespace/name with its
// groups (system:serviceaccounts, system:serviceaccounts:NAMESPACE,
// system:authenticated).
func ServiceAccountUser(namespace, name, uid string) *User {
	return &User{
		Name: ServiceAccountUsernamePrefix + namespace + ":" + name, UID: uid,
		Groups: []string{GroupServiceAccounts, GroupServiceAccounts + ":" + namespace, GroupAuthenticated},
	}
}

// ServiceAccountOf splits a ServiceAccount user name into namespace and name; ok
// is false for other users.
func ServiceAccountOf(username string) (namespace, name string, ok bool) {
	rest, found := cutPrefix(username, ServiceAccountUsernamePrefix)
	if !found {
		return "", "", false
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] == ':' {
			if i == 0 || i == len(rest)-1 {
				return "", "", false
			}
			return rest[:i], rest[i+1:], true
		}
	}
	return "", "", false
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return s, false
}

type userKey struct{}

// WithUser returns ctx carrying u. In-process callers use it to act as a user
// (typically a system:masters identity) through the filtered handler.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user ctx carries.
func UserFrom(ctx context.Context) (*User, bool) {
	u, ok := ctx.Value(userKey{}).(*User)
	return u, ok && u != nil
}
