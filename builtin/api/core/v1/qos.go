package v1

import (
	"math/big"

	"github.com/converge-dev/converge/framework/api"
)

// PodQOS computes a pod's quality-of-service class from the cpu and memory
// requests and limits of its containers and init containers, as Kubernetes
// does: BestEffort when none is set (zero values do not count), Guaranteed
// when every container limits both cpu and memory and the summed requests
// equal the summed limits, else Burstable.
//
// The sums are those of api.Quantity.Add, which rounds each partial sum up
// to a nanounit: they are kept as exact rationals, rounded the same way,
// rather than written out and read back at every step.
func PodQOS(spec *PodSpec) PodQOSClass {
	var requests, limits qosSums
	guaranteed := true
	for _, cs := range [][]Container{spec.Containers, spec.InitContainers} {
		for i := range cs {
			r := &cs[i].Resources
			for n, name := range [...]string{string(ResourceCPU), string(ResourceMemory)} {
				if q, ok := r.Requests[name]; ok {
					requests.add(n, q)
				}
				if q, ok := r.Limits[name]; !ok || !limits.add(n, q) {
					guaranteed = false
				}
			}
		}
	}
	if requests.count() == 0 && limits.count() == 0 {
		return PodQOSBestEffort
	}
	if guaranteed && requests.count() == limits.count() {
		for n := range requests.sum {
			if requests.sum[n] != nil && (limits.sum[n] == nil || limits.sum[n].Cmp(requests.sum[n]) != 0) {
				guaranteed = false
				break
			}
		}
		if guaranteed {
			return PodQOSGuaranteed
		}
	}
	return PodQOSBurstable
}

// qosSums are the sums of the positive cpu (0) and memory (1) quantities;
// nil when there was none.
type qosSums struct {
	sum [2]*big.Rat
}

// add adds q to sum n when it is positive (a malformed quantity counts as
// 0) and reports whether it was.
func (s *qosSums) add(n int, q api.Quantity) bool {
	r, err := q.Rat()
	if err != nil || r.Sign() <= 0 {
		return false
	}
	if s.sum[n] == nil {
		s.sum[n] = new(big.Rat)
	}
	s.sum[n].Add(s.sum[n], r)
	roundUpNano(s.sum[n])
	return true
}

func (s *qosSums) count() int {
	c := 0
	for _, r := range s.sum {
		if r != nil {
			c++
		}
	}
	return c
}

// roundUpNano rounds a positive r up to a whole number of nanounits, as
// api.QuantityFromRat writes it.
func roundUpNano(r *big.Rat) {
	if r.IsInt() {
		return
	}
	nano := big.NewInt(1_000_000_000)
	q, m := new(big.Int).QuoRem(new(big.Int).Mul(r.Num(), nano), r.Denom(), new(big.Int))
	if m.Sign() == 0 {
		return
	}
	r.SetFrac(q.Add(q, big.NewInt(1)), nano)
}
