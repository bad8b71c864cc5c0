package expr

import (
	"context"
	"fmt"
	"reflect"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// Check is one authorization question of an expression: a resource check
// (Resource set) or a non-resource path check.
type Check struct {
	// User and Groups are whose access is checked: the request's user, or
	// the service account of authorizer.serviceAccount(ns, name).
	User   string
	Groups []string
	UID    string
	Extra  map[string][]string
	Verb   string
	// Resource checks.
	Group, Resource, Subresource, Namespace, Name string
	ResourceRequest                               bool
	// Path is the non-resource URL of a path check.
	Path string
}

// Authorizer answers the checks of the authorizer variable.
type Authorizer func(ctx context.Context, c Check) (allowed bool, reason string, err error)

// CEL type names, as Kubernetes declares them.
var (
	authorizerType = cel.OpaqueType("kubernetes.authorization.Authorizer")
	pathCheckType  = cel.OpaqueType("kubernetes.authorization.PathCheck")
	groupCheckType = cel.OpaqueType("kubernetes.authorization.GroupCheck")
	resCheckType   = cel.OpaqueType("kubernetes.authorization.ResourceCheck")
	decisionType   = cel.OpaqueType("kubernetes.authorization.Decision")
)

// authzVal is every value of the library: which it is follows from typ.
type authzVal struct {
	typ   *types.Type
	ctx   context.Context
	authz Authorizer
	check Check
	// Decision.
	allowed bool
	reason  string
	err     error
}

func (v *authzVal) ConvertToNative(reflect.Type) (any, error) {
	return nil, fmt.Errorf("%s cannot be converted to a native value", v.typ.TypeName())
}
func (v *authzVal) ConvertToType(t ref.Type) ref.Val {
	if t == types.TypeType {
		return v.typ
	}
	return types.NewErr("type conversion error from %s to %s", v.typ.TypeName(), t.TypeName())
}
func (v *authzVal) Equal(o ref.Val) ref.Val { return types.Bool(o == ref.Val(v)) }
func (v *authzVal) Type() ref.Type          { return v.typ }
func (v *authzVal) Value() any              { return v }

// newAuthorizerValue is the authorizer variable for a request (request holds
// its userInfo).
func newAuthorizerValue(ctx context.Context, a Authorizer, request map[string]any) ref.Val {
	v := &authzVal{typ: authorizerType, ctx: ctx, authz: a}
	if ui, ok := request["userInfo"].(map[string]any); ok {
		v.check.User, _ = ui["username"].(string)
		v.check.UID, _ = ui["uid"].(string)
		switch gs := ui["groups"].(type) {
		case []string:
			v.check.Groups = gs
		case []any:
			for _, g := range gs {
				if s, ok := g.(string); ok {
					v.check.Groups = append(v.check.Groups, s)
				}
			}
		}
		v.check.Extra, _ = ui["extra"].(map[string][]string)
	}
	return v
}

// requestResourceValue is authorizer.requestResource: a check of the
// request's own resource, subresource, namespace and name.
func requestResourceValue(authz ref.Val, request map[string]any) ref.Val {
	s := func(m map[string]any, k string) string { v, _ := m[k].(string); return v }
	res, _ := request["resource"].(map[string]any)
	return derive(authz, resCheckType, func(c *Check) {
		c.ResourceRequest = true
		c.Group, c.Resource = s(res, "group"), s(res, "resource")
		c.Subresource, c.Namespace, c.Name = s(request, "subResource"), s(request, "namespace"), s(request, "name")
	})
}

func derive(recv ref.Val, typ *types.Type, f func(c *Check)) ref.Val {
	v, ok := recv.(*authzVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(recv)
	}
	n := *v
	n.typ = typ
	f(&n.check)
	return &n
}

func str(v ref.Val) string { s, _ := v.Value().(string); return s }

func decide(recv, verb ref.Val) ref.Val {
	v, ok := recv.(*authzVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(recv)
	}
	d := &authzVal{typ: decisionType}
	c := v.check
	c.Verb = str(verb)
	if v.authz == nil {
		d.reason = "no authorizer"
		return d
	}
	d.allowed, d.reason, d.err = v.authz(v.ctx, c)
	return d
}

func decision(recv ref.Val) (*authzVal, bool) {
	v, ok := recv.(*authzVal)
	return v, ok && v.typ == decisionType
}

// authorizerLibrary declares the authorizer variable and its functions:
// authorizer.path(p).check(verb), authorizer.group(g).resource(r)
// [.subresource(s)][.namespace(ns)][.name(n)].check(verb),
// authorizer.serviceAccount(ns, name), and on a decision allowed(), reason(),
// errored(), error().
func authorizerLibrary() []cel.EnvOption {
	member := func(name string, recv, arg, out *types.Type, f func(recv, arg ref.Val) ref.Val) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload(recv.TypeName()+"_"+name, []*types.Type{recv, arg}, out, cel.BinaryBinding(f)))
	}
	unary := func(name string, out *types.Type, f func(d *authzVal) ref.Val) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload("decision_"+name, []*types.Type{decisionType}, out,
			cel.UnaryBinding(func(recv ref.Val) ref.Val {
				d, ok := decision(recv)
				if !ok {
					return types.MaybeNoSuchOverloadErr(recv)
				}
				return f(d)
			})))
	}
	return []cel.EnvOption{
		cel.Variable("authorizer", authorizerType),
		cel.Variable("authorizer.requestResource", resCheckType),
		member("path", authorizerType, cel.StringType, pathCheckType, func(r, a ref.Val) ref.Val {
			return derive(r, pathCheckType, func(c *Check) { c.Path = str(a) })
		}),
		member("group", authorizerType, cel.StringType, groupCheckType, func(r, a ref.Val) ref.Val {
			return derive(r, groupCheckType, func(c *Check) { c.Group, c.ResourceRequest = str(a), true })
		}),
		cel.Function("serviceAccount", cel.MemberOverload("authorizer_serviceAccount",
			[]*types.Type{authorizerType, cel.StringType, cel.StringType}, authorizerType,
			cel.FunctionBinding(func(args ...ref.Val) ref.Val {
				ns, name := str(args[1]), str(args[2])
				return derive(args[0], authorizerType, func(c *Check) {
					c.User = "system:serviceaccount:" + ns + ":" + name
					c.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
					c.UID, c.Extra = "", nil
				})
			}))),
		member("resource", groupCheckType, cel.StringType, resCheckType, func(r, a ref.Val) ref.Val {
			return derive(r, resCheckType, func(c *Check) { c.Resource = str(a) })
		}),
		member("subresource", resCheckType, cel.StringType, resCheckType, func(r, a ref.Val) ref.Val {
			return derive(r, resCheckType, func(c *Check) { c.Subresource = str(a) })
		}),
		member("namespace", resCheckType, cel.StringType, resCheckType, func(r, a ref.Val) ref.Val {
			return derive(r, resCheckType, func(c *Check) { c.Namespace = str(a) })
		}),
		member("name", resCheckType, cel.StringType, resCheckType, func(r, a ref.Val) ref.Val {
			return derive(r, resCheckType, func(c *Check) { c.Name = str(a) })
		}),
		cel.Function("check",
			cel.MemberOverload("resourcecheck_check", []*types.Type{resCheckType, cel.StringType}, decisionType, cel.BinaryBinding(decide)),
			cel.MemberOverload("pathcheck_check", []*types.Type{pathCheckType, cel.StringType}, decisionType, cel.BinaryBinding(decide))),
		unary("allowed", cel.BoolType, func(d *authzVal) ref.Val { return types.Bool(d.allowed) }),
		unary("reason", cel.StringType, func(d *authzVal) ref.Val { return types.String(d.reason) }),
		unary("errored", cel.BoolType, func(d *authzVal) ref.Val { return types.Bool(d.err != nil) }),
		unary("error", cel.StringType, func(d *authzVal) ref.Val {
			if d.err == nil {
				return types.String("")
			}
			return types.String(d.err.Error())
		}),
	}
}
