package filters

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

func TestImpersonation(t *testing.T) {
	t.Parallel()
	// admin may impersonate anything; ops may impersonate users and the group
	// "viewers" only.
	az := AuthorizerFunc(func(_ context.Context, a Attributes) (Decision, string, error) {
		if a.User.Name == "admin" {
			return DecisionAllow, "", nil
		}
		if a.User.Name == "ops" && a.Verb == "impersonate" && (a.Resource == "users" || a.Resource == "groups" && a.Name == "viewers") {
			return DecisionAllow, "", nil
		}
		return DecisionNoOpinion, "", nil
	})
	var got *User
	h := WithImpersonation(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = UserFrom(r.Context())
		if r.Header.Get(HeaderImpersonateUser) != "" {
			t.Error("impersonation header passed on")
		}
	}), az)
	for _, tc := range []struct {
		name       string
		caller     string
		headers    map[string][]string
		code       int
		wantUser   string
		wantGroups []string
	}{
		{"no headers", "ops", nil, 200, "ops", nil},
		{"user", "ops", map[string][]string{"Impersonate-User": {"alice"}}, 200, "alice", []string{GroupAuthenticated}},
		{"user and allowed group", "ops", map[string][]string{"Impersonate-User": {"alice"}, "Impersonate-Group": {"viewers"}}, 200, "alice", []string{"viewers", GroupAuthenticated}},
		{"forbidden group", "ops", map[string][]string{"Impersonate-User": {"alice"}, "Impersonate-Group": {"system:masters"}}, 403, "", nil},
		{"service account needs its own permission", "ops", map[string][]string{"Impersonate-User": {"system:serviceaccount:ns:sa"}}, 403, "", nil},
		{"service account groups", "admin", map[string][]string{"Impersonate-User": {"system:serviceaccount:ns:sa"}}, 200, "system:serviceaccount:ns:sa",
			[]string{GroupServiceAccounts, GroupServiceAccounts + ":ns", GroupAuthenticated}},
		{"node", "admin", map[string][]string{"Impersonate-User": {"system:node:n1"}, "Impersonate-Group": {"system:nodes"}}, 200, "system:node:n1",
			[]string{"system:nodes", GroupAuthenticated}},
		{"uid needs permission", "ops", map[string][]string{"Impersonate-User": {"alice"}, "Impersonate-Uid": {"1"}}, 403, "", nil},
		{"group without user", "admin", map[string][]string{"Impersonate-Group": {"viewers"}}, 400, "", nil},
		{"nobody may", "carol", map[string][]string{"Impersonate-User": {"alice"}}, 403, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = nil
			r := httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil)
			for k, vs := range tc.headers {
				for _, v := range vs {
					r.Header.Add(k, v)
				}
			}
			r = r.WithContext(WithUser(r.Context(), &User{Name: tc.caller}))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != tc.code {
				t.Fatalf("code %d, want %d: %s", rec.Code, tc.code, rec.Body.String())
			}
			if tc.code != 200 {
				if got != nil {
					t.Fatal("handler ran")
				}
				return
			}
			if got.Name != tc.wantUser || !slices.Equal(got.Groups, tc.wantGroups) {
				t.Fatalf("user %+v, want %s %v", got, tc.wantUser, tc.wantGroups)
			}
		})
	}
}

type sinkFunc func(ev *AuditEvent) error

func (f sinkFunc) WriteEvent(ev *AuditEvent) error { return f(ev) }

// TestImpersonationAudit: the audit event names the caller as user and the
// impersonated user separately.
func TestImpersonationAudit(t *testing.T) {
	t.Parallel()
	var events []*AuditEvent
	auth := AuthenticatorFunc(func(r *http.Request) (*User, bool, error) { return &User{Name: "admin"}, true, nil })
	h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), Options{
		Authenticator: auth, Authorizer: AlwaysAllow,
		Audit: AuditOptions{Sink: sinkFunc(func(ev *AuditEvent) error { events = append(events, ev); return nil })},
	})
	r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/d/pods", nil)
	r.Header.Set(HeaderImpersonateUser, "alice")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if len(events) != 1 || events[0].User.Name != "admin" || events[0].ImpersonatedUser == nil || events[0].ImpersonatedUser.Name != "alice" {
		t.Fatalf("events %+v", events)
	}
}
