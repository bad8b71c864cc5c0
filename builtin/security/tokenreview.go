package security

import (
	"context"
	"slices"
	"strings"
	"time"

	authenticationv1 "github.com/converge-dev/converge/builtin/api/authentication/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// audienceAuthenticator is a token authenticator that checks a token against
// target audiences (nil: its own) and says which of them the token is valid
// for (serviceaccount.Authenticator).
type audienceAuthenticator interface {
	AuthenticateTokenFor(ctx context.Context, token string, audiences []string) (u *filters.User, granted []string, ok bool, err error)
}

// TokenReviewer answers TokenReviews with the API server's bearer token
// authenticators, as kube-apiserver does.
type TokenReviewer struct {
	// Tokens are the bearer token authenticators, in the order the API server
	// tries them. Those that are not audienceAuthenticators accept only
	// tokens meant for APIAudiences.
	Tokens []filters.TokenAuthenticator
	// APIAudiences are the API server's own audiences (the ServiceAccount
	// issuer), the targets of a review without spec.audiences.
	APIAudiences []string
}

// Review fills rev.Status: authenticated, the user (with
// system:authenticated, as every authenticated request has it) and the
// audiences the token is valid for among spec.audiences (default
// APIAudiences), or the authenticators' error. A review without a token is a
// 400, as in Kubernetes.
func (t *TokenReviewer) Review(ctx context.Context, rev *authenticationv1.TokenReview) error {
	if rev.Spec.Token == "" {
		return apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	if t == nil {
		return nil // no authenticator: nothing is authenticated, nothing is said
	}
	targets := rev.Spec.Audiences
	if len(targets) == 0 {
		targets = t.APIAudiences
	}
	var errs []string
	for _, a := range t.Tokens {
		var (
			u       *filters.User
			granted []string
			ok      bool
			err     error
		)
		if aa, aware := a.(audienceAuthenticator); aware {
			u, granted, ok, err = aa.AuthenticateTokenFor(ctx, rev.Spec.Token, targets)
		} else {
			granted = slices.DeleteFunc(slices.Clone(targets), func(s string) bool { return !slices.Contains(t.APIAudiences, s) })
			if len(granted) == 0 {
				continue // a token of this kind is only ever for this API server
			}
			u, ok, err = a.AuthenticateToken(ctx, rev.Spec.Token)
		}
		if ok && u != nil {
			rev.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: userInfo(u), Audiences: granted}
			return nil
		}
		if err != nil && !slices.Contains(errs, err.Error()) {
			errs = append(errs, err.Error())
		}
	}
	rev.Status = authenticationv1.TokenReviewStatus{Error: aggregate(errs)}
	return nil
}

// aggregate words the authenticators' errors as Kubernetes' aggregate error
// does: the one message, or all of them in brackets; "invalid bearer token"
// when none said anything.
func aggregate(msgs []string) string {
	switch len(msgs) {
	case 0:
		return "invalid bearer token"
	case 1:
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

// userInfo is u as authentication.k8s.io UserInfo, with system:authenticated
// among its groups.
func userInfo(u *filters.User) authenticationv1.UserInfo {
	groups := slices.Clone(u.Groups)
	if u.Name != filters.UserAnonymous && !slices.Contains(groups, filters.GroupAuthenticated) {
		groups = append(groups, filters.GroupAuthenticated)
	}
	var extra map[string][]string
	if len(u.Extra) > 0 {
		extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			extra[k] = slices.Clone(v)
		}
	}
	return authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: groups, Extra: extra}
}

// selfSubjectReview answers a SelfSubjectReview with the caller's user, as
// the request authenticated (or impersonated) it.
func selfSubjectReview(ctx context.Context, now time.Time) (*authenticationv1.SelfSubjectReview, error) {
	u, ok := filters.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	info := userInfo(u)
	info.Groups = slices.Clone(u.Groups) // exactly the request's groups
	return &authenticationv1.SelfSubjectReview{
		TypeMeta:   api.TypeMeta{APIVersion: authenticationv1.GroupVersion.String(), Kind: "SelfSubjectReview"},
		ObjectMeta: api.ObjectMeta{CreationTimestamp: api.NewTime(now.UTC().Truncate(time.Second))},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: info},
	}, nil
}
