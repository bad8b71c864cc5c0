package process

import (
	"bufio"
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// maxLine is the longest log line written as one CRI entry; longer lines are
// split into "P" (partial) entries.
const maxLine = 16 * 1024

// logWriter appends CRI-format lines from both streams to one file.
type logWriter struct {
	mu sync.Mutex
	f  *os.File
}

func (w *logWriter) write(stream, tag string, text []byte) {
	buf := make([]byte, 0, len(text)+48)
	buf = time.Now().UTC().AppendFormat(buf, time.RFC3339Nano)
	buf = append(buf, ' ')
	buf = append(buf, stream...)
	buf = append(buf, ' ')
	buf = append(buf, tag...)
	buf = append(buf, ' ')
	buf = append(buf, text...)
	buf = append(buf, '\n')
	w.mu.Lock()
	_, _ = w.f.Write(buf)
	w.mu.Unlock()
}

// copy reads r until EOF, writing one entry per line.
func (w *logWriter) copy(r io.ReadCloser, stream string) {
	defer r.Close()
	br := bufio.NewReaderSize(r, maxLine)
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			w.write(stream, "F", line[:len(line)-1])
		case errors.Is(err, bufio.ErrBufferFull):
			w.write(stream, "P", line)
		default:
			// An unterminated last line is partial, as CRI runtimes
			// write it: read back, the log ends as the output did.
			if len(line) > 0 {
				w.write(stream, "P", line)
			}
			return
		}
	}
}
