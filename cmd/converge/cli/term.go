package cli

import (
	"fmt"
	"io"
	"os"
	"time"
)

// isTerminal reports whether w is a character device (an interactive terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// color wraps s in an ANSI color when w is a terminal and NO_COLOR is unset.
func (g *globalOptions) color(w io.Writer, code, s string) string {
	if g.getenv("NO_COLOR") != "" || !isTerminal(w) {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

const (
	colorGreen = "32"
	colorRed   = "31"
)

// statusLine shows the progress of a wait: on a terminal one line rewritten in
// place with a spinner and the elapsed time; otherwise one plain line each time
// the message changes.
type statusLine struct {
	w      io.Writer
	tty    bool
	start  time.Time
	last   string
	frame  int
	active bool
}

func (g *globalOptions) newStatusLine() *statusLine {
	return &statusLine{w: g.stderr, tty: isTerminal(g.stderr), start: time.Now()}
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Update shows msg.
func (s *statusLine) Update(msg string) {
	if s.tty {
		s.frame++
		fmt.Fprintf(s.w, "\r\x1b[K%s %s (%s)", spinner[s.frame%len(spinner)], msg, time.Since(s.start).Round(time.Second))
		s.active = true
		return
	}
	if msg != s.last {
		fmt.Fprintln(s.w, msg)
		s.last = msg
	}
}

// Done clears the live line so that the final result prints on a clean line.
func (s *statusLine) Done() {
	if s.tty && s.active {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.active = false
	}
}
