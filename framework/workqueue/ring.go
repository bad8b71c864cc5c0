package workqueue

// ring is a FIFO of items on a power-of-two circular buffer. It grows by doubling
// and keeps its backing array, so steady-state push and pop never allocate. It is
// not safe for concurrent use; Typed guards it with its mutex.
type ring[T any] struct {
	buf  []T
	head int // index of the oldest item
	n    int // number of items
}

const minRingSize = 16

func (r *ring[T]) push(item T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = item
	r.n++
}

// pop removes and returns the oldest item; the caller checks r.n > 0 first.
func (r *ring[T]) pop() T {
	var zero T
	item := r.buf[r.head]
	r.buf[r.head] = zero // do not keep the item reachable
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	if r.n == 0 {
		r.head = 0
	}
	return item
}

func (r *ring[T]) grow() {
	size := max(2*len(r.buf), minRingSize)
	buf := make([]T, size)
	// Unroll the two halves of the circle in order.
	k := copy(buf, r.buf[r.head:])
	copy(buf[k:], r.buf[:r.head])
	r.buf, r.head = buf, 0
}
