package rbac

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// EscalationCheck returns the admission validator that refuses RBAC writes
// granting more than the requesting user holds, like Kubernetes: creating or
// updating a Role or ClusterRole needs every rule covered by the user's own
// rules (in the role's namespace) unless the user may "escalate" it; setting an
// aggregationRule needs full authority; creating or updating a binding needs the
// referenced role's rules covered unless the user may "bind" it. Members of
// system:masters, and in-process writers without a user, are exempt. authz is the
// server's full authorizer (for escalate and bind).
func EscalationCheck(a *Authorizer, authz filters.Authorizer) admission.Validator {
	return escalationCheck(func(ctx context.Context, attrs *admission.Attributes) error {
		if attrs.Resource.Group != rbacv1.GroupName || attrs.Subresource != "" ||
			(attrs.Operation != admission.Create && attrs.Operation != admission.Update) {
			return nil
		}
		u := attrs.User
		if u == nil || u.InGroup(filters.GroupMasters) {
			return nil
		}
		gr := api.GroupResource{Group: rbacv1.GroupName, Resource: attrs.Resource.Resource}
		body, err := json.Marshal(attrs.Object)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		allowed := func(verb, resource, name string) bool {
			d, _, _ := authz.Authorize(ctx, filters.Attributes{
				User: u, Verb: verb, ResourceRequest: true, APIGroup: rbacv1.GroupName, APIVersion: "v1",
				Namespace: attrs.Namespace, Resource: resource, Name: name,
			})
			return d == filters.DecisionAllow
		}
		switch attrs.Resource.Resource {
		case "roles", "clusterroles":
			if allowed("escalate", attrs.Resource.Resource, attrs.Name) {
				return nil
			}
			var role rbacv1.ClusterRole
			if err := json.Unmarshal(body, &role); err != nil {
				return apierrors.NewBadRequest(err.Error())
			}
			if err := a.confirmNoEscalation(ctx, u, attrs.Namespace, role.Rules); err != nil {
				return apierrors.NewForbidden(gr, attrs.Name, err)
			}
			if role.AggregationRule != nil {
				full := []rbacv1.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}, {Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}
				if err := a.confirmNoEscalation(ctx, u, attrs.Namespace, full); err != nil {
					return apierrors.NewForbidden(gr, attrs.Name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
				}
			}
		case "rolebindings", "clusterrolebindings":
			var b rbacv1.RoleBinding
			if err := json.Unmarshal(body, &b); err != nil {
				return apierrors.NewBadRequest(err.Error())
			}
			res := "clusterroles"
			if b.RoleRef.Kind == "Role" {
				res = "roles"
			}
			if allowed("bind", res, b.RoleRef.Name) {
				return nil
			}
			rules, err := a.RoleRefRules(ctx, b.RoleRef, attrs.Namespace)
			if err != nil {
				return apierrors.NewForbidden(gr, attrs.Name, err)
			}
			if err := a.confirmNoEscalation(ctx, u, attrs.Namespace, rules); err != nil {
				return apierrors.NewForbidden(gr, attrs.Name, err)
			}
		}
		return nil
	})
}

// escalationCheck is EscalationCheck's validator: the rules, role
// references and subjects it reads are not managedFields.
type escalationCheck func(ctx context.Context, attrs *admission.Attributes) error

var (
	_ admission.Validator           = escalationCheck(nil)
	_ admission.ManagedFieldsScoper = escalationCheck(nil)
)

// Validate implements admission.Validator.
func (f escalationCheck) Validate(ctx context.Context, a *admission.Attributes) error {
	return f(ctx, a)
}

// MayReadManagedFields implements admission.ManagedFieldsScoper.
func (escalationCheck) MayReadManagedFields(context.Context, *admission.Attributes) bool {
	return false
}

// confirmNoEscalation is Kubernetes' ConfirmNoEscalation message:
// `user "u" (groups=["g"]) is attempting to grant RBAC permissions not currently held:` + one line per missing rule.
func (a *Authorizer) confirmNoEscalation(ctx context.Context, u *filters.User, namespace string, rules []rbacv1.PolicyRule) error {
	owner, resErr := a.RulesFor(ctx, u, namespace)
	ok, missing := Covers(owner, rules)
	if ok {
		return nil
	}
	lines := make([]string, 0, len(missing))
	seen := map[string]bool{}
	for _, m := range missing {
		s := CompactString(m)
		if !seen[s] {
			seen[s] = true
			lines = append(lines, s)
		}
	}
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", u.Name, u.Groups, strings.Join(lines, "\n"))
	if resErr != nil {
		msg += fmt.Sprintf("; resolution errors: %v", resErr)
	}
	return errors.New(msg)
}
