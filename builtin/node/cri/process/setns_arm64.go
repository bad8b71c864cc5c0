//go:build arm64

package process

// sysSetns is setns(2) (the syscall package does not name it).
const sysSetns = 268
