// Package quickstart executes the README's quickstart, command by command, so the
// README cannot drift from what works.
package quickstart
