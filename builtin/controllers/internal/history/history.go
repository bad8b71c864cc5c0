// Package history holds what the workload controllers share about pod-template
// revisions: the template hash (pod-template-hash, controller-revision-hash),
// comparison of stored revision data, and which old ControllerRevisions to
// prune beyond a history limit.
package history

import (
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"slices"
	"strconv"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// Alphabet is the consonant-and-digit alphabet of SafeEncodeString (no vowels,
// so no words; no 0/1/3 that look like letters).
const Alphabet = "bcdfghjklmnpqrstvwxz2456789"

// SafeEncodeString maps every byte of s onto Alphabet, like Kubernetes'
// rand.SafeEncodeString.
func SafeEncodeString(s string) string {
	r := make([]byte, len(s))
	for i, b := range []byte(s) {
		r[i] = Alphabet[int(b)%len(Alphabet)]
	}
	return string(r)
}

// ComputeHash returns the hash of a pod template: FNV-32a over its JSON form
// and, when set, the collision count (4 bytes, little endian), as a decimal
// string passed through SafeEncodeString — Kubernetes' controller.ComputeHash.
func ComputeHash(t *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	b, _ := json.Marshal(t) // a PodTemplateSpec always marshals
	_, _ = h.Write(b)
	if collisionCount != nil {
		var buf [4]byte
		binary.LittleEndian.PutUint32(buf[:], uint32(*collisionCount))
		_, _ = h.Write(buf[:])
	}
	return SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// JSONEqual reports whether two JSON documents are equal once decoded.
func JSONEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// Prunable returns the revisions to delete so that at most limit of the unused
// ones remain: the oldest (lowest revision numbers) first.
func Prunable(unused []appsv1.ControllerRevision, limit int) []appsv1.ControllerRevision {
	if len(unused) <= limit {
		return nil
	}
	old := slices.Clone(unused)
	slices.SortFunc(old, func(a, b appsv1.ControllerRevision) int { return int(a.Revision - b.Revision) })
	return old[:len(old)-limit]
}

// NextCollisionCount returns the collision count after one more collision.
func NextCollisionCount(c *int32) *int32 {
	n := int32(1)
	if c != nil {
		n = *c + 1
	}
	return &n
}
