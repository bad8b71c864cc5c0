package logs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"
)

// Options select what to render. The zero value renders the whole log once.
type Options struct {
	Follow     bool
	Timestamps bool
	// TailLines keeps only the last n lines (nil: all).
	TailLines *int64
	// SinceTime drops older lines (nil: none).
	SinceTime *time.Time
	// LimitBytes stops after n bytes (nil: no limit).
	LimitBytes *int64
	// Previous asks for the previous container's log (the caller picks the file).
	Previous bool
}

// ParseQuery reads Options from a pods/log style query: follow, timestamps,
// tailLines, sinceSeconds, sinceTime (RFC 3339), limitBytes, previous.
func ParseQuery(q url.Values) (Options, error) {
	var o Options
	var errs []error
	boolean := func(k string) bool {
		v := q.Get(k)
		if v == "" {
			return false
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: not a boolean", k, v))
		}
		return b
	}
	integer := func(k string) *int64 {
		v := q.Get(k)
		if v == "" {
			return nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("%s=%q: not a non-negative integer", k, v))
			return nil
		}
		return &n
	}
	o.Follow, o.Timestamps, o.Previous = boolean("follow"), boolean("timestamps"), boolean("previous")
	o.TailLines, o.LimitBytes = integer("tailLines"), integer("limitBytes")
	if s := integer("sinceSeconds"); s != nil {
		t := time.Now().Add(-time.Duration(*s) * time.Second)
		o.SinceTime = &t
	}
	if v := q.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			errs = append(errs, fmt.Errorf("sinceTime=%q: %v", v, err))
		} else {
			o.SinceTime = &t
		}
	}
	return o, errors.Join(errs...)
}

// Line is one parsed log entry.
type Line struct {
	Time    time.Time
	Stream  string
	Partial bool
	Text    []byte
}

// ParseLine parses one CRI line (without its newline).
func ParseLine(b []byte) (Line, bool) {
	i := bytes.IndexByte(b, ' ')
	if i < 0 {
		return Line{}, false
	}
	ts, err := time.Parse(time.RFC3339Nano, string(b[:i]))
	if err != nil {
		return Line{}, false
	}
	rest := b[i+1:]
	j := bytes.IndexByte(rest, ' ')
	if j < 0 {
		return Line{}, false
	}
	stream := string(rest[:j])
	rest = rest[j+1:]
	if len(rest) < 1 {
		return Line{}, false
	}
	tag := rest[0]
	text := []byte{}
	if len(rest) > 2 {
		text = rest[2:]
	}
	return Line{Time: ts, Stream: stream, Partial: tag == 'P', Text: text}, true
}

// render appends the output form of l to buf.
func render(buf []byte, l Line, ts bool) []byte {
	if ts {
		buf = l.Time.UTC().AppendFormat(buf, time.RFC3339Nano)
		buf = append(buf, ' ')
	}
	buf = append(buf, l.Text...)
	if !l.Partial {
		buf = append(buf, '\n')
	}
	return buf
}

// Write renders the log file at path to w. With Follow it keeps reading new
// lines (flushing w after each when it is an http.Flusher) until running
// reports false and the file is drained, or ctx ends.
func Write(ctx context.Context, w io.Writer, path string, o Options, running func() bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	defer f.Close()
	flusher, _ := w.(http.Flusher)
	remaining := int64(-1)
	if o.LimitBytes != nil {
		remaining = *o.LimitBytes
	}
	emit := func(l Line) (bool, error) {
		if o.SinceTime != nil && l.Time.Before(*o.SinceTime) {
			return true, nil
		}
		out := render(nil, l, o.Timestamps)
		if remaining >= 0 {
			if int64(len(out)) > remaining {
				out = out[:remaining]
			}
			remaining -= int64(len(out))
		}
		if _, err := w.Write(out); err != nil {
			return false, err
		}
		return remaining != 0, nil
	}

	// First pass: everything present now (tail applied).
	br := bufio.NewReaderSize(f, 64*1024)
	var offset int64
	var lines []Line
	var pending []byte
	readAvailable := func() ([]Line, error) {
		var out []Line
		for {
			chunk, err := br.ReadBytes('\n')
			if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
				offset += int64(len(chunk))
				full := append(pending, chunk[:len(chunk)-1]...)
				pending = nil
				if l, ok := ParseLine(full); ok {
					out = append(out, l)
				}
				continue
			}
			pending = append(pending, chunk...)
			offset += int64(len(chunk))
			if err == io.EOF {
				return out, nil
			}
			if err != nil {
				return out, err
			}
		}
	}
	lines, err = readAvailable()
	if err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	if o.TailLines != nil && int64(len(lines)) > *o.TailLines {
		lines = lines[int64(len(lines))-*o.TailLines:]
	}
	for _, l := range lines {
		more, err := emit(l)
		if err != nil || !more {
			return err
		}
	}
	if flusher != nil {
		flusher.Flush()
	}
	if !o.Follow {
		return nil
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		alive := running == nil || running()
		lines, err := readAvailable()
		if err != nil {
			return fmt.Errorf("read log: %w", err)
		}
		for _, l := range lines {
			more, err := emit(l)
			if err != nil || !more {
				return err
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if !alive {
			return nil
		}
		// A rotation truncated the file: start again from its beginning.
		if fi, err := f.Stat(); err == nil && fi.Size() < offset {
			if _, err := f.Seek(0, io.SeekStart); err == nil {
				br.Reset(f)
				offset, pending = 0, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Rotate copies the log at path to path+".1" and truncates it when it is
// larger than maxBytes. Writers must append (O_APPEND).
func Rotate(path string, maxBytes int64) (bool, error) {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() <= maxBytes {
		return false, nil
	}
	src, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("rotate %s: %w", path, err)
	}
	defer src.Close()
	dst, err := os.Create(path + ".1")
	if err != nil {
		return false, fmt.Errorf("rotate %s: %w", path, err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return false, fmt.Errorf("rotate %s: %w", path, err)
	}
	if err := dst.Close(); err != nil {
		return false, fmt.Errorf("rotate %s: %w", path, err)
	}
	if err := os.Truncate(path, 0); err != nil {
		return false, fmt.Errorf("rotate %s: %w", path, err)
	}
	return true, nil
}
