package admission

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"

	"github.com/converge-dev/converge/framework/api/review"
)

// MatchCondition is one CEL expression of a webhook's matchConditions. The
// expression sees object, oldObject (null when absent) and request (the
// AdmissionRequest as the webhook would receive it) and must return a bool.
// The authorizer variable of Kubernetes is not offered.
type MatchCondition struct {
	Name       string
	Expression string
}

// MaxMatchConditions is the most matchConditions a webhook may have.
const MaxMatchConditions = 64

// matchConditionCost bounds the evaluation of one expression.
const matchConditionCost = 1_000_000

var (
	matchEnvOnce sync.Once
	matchEnv     *cel.Env
	matchEnvErr  error
)

func matchConditionEnv() (*cel.Env, error) {
	matchEnvOnce.Do(func() {
		matchEnv, matchEnvErr = cel.NewEnv(
			cel.Variable("object", cel.DynType),
			cel.Variable("oldObject", cel.DynType),
			cel.Variable("request", cel.DynType),
			ext.Strings(), ext.Sets(), ext.Lists(),
		)
	})
	return matchEnv, matchEnvErr
}

// CompileMatchCondition checks that expression compiles to a bool, as the
// validation of webhook configurations requires.
func CompileMatchCondition(expression string) error {
	_, err := compileMatchCondition(expression)
	return err
}

func compileMatchCondition(expression string) (cel.Program, error) {
	env, err := matchConditionEnv()
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	ast, iss := env.Compile(expression)
	if iss.Err() != nil {
		return nil, fmt.Errorf("compilation failed: %w", iss.Err())
	}
	if !ast.OutputType().IsExactType(types.BoolType) && !ast.OutputType().IsExactType(types.DynType) {
		return nil, fmt.Errorf("must evaluate to bool, not %s", ast.OutputType())
	}
	return env.Program(ast, cel.CostLimit(matchConditionCost))
}

// matchConditions compiles and caches programs by expression.
type matchConditions struct {
	programs sync.Map // expression → cel.Program or error
}

func (m *matchConditions) program(expression string) (cel.Program, error) {
	if v, ok := m.programs.Load(expression); ok {
		if err, isErr := v.(error); isErr {
			return nil, err
		}
		return v.(cel.Program), nil
	}
	prg, err := compileMatchCondition(expression)
	if err != nil {
		m.programs.Store(expression, err)
		return nil, err
	}
	m.programs.Store(expression, prg)
	return prg, nil
}

// evaluate applies Kubernetes' rules: any condition false → the webhook is
// skipped (false, nil); all true → it is called (true, nil); otherwise (an
// error and no false) → (false, err), which failurePolicy turns into a refusal
// (Fail) or a skip (Ignore).
func (m *matchConditions) evaluate(conds []MatchCondition, req *review.AdmissionRequest) (bool, error) {
	if len(conds) == 0 {
		return true, nil
	}
	vars, err := matchVariables(req)
	if err != nil {
		return false, err
	}
	var errs []error
	for _, c := range conds {
		prg, err := m.program(c.Expression)
		if err != nil {
			errs = append(errs, fmt.Errorf("matchCondition %q: %w", c.Name, err))
			continue
		}
		out, _, err := prg.Eval(vars)
		if err != nil {
			errs = append(errs, fmt.Errorf("matchCondition %q: %w", c.Name, err))
			continue
		}
		b, ok := out.Value().(bool)
		if !ok {
			errs = append(errs, fmt.Errorf("matchCondition %q: evaluated to %v, not a bool", c.Name, out.Value()))
			continue
		}
		if !b {
			return false, nil
		}
	}
	if len(errs) > 0 {
		return false, errors.Join(errs...)
	}
	return true, nil
}

// matchVariables is the activation of an expression: the request as JSON
// values, object and oldObject null when absent.
func matchVariables(req *review.AdmissionRequest) (map[string]any, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request for matchConditions: %w", err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode request for matchConditions: %w", err)
	}
	// userInfo always has a username and groups, as in Kubernetes, so that
	// expressions on them never fail for an anonymous in-process caller.
	ui, _ := r["userInfo"].(map[string]any)
	if ui == nil {
		ui = map[string]any{}
		r["userInfo"] = ui
	}
	if _, ok := ui["username"]; !ok {
		ui["username"] = ""
	}
	if _, ok := ui["groups"]; !ok {
		ui["groups"] = []any{}
	}
	vars := map[string]any{"request": r, "object": types.NullValue, "oldObject": types.NullValue}
	if o, ok := r["object"]; ok && o != nil {
		vars["object"] = o
	}
	if o, ok := r["oldObject"]; ok && o != nil {
		vars["oldObject"] = o
	}
	return vars, nil
}
