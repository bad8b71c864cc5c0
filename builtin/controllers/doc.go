// Package controllers lists Converge's built-in controllers (one package each under
// builtin/controllers/<name>) and adds them to a manager. The control plane runs
// them inside `converge up`; testenv runs the ones a test asks for.
package controllers
