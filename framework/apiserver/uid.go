package apiserver

import (
	"crypto/rand"
	"sync"

	"github.com/google/uuid"
)

// uidRand buffers crypto/rand output for newUID, so that a create does not
// cost a getrandom call.
var uidRand struct {
	sync.Mutex
	buf [64 * 16]byte
	pos int
}

// newUID returns a random (version 4) UUID, as uuid.NewString does.
func newUID() string {
	var u uuid.UUID
	uidRand.Lock()
	if uidRand.pos == 0 || uidRand.pos == len(uidRand.buf) {
		if _, err := rand.Read(uidRand.buf[:]); err != nil {
			uidRand.Unlock()
			return uuid.NewString()
		}
		uidRand.pos = 0
	}
	copy(u[:], uidRand.buf[uidRand.pos:])
	// Nothing handed out may be handed out again.
	clear(uidRand.buf[uidRand.pos : uidRand.pos+16])
	uidRand.pos += 16
	uidRand.Unlock()
	u[6] = (u[6] & 0x0f) | 0x40 // version 4
	u[8] = (u[8] & 0x3f) | 0x80 // variant RFC 4122
	return u.String()
}
