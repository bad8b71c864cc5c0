package controllers

import (
	"fmt"
	"slices"

	"github.com/converge-dev/converge/framework/manager"
)

// Controller is one built-in controller: a name users can select and the function
// that adds it to a manager.
type Controller struct {
	Name  string
	Setup func(mgr *manager.Manager) error
}

// All returns every built-in controller in start order.
func All() []Controller {
	return []Controller{
		// Each controller package adds exactly one line here.
	}
}

// Names returns the names of every built-in controller.
func Names() []string {
	var out []string
	for _, c := range All() {
		out = append(out, c.Name)
	}
	return out
}

// Setup adds the named controllers to mgr (all of them when names is nil).
func Setup(mgr *manager.Manager, names []string) error {
	for _, n := range names {
		if !slices.Contains(Names(), n) {
			return fmt.Errorf("unknown controller %q (known: %v)", n, Names())
		}
	}
	for _, c := range All() {
		if names != nil && !slices.Contains(names, c.Name) {
			continue
		}
		if err := c.Setup(mgr); err != nil {
			return fmt.Errorf("set up controller %s: %w", c.Name, err)
		}
	}
	return nil
}
