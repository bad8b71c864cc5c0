package filters

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// Decision is an authorizer's answer.
type Decision int

// Decisions. NoOpinion lets the next authorizer of a union decide; a request
// nobody allows is denied.
const (
	DecisionNoOpinion Decision = iota
	DecisionAllow
	DecisionDeny
)

// Attributes describe one action to authorize.
type Attributes struct {
	User *User
	// Verb is the resource verb (get, list, create, ..., or escalate, bind,
	// impersonate) or, for non-resource requests, the lower-cased HTTP method.
	Verb string
	// ResourceRequest selects the resource fields below; otherwise Path is checked.
	ResourceRequest bool
	APIGroup        string
	APIVersion      string
	Namespace       string
	Resource        string
	Subresource     string
	Name            string
	Path            string
}

// AttributesFor returns the attributes of a request by u.
func AttributesFor(u *User, ri *RequestInfo) Attributes {
	return Attributes{
		User: u, Verb: ri.Verb, ResourceRequest: ri.IsResourceRequest,
		APIGroup: ri.APIGroup, APIVersion: ri.APIVersion, Namespace: ri.Namespace,
		Resource: ri.Resource, Subresource: ri.Subresource, Name: ri.Name, Path: ri.Path,
	}
}

// Authorizer decides whether an action is allowed. reason explains the decision
// (it is appended to 403 messages and reported by SubjectAccessReviews).
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (d Decision, reason string, err error)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, a Attributes) (Decision, string, error)

// Authorize implements Authorizer.
func (f AuthorizerFunc) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	return f(ctx, a)
}

var _ Authorizer = AuthorizerFunc(nil)

// AlwaysAllow allows everything.
var AlwaysAllow Authorizer = AuthorizerFunc(func(context.Context, Attributes) (Decision, string, error) {
	return DecisionAllow, "", nil
})

// Privileged allows every action of members of system:masters and has no
// opinion otherwise.
var Privileged Authorizer = AuthorizerFunc(func(_ context.Context, a Attributes) (Decision, string, error) {
	if a.User.InGroup(GroupMasters) {
		return DecisionAllow, "", nil
	}
	return DecisionNoOpinion, "", nil
})

// UnionAuthorizer asks each authorizer in turn; the first Allow or Deny wins.
// Errors of authorizers that had no opinion are returned with the final
// NoOpinion.
func UnionAuthorizer(auths ...Authorizer) Authorizer {
	return AuthorizerFunc(func(ctx context.Context, a Attributes) (Decision, string, error) {
		var (
			reasons []string
			errs    []error
		)
		for _, az := range auths {
			d, reason, err := az.Authorize(ctx, a)
			if err != nil {
				errs = append(errs, err)
			}
			if reason != "" {
				reasons = append(reasons, reason)
			}
			if d == DecisionAllow || d == DecisionDeny {
				return d, reason, err
			}
		}
		return DecisionNoOpinion, strings.Join(reasons, "\n"), errors.Join(errs...)
	})
}

// ForbiddenMessage is Kubernetes' text for a denied action, e.g.
// `User "x" cannot list resource "pods" in API group "" in the namespace "default"`.
func ForbiddenMessage(a Attributes) string {
	name := ""
	if a.User != nil {
		name = a.User.Name
	}
	if !a.ResourceRequest {
		return fmt.Sprintf("User %q cannot %s path %q", name, a.Verb, a.Path)
	}
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	if a.Namespace != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", name, a.Verb, res, a.APIGroup, a.Namespace)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", name, a.Verb, res, a.APIGroup)
}

// Forbidden returns the 403 for a denied action: `pods "p" is forbidden: User ...`
// (resource requests) or `forbidden: User "x" cannot get path "/foo"`.
func Forbidden(a Attributes, reason string) *apierrors.StatusError {
	msg := ForbiddenMessage(a)
	if reason != "" {
		msg += ": " + reason
	}
	if !a.ResourceRequest {
		return apierrors.FromStatus(api.Status{
			TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   api.StatusFailure, Message: "forbidden: " + msg,
			Reason: apierrors.ReasonForbidden, Details: &api.StatusDetails{}, Code: http.StatusForbidden,
		})
	}
	return apierrors.NewForbidden(api.GroupResource{Group: a.APIGroup, Resource: a.Resource}, a.Name, errors.New(msg))
}

// WithAuthorization refuses requests az does not allow with 403. It needs the
// request info and user in the context (WithRequestInfoFilter, WithAuthentication);
// requests without a user are refused.
func WithAuthorization(next http.Handler, az Authorizer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		ri, ok := RequestInfoFrom(ctx)
		if !ok {
			ri = NewRequestInfo(r)
		}
		u, _ := UserFrom(ctx)
		a := AttributesFor(u, ri)
		d, reason, err := az.Authorize(ctx, a)
		if d == DecisionAllow {
			recordDecision(ctx, "allow", reason)
			next.ServeHTTP(w, r)
			return
		}
		if err != nil && reason == "" {
			reason = err.Error()
		}
		recordDecision(ctx, "forbid", reason)
		WriteStatus(w, Forbidden(a, reason))
	})
}

// WriteStatus writes err as a Kubernetes Status (with Retry-After when set).
func WriteStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.Status()
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	b, _ := json.Marshal(st)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	code := int(st.Code)
	if code == 0 {
		code = http.StatusInternalServerError
	}
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
