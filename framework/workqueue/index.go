package workqueue

// index maps items to slot numbers: open addressing with linear probing on a
// hash computed before the queue's lock is taken (a Go map would hash under the
// lock), so that the lock is held for a probe and a comparison. Deletion shifts
// the rest of a probe run back instead of leaving tombstones. It is not safe for
// concurrent use; each shard guards its own with its mutex.
type index struct {
	entries []indexEntry // power-of-two length, or nil while empty
	n       int          // entries in use
}

type indexEntry struct {
	hash uint64
	id   int32 // slot number + 1; 0: free
}

const minIndexSize = 16

func (x *index) home(h uint64) uint64 { return h & uint64(len(x.entries)-1) }

// indexGet returns the slot number of item, whose hash is h, in shard sh.
func indexGet[T comparable](sh *shard[T], h uint64, item T) (int32, bool) {
	x := &sh.index
	if x.n == 0 {
		return 0, false
	}
	mask := uint64(len(x.entries) - 1)
	for i := x.home(h); ; i = (i + 1) & mask {
		e := &x.entries[i]
		if e.id == 0 {
			return 0, false
		}
		if e.hash == h && sh.slot(e.id-1).item == item {
			return e.id - 1, true
		}
	}
}

// put records slot id, whose item hashes to h and is not in the index yet.
func (x *index) put(h uint64, id int32) {
	if (x.n+1)*4 > len(x.entries)*3 { // keep the load factor at most 3/4
		x.grow()
	}
	mask := uint64(len(x.entries) - 1)
	i := x.home(h)
	for x.entries[i].id != 0 {
		i = (i + 1) & mask
	}
	x.entries[i] = indexEntry{hash: h, id: id + 1}
	x.n++
}

// remove deletes slot id, whose item hashes to h; it must be in the index. A later
// entry of the probe run moves into the hole when the hole lies between its home
// and its position (cyclically), so lookups never stop early.
func (x *index) remove(h uint64, id int32) {
	mask := uint64(len(x.entries) - 1)
	i := x.home(h)
	for x.entries[i].id != id+1 {
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		e := x.entries[j]
		if e.id == 0 {
			break
		}
		if (j-x.home(e.hash))&mask >= (j-i)&mask {
			x.entries[i] = e
			i = j
		}
	}
	x.entries[i] = indexEntry{}
	x.n--
}

func (x *index) grow() {
	old := x.entries
	x.entries = make([]indexEntry, max(2*len(old), minIndexSize))
	x.n = 0
	for _, e := range old {
		if e.id != 0 {
			x.put(e.hash, e.id-1)
		}
	}
}
