package containerd

import (
	"bytes"
	"os"
	"sync"
	"time"
)

// maxLine is the longest piece of a line written as one record; longer lines
// are split into "P" records followed by a final "F" record, as CRI runtimes do.
const maxLine = 16 * 1024

// logFile appends CRI-format records to a file. Each record is one write, so
// records of the two streams never interleave.
type logFile struct {
	mu  sync.Mutex // guards f and closed
	f   *os.File   // nil once closed
	now func() time.Time
}

func newLogFile(f *os.File) *logFile { return &logFile{f: f, now: time.Now} }

func (l *logFile) stream(name string) *logStream { return &logStream{file: l, name: name} }

func (l *logFile) record(stream, tag string, line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	ts := l.now().UTC().Format(time.RFC3339Nano)
	buf := make([]byte, 0, len(ts)+len(stream)+len(line)+5)
	buf = append(buf, ts...)
	buf = append(buf, ' ')
	buf = append(buf, stream...)
	buf = append(buf, ' ')
	buf = append(buf, tag...)
	buf = append(buf, ' ')
	buf = append(buf, line...)
	buf = append(buf, '\n')
	_, _ = l.f.Write(buf) // a full disk loses log lines, never the container
}

func (l *logFile) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}

// logStream turns one output stream into records. cio's copy goroutine for the
// stream is its only writer.
type logStream struct {
	file    *logFile
	name    string
	mu      sync.Mutex // guards pending (Write and flush may race at exit)
	pending []byte
}

// Write records every complete line and keeps the rest for later.
func (s *logStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.pending = append(s.pending, p...)
			for len(s.pending) >= maxLine {
				s.file.record(s.name, "P", s.pending[:maxLine])
				s.pending = append(s.pending[:0], s.pending[maxLine:]...)
			}
			break
		}
		line := p[:i]
		if len(s.pending) > 0 {
			line = append(s.pending, line...)
		}
		for len(line) > maxLine {
			s.file.record(s.name, "P", line[:maxLine])
			line = line[maxLine:]
		}
		s.file.record(s.name, "F", line)
		s.pending = s.pending[:0]
		p = p[i+1:]
	}
	return n, nil
}

// flush records an unterminated last line as a partial ("P") one, as CRI
// runtimes do: read back, the log ends without a newline, as written.
func (s *logStream) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) > 0 {
		s.file.record(s.name, "P", s.pending)
		s.pending = s.pending[:0]
	}
}
