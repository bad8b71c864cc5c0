// Command plugin is the greeting operator's main package. Built with
// `converge operator build . -o greeting.so` it is a plugin exporting
// Operator; built or run normally it is the standalone operator.
package main

import (
	"github.com/converge-dev/converge/operators"
	"github.com/converge-dev/converge/operators/examples/greeting"
	"github.com/converge-dev/converge/operators/run"
)

// Operator is the symbol converge up looks up in the plugin.
var Operator operators.Operator = greeting.New()

func main() { run.Main(Operator) }
