package stats

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ReadHost reads this machine's totals: CPU time spent outside idle and
// iowait from /proc/stat, and MemTotal − MemAvailable from /proc/meminfo as
// the working set.
func ReadHost() (Reading, error) {
	st, err := os.ReadFile("/proc/stat")
	if err != nil {
		return Reading{}, fmt.Errorf("read /proc/stat: %w", err)
	}
	mi, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return Reading{}, fmt.Errorf("read /proc/meminfo: %w", err)
	}
	return parseHost(st, mi, time.Now())
}

// parseHost reads the aggregate "cpu" line of /proc/stat (USER_HZ ticks:
// user nice system idle iowait irq softirq steal ...) and /proc/meminfo (kB).
func parseHost(procStat, memInfo []byte, now time.Time) (Reading, error) {
	r := Reading{Time: now}
	line, _, _ := bytes.Cut(procStat, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return Reading{}, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var busy uint64
	for i, v := range f[1:9] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return Reading{}, fmt.Errorf("/proc/stat: field %d: %w", i+1, err)
		}
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	r.CPUNanos = busy * uint64(time.Second/100)
	var total, avail uint64
	var haveTotal, haveAvail bool
	sc := bufio.NewScanner(bytes.NewReader(memInfo))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "MemTotal":
			total, haveTotal = n*1024, true
		case "MemAvailable":
			avail, haveAvail = n*1024, true
		}
	}
	if !haveTotal || !haveAvail {
		return Reading{}, fmt.Errorf("/proc/meminfo: no MemTotal or MemAvailable")
	}
	if avail < total {
		r.WorkingSet = total - avail
	}
	r.hasWorkingSet = true
	return r, nil
}
