//go:build amd64 || arm64

package apiserver

// growStack has a stackReserve-byte frame that it leaves untouched
// (stackgrow_$GOARCH.s): the stack check in its prologue grows the stack and
// nothing is written to the new one.
func growStack()
