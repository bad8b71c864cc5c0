package security

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"

	authenticationv1 "github.com/converge-dev/converge/builtin/api/authentication/v1"
	authorizationv1 "github.com/converge-dev/converge/builtin/api/authorization/v1"
	"github.com/converge-dev/converge/builtin/security/rbac"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/apiserver/filters"
	"github.com/converge-dev/converge/framework/apiserver/protobuf"
)

// Reviews answers creates of the authorization.k8s.io/v1 review resources
// (SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview,
// SelfSubjectRulesReview) with az and rules, and of the authentication.k8s.io/v1
// ones (TokenReview with tokens, nil when the server authenticates no tokens;
// SelfSubjectReview with the caller's user), and passes every other request to
// next. It runs behind authorization, so creating a review is itself authorized
// (system:basic-user grants the self reviews to every authenticated user,
// system:auth-delegator the others).
func Reviews(next http.Handler, az filters.Authorizer, rules *rbac.Authorizer, tokens *TokenReviewer) http.Handler {
	dec := &protobuf.Decoder{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ri, ok := filters.RequestInfoFrom(r.Context())
		if !ok || !ri.IsResourceRequest || ri.APIVersion != "v1" || ri.Verb != "create" || ri.Subresource != "" || ri.Name != "" ||
			(ri.APIGroup != authorizationv1.GroupVersion.Group && ri.APIGroup != authenticationv1.GroupVersion.Group) {
			next.ServeHTTP(w, r)
			return
		}
		var (
			out any
			err error
		)
		if ri.APIGroup == authenticationv1.GroupVersion.Group && ri.Namespace != "" {
			next.ServeHTTP(w, r) // cluster-scoped: not found under a namespace
			return
		}
		u, _ := filters.UserFrom(r.Context())
		switch ri.APIGroup + "/" + ri.Resource {
		case "authentication.k8s.io/tokenreviews":
			var rev authenticationv1.TokenReview
			if err = decodeBody(r, dec, &rev); err == nil {
				rev.Status = authenticationv1.TokenReviewStatus{}
				err = tokens.Review(r.Context(), &rev)
				rev.TypeMeta = api.TypeMeta{APIVersion: authenticationv1.GroupVersion.String(), Kind: "TokenReview"}
				out = &rev
			}
		case "authentication.k8s.io/selfsubjectreviews":
			var rev authenticationv1.SelfSubjectReview
			if err = decodeBody(r, dec, &rev); err == nil {
				out, err = selfSubjectReview(r.Context(), time.Now())
			}
		case "authorization.k8s.io/selfsubjectaccessreviews":
			var rev authorizationv1.SelfSubjectAccessReview
			if err = decodeBody(r, dec, &rev); err == nil {
				rev.Status, err = review(r.Context(), az, u, "SelfSubjectAccessReview", rev.Spec.ResourceAttributes, rev.Spec.NonResourceAttributes, "")
				rev.TypeMeta = api.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SelfSubjectAccessReview"}
				out = &rev
			}
		case "authorization.k8s.io/subjectaccessreviews", "authorization.k8s.io/localsubjectaccessreviews":
			var rev authorizationv1.SubjectAccessReview
			kind := "SubjectAccessReview"
			if ri.Resource == "localsubjectaccessreviews" {
				kind = "LocalSubjectAccessReview"
			}
			if err = decodeBody(r, dec, &rev); err == nil {
				if rev.Spec.User == "" && len(rev.Spec.Groups) == 0 {
					err = apierrors.NewInvalid(api.GroupKind{Group: "authorization.k8s.io", Kind: kind}, "", field.ErrorList{
						field.Invalid(field.NewPath("spec", "user"), rev.Spec.User, `at least one of user or group must be specified`)})
					break
				}
				subject := &filters.User{Name: rev.Spec.User, UID: rev.Spec.UID, Groups: rev.Spec.Groups, Extra: rev.Spec.Extra}
				rev.Status, err = review(r.Context(), az, subject, kind, rev.Spec.ResourceAttributes, rev.Spec.NonResourceAttributes, ri.Namespace)
				rev.TypeMeta = api.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: kind}
				if ri.Namespace != "" {
					rev.Namespace = ri.Namespace
				}
				out = &rev
			}
		case "authorization.k8s.io/selfsubjectrulesreviews":
			var rev authorizationv1.SelfSubjectRulesReview
			if err = decodeBody(r, dec, &rev); err == nil {
				rev.Status = rulesReview(r.Context(), rules, u, rev.Spec.Namespace)
				rev.TypeMeta = api.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SelfSubjectRulesReview"}
				out = &rev
			}
		default:
			next.ServeHTTP(w, r)
			return
		}
		if err != nil {
			se, ok := err.(*apierrors.StatusError)
			if !ok {
				se = apierrors.NewBadRequest(err.Error())
			}
			filters.WriteStatus(w, se)
			return
		}
		b, _ := json.Marshal(out)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(b)
	})
}

func decodeBody(r *http.Request, dec *protobuf.Decoder, into any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, 3<<20))
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var js []byte
	if media == "application/vnd.kubernetes.protobuf" {
		_, m, err := dec.Decode(body, reflect.TypeOf(into).Elem())
		if err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized: %v", err))
		}
		if js, err = json.Marshal(m); err != nil {
			return err
		}
	} else if js, err = yaml.YAMLToJSON(body); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if err := json.Unmarshal(js, into); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

func review(ctx context.Context, az filters.Authorizer, u *filters.User, kind string, ra *authorizationv1.ResourceAttributes,
	nra *authorizationv1.NonResourceAttributes, namespace string) (authorizationv1.SubjectAccessReviewStatus, error) {
	gk := api.GroupKind{Group: "authorization.k8s.io", Kind: kind}
	var a filters.Attributes
	switch {
	case ra != nil && nra != nil:
		return authorizationv1.SubjectAccessReviewStatus{}, apierrors.NewInvalid(gk, "", field.ErrorList{
			field.Invalid(field.NewPath("spec", "nonResourceAttributes"), "", `cannot be specified in combination with resourceAttributes`)})
	case ra != nil:
		if namespace != "" && ra.Namespace != namespace {
			return authorizationv1.SubjectAccessReviewStatus{}, apierrors.NewInvalid(gk, "", field.ErrorList{
				field.Invalid(field.NewPath("spec", "resourceAttributes", "namespace"), ra.Namespace, "must match metadata.namespace")})
		}
		a = filters.Attributes{User: u, Verb: ra.Verb, ResourceRequest: true, APIGroup: ra.Group, APIVersion: ra.Version,
			Namespace: ra.Namespace, Resource: ra.Resource, Subresource: ra.Subresource, Name: ra.Name}
	case nra != nil:
		a = filters.Attributes{User: u, Verb: nra.Verb, Path: nra.Path}
	default:
		return authorizationv1.SubjectAccessReviewStatus{}, apierrors.NewInvalid(gk, "", field.ErrorList{
			field.Required(field.NewPath("spec", "resourceAttributes"), "exactly one of nonResourceAttributes or resourceAttributes must be specified")})
	}
	d, reason, err := az.Authorize(ctx, a)
	st := authorizationv1.SubjectAccessReviewStatus{Allowed: d == filters.DecisionAllow, Denied: d == filters.DecisionDeny, Reason: reason}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st, nil
}

func rulesReview(ctx context.Context, rules *rbac.Authorizer, u *filters.User, namespace string) authorizationv1.SubjectRulesReviewStatus {
	st := authorizationv1.SubjectRulesReviewStatus{ResourceRules: []authorizationv1.ResourceRule{}, NonResourceRules: []authorizationv1.NonResourceRule{}}
	if u == nil || rules == nil {
		st.Incomplete = true
		return st
	}
	rs, err := rules.RulesFor(ctx, u, namespace)
	if err != nil {
		st.Incomplete, st.EvaluationError = true, err.Error()
	}
	for _, r := range rs {
		if len(r.NonResourceURLs) > 0 {
			st.NonResourceRules = append(st.NonResourceRules, authorizationv1.NonResourceRule{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
			continue
		}
		st.ResourceRules = append(st.ResourceRules, authorizationv1.ResourceRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
	}
	return st
}
