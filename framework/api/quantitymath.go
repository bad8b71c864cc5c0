package api

import (
	"fmt"
	"math/big"
	"strings"
)

// Exact Quantity arithmetic: quota usage sums and limit comparisons must not
// round (a sum of "252Mi" and "100Mi" is "352Mi", never 369098752.0000001).

var (
	decimalSuffixes = []struct {
		s string
		e int64
	}{{"E", 18}, {"P", 15}, {"T", 12}, {"G", 9}, {"M", 6}, {"k", 3}}
	binarySuffixes = []struct {
		s string
		p uint
	}{{"Ei", 60}, {"Pi", 50}, {"Ti", 40}, {"Gi", 30}, {"Mi", 20}, {"Ki", 10}}
	fractionSuffixes = []struct {
		s string
		e int64
	}{{"m", 3}, {"u", 6}, {"n", 9}}
)

// Rat returns the quantity's exact value in base units (0 for the empty
// quantity).
func (q Quantity) Rat() (*big.Rat, error) {
	s := strings.TrimSpace(q.S)
	if s == "" {
		return new(big.Rat), nil
	}
	if _, err := q.Float64(); err != nil {
		return nil, err
	}
	i := len(s)
	for i > 0 && !(s[i-1] >= '0' && s[i-1] <= '9' || s[i-1] == '.') {
		i--
	}
	num, suffix := s[:i], s[i:]
	// A plain number or one with a decimal exponent ("1e3", "5E-2") ends in
	// digits, so its suffix is empty: big.Rat reads both forms.
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return nil, fmt.Errorf("quantity %q: not a number", q.S)
	}
	if suffix == "" {
		return r, nil
	}
	for _, d := range decimalSuffixes {
		if d.s == suffix {
			return r.Mul(r, new(big.Rat).SetInt(pow10(d.e))), nil
		}
	}
	for _, b := range binarySuffixes {
		if b.s == suffix {
			return r.Mul(r, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), b.p))), nil
		}
	}
	for _, f := range fractionSuffixes {
		if f.s == suffix {
			return r.Quo(r, new(big.Rat).SetInt(pow10(f.e))), nil
		}
	}
	return nil, fmt.Errorf("quantity %q: unknown suffix %q", q.S, suffix)
}

func pow10(e int64) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(e), nil) }

// IsBinary reports whether the quantity is written with a binary suffix (Ki,
// Mi, ...); sums keep that notation.
func (q Quantity) IsBinary() bool {
	for _, b := range binarySuffixes {
		if strings.HasSuffix(q.S, b.s) {
			return true
		}
	}
	return false
}

// QuantityFromRat renders r in Kubernetes' canonical notation: whole
// multiples of 1024 with a binary suffix when binary is set, of 1000 with a
// decimal one otherwise, fractions in m, u or n (rounded up to 1n).
func QuantityFromRat(r *big.Rat, binary bool) Quantity {
	if r.Sign() == 0 {
		return Quantity{S: "0"}
	}
	sign := ""
	abs := new(big.Rat).Abs(r)
	if r.Sign() < 0 {
		sign = "-"
	}
	if abs.IsInt() {
		n := abs.Num()
		if binary {
			for _, b := range binarySuffixes {
				unit := new(big.Int).Lsh(big.NewInt(1), b.p)
				if new(big.Int).Mod(n, unit).Sign() == 0 {
					return Quantity{S: sign + new(big.Int).Quo(n, unit).String() + b.s}
				}
			}
			return Quantity{S: sign + n.String()}
		}
		for _, d := range decimalSuffixes {
			unit := pow10(d.e)
			if new(big.Int).Mod(n, unit).Sign() == 0 {
				return Quantity{S: sign + new(big.Int).Quo(n, unit).String() + d.s}
			}
		}
		return Quantity{S: sign + n.String()}
	}
	for _, f := range fractionSuffixes {
		scaled := new(big.Rat).Mul(abs, new(big.Rat).SetInt(pow10(f.e)))
		if scaled.IsInt() || f.s == "n" {
			v := new(big.Int).Quo(scaled.Num(), scaled.Denom())
			if !scaled.IsInt() {
				v.Add(v, big.NewInt(1))
			}
			return Quantity{S: sign + v.String() + f.s}
		}
	}
	return Quantity{S: "0"} // unreachable: the n case always returns
}

// Add returns q+o exactly; a malformed operand counts as 0.
func (q Quantity) Add(o Quantity) Quantity {
	a, b := q.ratOrZero(), o.ratOrZero()
	return QuantityFromRat(a.Add(a, b), q.IsBinary() || (q.IsZero() && o.IsBinary()))
}

// Sub returns q-o exactly; a malformed operand counts as 0.
func (q Quantity) Sub(o Quantity) Quantity {
	a, b := q.ratOrZero(), o.ratOrZero()
	return QuantityFromRat(a.Sub(a, b), q.IsBinary() || (q.IsZero() && o.IsBinary()))
}

// Cmp compares q and o by value: -1, 0 or +1; a malformed operand counts as 0.
func (q Quantity) Cmp(o Quantity) int { return q.ratOrZero().Cmp(o.ratOrZero()) }

// Sign returns -1, 0 or +1; a malformed quantity counts as 0.
func (q Quantity) Sign() int { return q.ratOrZero().Sign() }

func (q Quantity) ratOrZero() *big.Rat {
	r, err := q.Rat()
	if err != nil {
		return new(big.Rat)
	}
	return r
}
