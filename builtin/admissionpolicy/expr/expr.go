package expr

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"

	"github.com/converge-dev/converge/framework/api/field"
)

// CostLimit bounds the evaluation of one expression, as Kubernetes'
// per-policy runtime budget does.
const CostLimit = 10_000_000

// Result is what an expression must evaluate to.
type Result int

// Results.
const (
	// Bool: validations and matchConditions.
	Bool Result = iota
	// String: messageExpression.
	String
	// StringOrNull: auditAnnotations valueExpression.
	StringOrNull
	// Any: variables.
	Any
)

// NamedExpression is a variable, an auditAnnotation (Name is the key) or a
// matchCondition.
type NamedExpression struct {
	Name, Expression string
}

// Validation is the expression and messageExpression of one validation.
type Validation struct {
	Expression, MessageExpression string
}

// Source is the expressions of one policy.
type Source struct {
	Variables        []NamedExpression
	Validations      []Validation
	AuditAnnotations []NamedExpression
	MatchConditions  []NamedExpression
}

// Program is one compiled expression.
type Program struct {
	Expression string
	prg        cel.Program
}

// Policy is a compiled Source; a nil Program is an expression that was empty.
type Policy struct {
	Variables        []NamedProgram
	Validations      []*Program
	Messages         []*Program
	AuditAnnotations []NamedProgram
	MatchConditions  []NamedProgram
}

// NamedProgram is a compiled NamedExpression.
type NamedProgram struct {
	Name string
	*Program
}

var (
	baseOnce sync.Once
	baseEnv  *cel.Env
	baseErr  error
)

// VariablePrefix is how expressions name a variable: variables.NAME.
const VariablePrefix = "variables."

// Decls are the types of the top-level variables: DynType when nil.
type Decls struct {
	Object, OldObject, Params, NamespaceObject, Request *cel.Type
	// Options adds type providers for the types above.
	Options []cel.EnvOption
}

func envOptions(d Decls) []cel.EnvOption {
	or := func(t *cel.Type) *cel.Type {
		if t == nil {
			return cel.DynType
		}
		return t
	}
	opts := []cel.EnvOption{
		cel.Variable("object", or(d.Object)),
		cel.Variable("oldObject", or(d.OldObject)),
		cel.Variable("params", or(d.Params)),
		cel.Variable("namespaceObject", or(d.NamespaceObject)),
		cel.Variable("request", or(d.Request)),
		ext.Strings(ext.StringsVersion(2)), ext.Sets(), ext.Lists(), ext.Math(), ext.Bindings(),
		cel.OptionalTypes(), cel.CrossTypeNumericComparisons(true),
	}
	opts = append(opts, authorizerLibrary()...)
	return append(opts, d.Options...)
}

// base is the environment of admission: every variable dynamic.
func base() (*cel.Env, error) {
	baseOnce.Do(func() {
		baseEnv, baseErr = cel.NewEnv(envOptions(Decls{})...)
		if baseErr != nil {
			baseErr = fmt.Errorf("create CEL environment: %w", baseErr)
		}
	})
	return baseEnv, baseErr
}

// Compile compiles src in the dynamic environment of admission. errs hold
// each expression that does not compile, at its field path under
// spec (spec.validations[0].expression, ...).
func Compile(src Source) (*Policy, field.ErrorList) {
	env, err := base()
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	return compile(env, src, func(p *field.Path, expr string, err error) *field.Error {
		return field.Invalid(p, expr, err.Error())
	})
}

// compile compiles src in env; onErr turns a compilation error into the
// error reported.
func compile(env *cel.Env, src Source, onErr func(p *field.Path, expr string, err error) *field.Error) (*Policy, field.ErrorList) {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	out := &Policy{}
	for i, v := range src.Variables {
		p := spec.Child("variables").Index(i).Child("expression")
		prg, ast, err := program(env, v.Expression, Any)
		if err != nil {
			errs = append(errs, onErr(p, v.Expression, err))
			prg = nil
		}
		out.Variables = append(out.Variables, NamedProgram{Name: v.Name, Program: prg})
		t := cel.DynType
		if ast != nil {
			t = ast.OutputType()
		}
		next, eerr := env.Extend(cel.Variable(VariablePrefix+v.Name, t))
		if eerr != nil {
			errs = append(errs, field.Invalid(spec.Child("variables").Index(i).Child("name"), v.Name, eerr.Error()))
			continue
		}
		env = next
	}
	for i, v := range src.Validations {
		p := spec.Child("validations").Index(i)
		prg, _, err := program(env, v.Expression, Bool)
		if err != nil {
			errs = append(errs, onErr(p.Child("expression"), v.Expression, err))
		}
		out.Validations = append(out.Validations, prg)
		var msg *Program
		if strings.TrimSpace(v.MessageExpression) != "" {
			if msg, _, err = program(env, v.MessageExpression, String); err != nil {
				errs = append(errs, onErr(p.Child("messageExpression"), v.MessageExpression, err))
			}
		}
		out.Messages = append(out.Messages, msg)
	}
	for i, a := range src.AuditAnnotations {
		prg, _, err := program(env, a.Expression, StringOrNull)
		if err != nil {
			errs = append(errs, onErr(spec.Child("auditAnnotations").Index(i).Child("valueExpression"), a.Expression, err))
		}
		out.AuditAnnotations = append(out.AuditAnnotations, NamedProgram{Name: a.Name, Program: prg})
	}
	for i, m := range src.MatchConditions {
		prg, _, err := program(env, m.Expression, Bool)
		if err != nil {
			errs = append(errs, onErr(spec.Child("matchConditions").Index(i).Child("expression"), m.Expression, err))
		}
		out.MatchConditions = append(out.MatchConditions, NamedProgram{Name: m.Name, Program: prg})
	}
	return out, errs
}

// program compiles expression and checks its result type.
func program(env *cel.Env, expression string, want Result) (*Program, *cel.Ast, error) {
	ast, iss := env.Compile(expression)
	if iss != nil && iss.Err() != nil {
		return nil, nil, fmt.Errorf("compilation failed: %w", iss.Err())
	}
	out := ast.OutputType()
	ok := out.IsExactType(cel.DynType) || out.Kind() == types.AnyKind
	switch want {
	case Bool:
		ok = ok || out.IsExactType(cel.BoolType)
	case String:
		ok = ok || out.IsExactType(cel.StringType)
	case StringOrNull:
		ok = ok || out.IsExactType(cel.StringType) || out.IsExactType(cel.NullType)
	case Any:
		ok = true
	}
	if !ok {
		names := map[Result]string{Bool: "bool", String: "string", StringOrNull: "string or null"}
		return nil, ast, fmt.Errorf("must evaluate to %s but got %s", names[want], out)
	}
	prg, err := env.Program(ast, cel.CostLimit(CostLimit), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, ast, fmt.Errorf("plan: %w", err)
	}
	return &Program{Expression: expression, prg: prg}, ast, nil
}

// Input is what expressions see; nil values are null.
type Input struct {
	Object, OldObject, Params, NamespaceObject map[string]any
	Request                                    map[string]any
	// Authorizer answers authorizer checks; nil denies every check.
	Authorizer Authorizer
}

// Activation is the variables of one evaluation of a policy (one request and
// one param object). It is not safe for concurrent use.
type Activation struct {
	ctx  context.Context
	vars map[string]any
}

// Activation binds in and the policy's variables, which are evaluated when
// first used.
func (p *Policy) Activation(ctx context.Context, in Input) *Activation {
	orNull := func(m map[string]any) any {
		if m == nil {
			return types.NullValue
		}
		return m
	}
	a := &Activation{ctx: ctx, vars: map[string]any{
		"object": orNull(in.Object), "oldObject": orNull(in.OldObject), "params": orNull(in.Params),
		"namespaceObject": orNull(in.NamespaceObject), "request": orNull(in.Request),
	}}
	authz := newAuthorizerValue(ctx, in.Authorizer, in.Request)
	a.vars["authorizer"] = authz
	a.vars["authorizer.requestResource"] = func() ref.Val { return requestResourceValue(authz, in.Request) }
	for _, v := range p.Variables {
		a.vars[VariablePrefix+v.Name] = func() ref.Val {
			if v.Program == nil {
				return types.NewErr("variable %q does not compile", v.Name)
			}
			out, err := v.Program.eval(a)
			if err != nil {
				return types.NewErr("composited variable %q fails to evaluate: %v", v.Name, err)
			}
			return out
		}
	}
	return a
}

// Eval evaluates prg.
func (p *Program) Eval(a *Activation) (ref.Val, error) { return p.eval(a) }

func (p *Program) eval(a *Activation) (ref.Val, error) {
	out, _, err := p.prg.ContextEval(a.ctx, a.vars)
	if err != nil {
		return nil, err
	}
	return out, nil
}
