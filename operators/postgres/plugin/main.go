// Command plugin is the postgres operator's main package. Built with
// `converge operator build ./operators/postgres/plugin -o postgres.so` it is a
// plugin exporting Operator; built or run normally it is the standalone
// operator (run.Main).
package main

import (
	"github.com/converge-dev/converge/operators"
	"github.com/converge-dev/converge/operators/postgres"
	"github.com/converge-dev/converge/operators/run"
)

// Operator is the symbol converge up looks up in the plugin.
var Operator operators.Operator = postgres.New()

func main() { run.Main(Operator) }
