package cel

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"

	"github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/framework/api/field"
)

// PerCallCostLimit bounds the cost of one rule evaluation, like Kubernetes.
const PerCallCostLimit = 1000000

var oldSelfRef = regexp.MustCompile(`\boldSelf\b`)

// Validator evaluates the rules of one schema.
type Validator struct {
	root *node
}

type node struct {
	typeName   string
	rules      []compiledRule
	props      map[string]*node
	additional *node
	items      *node
	listType   string
	mapKeys    []string
}

type compiledRule struct {
	rule       api.ValidationRule
	prog       cel.Program
	msgProg    cel.Program
	transition bool
}

// Compile compiles every rule of s. It returns a nil Validator when s has no
// rules, and an error naming the first rule that does not compile.
func Compile(s *api.JSONSchemaProps) (*Validator, error) {
	if s == nil {
		return nil, nil
	}
	env, err := newEnv()
	if err != nil {
		return nil, err
	}
	root, err := compileNode(env, s, field.NewPath("openAPIV3Schema"))
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, nil
	}
	return &Validator{root: root}, nil
}

func newEnv() (*cel.Env, error) {
	env, err := cel.NewEnv(
		cel.Variable("self", cel.DynType),
		cel.Variable("oldSelf", cel.DynType),
		ext.Strings(), ext.Sets(), ext.Lists(),
		cel.Function("isURL", cel.Overload("is_url_string", []*cel.Type{cel.StringType}, cel.BoolType,
			cel.UnaryBinding(func(v ref.Val) ref.Val {
				s, ok := v.Value().(string)
				if !ok {
					return types.False
				}
				u, err := url.Parse(s)
				return types.Bool(err == nil && u.Scheme != "" && (u.Host != "" || u.Opaque != ""))
			}))),
	)
	if err != nil {
		return nil, fmt.Errorf("create CEL environment: %w", err)
	}
	return env, nil
}

func typeName(s *api.JSONSchemaProps) string {
	if s.XIntOrString {
		return "integer"
	}
	if s.Type == "" {
		return "object"
	}
	return s.Type
}

func compileNode(env *cel.Env, s *api.JSONSchemaProps, p *field.Path) (*node, error) {
	n := &node{typeName: typeName(s), mapKeys: s.XListMapKeys}
	if s.XListType != nil {
		n.listType = *s.XListType
	}
	used := false
	for i, r := range s.XValidations {
		cr := compiledRule{rule: r, transition: oldSelfRef.MatchString(r.Rule)}
		prog, err := program(env, r.Rule)
		if err != nil {
			return nil, fmt.Errorf("%s: compile rule %q: %w", p.Child("x-kubernetes-validations").Index(i), r.Rule, err)
		}
		cr.prog = prog
		if r.MessageExpression != "" {
			mp, err := program(env, r.MessageExpression)
			if err != nil {
				return nil, fmt.Errorf("%s: compile messageExpression %q: %w", p.Child("x-kubernetes-validations").Index(i), r.MessageExpression, err)
			}
			cr.msgProg = mp
		}
		n.rules = append(n.rules, cr)
		used = true
	}
	for k, ps := range s.Properties {
		c, err := compileNode(env, &ps, p.Child("properties").Key(k))
		if err != nil {
			return nil, err
		}
		if c != nil {
			if n.props == nil {
				n.props = map[string]*node{}
			}
			n.props[k] = c
			used = true
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		c, err := compileNode(env, s.AdditionalProperties.Schema, p.Child("additionalProperties"))
		if err != nil {
			return nil, err
		}
		if c != nil {
			n.additional, used = c, true
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		c, err := compileNode(env, s.Items.Schema, p.Child("items"))
		if err != nil {
			return nil, err
		}
		if c != nil {
			n.items, used = c, true
		}
	}
	if !used {
		return nil, nil
	}
	return n, nil
}

func program(env *cel.Env, expr string) (cel.Program, error) {
	ast, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, iss.Err()
	}
	prog, err := env.Program(ast, cel.CostLimit(PerCallCostLimit), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	return prog, nil
}

// Validate evaluates the rules against obj; old is the previous object on update
// (nil on create), which enables transition rules where a correlated old value exists.
func (v *Validator) Validate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	if v == nil || v.root == nil {
		return nil
	}
	var errs field.ErrorList
	var oldV any
	if old != nil {
		oldV = old
	}
	v.root.validate(ctx, obj, oldV, old != nil, nil, &errs)
	return errs
}

func child(p *field.Path, k string) *field.Path {
	if p == nil {
		return field.NewPath(k)
	}
	return p.Child(k)
}

func (n *node) validate(ctx context.Context, v, old any, hasOld bool, p *field.Path, errs *field.ErrorList) {
	if v == nil {
		return
	}
	for _, r := range n.rules {
		if r.transition && !hasOld {
			continue
		}
		n.evalRule(ctx, r, v, old, p, errs)
	}
	switch t := v.(type) {
	case map[string]any:
		om, _ := old.(map[string]any)
		for k, c := range n.props {
			if e, ok := t[k]; ok {
				oe, ook := om[k]
				c.validate(ctx, e, oe, hasOld && ook, child(p, k), errs)
			}
		}
		if n.additional != nil {
			for k, e := range t {
				oe, ook := om[k]
				n.additional.validate(ctx, e, oe, hasOld && ook, child(p, k), errs)
			}
		}
	case []any:
		if n.items == nil {
			return
		}
		ol, _ := old.([]any)
		for i, e := range t {
			var oe any
			ook := false
			if hasOld && n.listType == "map" {
				oe, ook = findByKeys(ol, e, n.mapKeys)
			}
			n.items.validate(ctx, e, oe, ook, p.Index(i), errs)
		}
	}
}

func findByKeys(list []any, item any, keys []string) (any, bool) {
	m, ok := item.(map[string]any)
	if !ok {
		return nil, false
	}
outer:
	for _, o := range list {
		om, ok := o.(map[string]any)
		if !ok {
			continue
		}
		for _, k := range keys {
			if fmt.Sprint(om[k]) != fmt.Sprint(m[k]) {
				continue outer
			}
		}
		return o, true
	}
	return nil, false
}

func (n *node) evalRule(ctx context.Context, r compiledRule, v, old any, p *field.Path, errs *field.ErrorList) {
	act := map[string]any{"self": v}
	if r.transition {
		act["oldSelf"] = old
	}
	out, _, err := r.prog.ContextEval(ctx, act)
	errPath := p
	if r.rule.FieldPath != "" {
		for _, part := range strings.Split(strings.TrimPrefix(r.rule.FieldPath, "."), ".") {
			errPath = child(errPath, part)
		}
	}
	if err != nil {
		*errs = append(*errs, field.Invalid(errPath, n.typeName, fmt.Sprintf("rule evaluation error: %v", err)))
		return
	}
	if b, ok := out.Value().(bool); ok && b {
		return
	}
	msg := r.rule.Message
	if r.msgProg != nil {
		if mo, _, err := r.msgProg.ContextEval(ctx, act); err == nil {
			if s, ok := mo.Value().(string); ok && strings.TrimSpace(s) != "" {
				msg = s
			}
		}
	}
	if msg == "" {
		msg = "failed rule: " + strings.TrimSpace(r.rule.Rule)
	}
	reason := ""
	if r.rule.Reason != nil {
		reason = *r.rule.Reason
	}
	switch reason {
	case string(field.ErrorTypeForbidden):
		*errs = append(*errs, field.Forbidden(errPath, msg))
	case string(field.ErrorTypeRequired):
		*errs = append(*errs, field.Required(errPath, msg))
	case string(field.ErrorTypeDuplicate):
		e := field.Duplicate(errPath, n.typeName)
		e.Detail = msg
		*errs = append(*errs, e)
	default:
		*errs = append(*errs, field.Invalid(errPath, n.typeName, msg))
	}
}
