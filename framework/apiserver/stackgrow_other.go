//go:build !amd64 && !arm64

package apiserver

// growStack grows the stack by stackReserve bytes (stackgrow.go).
func growStack() { growStackGo() }
