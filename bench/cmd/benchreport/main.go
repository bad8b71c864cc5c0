// Command benchreport turns `go test -bench` output into a markdown table comparing
// Converge with its peers. It pairs every benchmark with a path segment "converge"
// (for example BenchmarkWorkqueue/converge/p8) with the benchmarks that differ only in
// that segment (BenchmarkWorkqueue/clientgo/p8) and prints, per pair, the median
// ns/op (with the range over runs), B/op and allocs/op of each side and the ratio of
// the medians, peer ns/op ÷ converge ns/op: above 1 means Converge is faster.
// Repeated runs (-count, or several go test runs concatenated, which interleaves the
// peers better on a shared machine) are summarised by their median. Custom metrics
// reported with b.ReportMetric (for example heap-MB) follow in a second table with
// the ratio converge ÷ peer of their medians (below 1: Converge uses less).
//
//	go test -run '^$' -bench . -count 5 ./workqueue/ | go run ./cmd/benchreport
package main

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	results, header, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
	rows := pair(results)
	if len(rows) == 0 {
		fmt.Fprintln(os.Stderr, "benchreport: no benchmark pairs with a \"converge\" variant in the input")
		os.Exit(1)
	}
	write(os.Stdout, header, rows)
}

// samples holds every run of one benchmark.
type samples struct {
	ns, bytes, allocs []float64
	custom            map[string][]float64 // other units, by unit
}

// parse reads benchmark result lines, keyed by name without the -GOMAXPROCS suffix,
// and the goos/goarch/cpu header lines.
func parse(r io.Reader) (map[string]*samples, []string, error) {
	results := make(map[string]*samples)
	var header []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		for _, h := range []string{"goos:", "goarch:", "cpu:"} {
			if strings.HasPrefix(line, h) && !slices.Contains(header, line) {
				header = append(header, line)
			}
		}
		fields := strings.Fields(line)
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := trimProcs(fields[0])
		s := results[name]
		if s == nil {
			s = &samples{}
			results[name] = s
		}
		// fields[1] is the iteration count; then value/unit pairs.
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				break
			}
			switch fields[i+1] {
			case "ns/op":
				s.ns = append(s.ns, v)
			case "B/op":
				s.bytes = append(s.bytes, v)
			case "allocs/op":
				s.allocs = append(s.allocs, v)
			default:
				if s.custom == nil {
					s.custom = make(map[string][]float64)
				}
				s.custom[fields[i+1]] = append(s.custom[fields[i+1]], v)
			}
		}
	}
	return results, header, sc.Err()
}

// trimProcs removes the "-N" GOMAXPROCS suffix go test appends to names.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}

type row struct {
	name, peer        string // name with the converge segment replaced by "*"
	converge, against *samples
}

// pair matches each converge benchmark with the benchmarks that differ from it only
// in the converge segment.
func pair(results map[string]*samples) []row {
	var rows []row
	for name, s := range results {
		parts := strings.Split(name, "/")
		for i, p := range parts {
			if p == "converge" {
				continue
			}
			alt := slices.Clone(parts)
			alt[i] = "converge"
			c, ok := results[strings.Join(alt, "/")]
			if !ok {
				continue
			}
			alt[i] = "*"
			rows = append(rows, row{name: strings.Join(alt, "/"), peer: p, converge: c, against: s})
		}
	}
	slices.SortFunc(rows, func(a, b row) int {
		return strings.Compare(a.name+"\x00"+a.peer, b.name+"\x00"+b.peer)
	})
	return rows
}

func write(w io.Writer, header []string, rows []row) {
	if len(header) > 0 {
		fmt.Fprintf(w, "%s\n\n", strings.Join(header, "; "))
	}
	fmt.Fprintln(w, "| benchmark | peer | converge ns/op | peer ns/op | peer ÷ converge | converge B/op | peer B/op | converge allocs/op | peer allocs/op | runs |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		cns, pns := median(r.converge.ns), median(r.against.ns)
		ratio := "n/a"
		if cns > 0 && pns > 0 {
			ratio = fmt.Sprintf("%.2f×", pns/cns)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d/%d |\n",
			r.name, r.peer, spread(r.converge.ns), spread(r.against.ns), ratio,
			num(median(r.converge.bytes)), num(median(r.against.bytes)),
			num(median(r.converge.allocs)), num(median(r.against.allocs)),
			len(r.converge.ns), len(r.against.ns))
	}
	writeCustom(w, rows)
}

// writeCustom prints the custom metrics both sides of a pair report.
func writeCustom(w io.Writer, rows []row) {
	header := false
	for _, r := range rows {
		units := slices.Sorted(maps.Keys(r.converge.custom))
		for _, u := range units {
			pv, ok := r.against.custom[u]
			if !ok {
				continue
			}
			if !header {
				fmt.Fprintln(w)
				fmt.Fprintln(w, "| benchmark | peer | metric | converge | peer | converge ÷ peer | runs |")
				fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|")
				header = true
			}
			cv := r.converge.custom[u]
			ratio := "n/a"
			if c, p := median(cv), median(pv); p > 0 {
				ratio = fmt.Sprintf("%.2f×", c/p)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %d/%d |\n",
				r.name, r.peer, u, spread(cv), spread(pv), ratio, len(cv), len(pv))
		}
	}
}

// spread formats the median of v and, for several runs, their range.
func spread(v []float64) string {
	if len(v) < 2 {
		return num(median(v))
	}
	return fmt.Sprintf("%s (%s–%s)", num(median(v)), num(slices.Min(v)), num(slices.Max(v)))
}

// median returns the median of v, or -1 when v is empty.
func median(v []float64) float64 {
	if len(v) == 0 {
		return -1
	}
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func num(v float64) string {
	if v < 0 {
		return "–"
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}
