// Package plugins holds the in-tree scheduler plugins, one package each, and
// NewInTreeRegistry, which maps their names to factories. Out-of-tree plugins
// are added by merging a plugin.Registry into it (scheduler
// Options.OutOfTreeRegistry).
package plugins
