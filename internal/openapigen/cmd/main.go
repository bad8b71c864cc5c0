// Command openapigen writes builtin/openapi/definitions.json (run by go
// generate in builtin/openapi, from there).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/converge-dev/converge/internal/openapigen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "openapigen:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := filepath.Abs("../..")
	if err != nil {
		return fmt.Errorf("finding the module root: %w", err)
	}
	kinds, err := openapigen.Kinds()
	if err != nil {
		return err
	}
	b, err := openapigen.Generate(root, kinds)
	if err != nil {
		return fmt.Errorf("generating the definitions: %w", err)
	}
	if err := os.WriteFile("definitions.json", b, 0o644); err != nil {
		return fmt.Errorf("writing definitions.json: %w", err)
	}
	return nil
}
