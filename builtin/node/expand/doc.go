// Package expand implements Kubernetes' $(VAR) expansion of container command,
// args and env values: $(NAME) is replaced by NAME's value when NAME is
// defined and left as written otherwise; $$ is an escaped $ (so $$(NAME) yields
// the literal $(NAME)); any other $ is kept. Expansion is not recursive.
//
// Strict is the kubelet's expansion of a volume mount's subPathExpr: the same
// syntax, but a reference to an undefined or empty variable is an error.
package expand
