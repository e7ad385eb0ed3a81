package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultInterval is the least time between two updates of a Reporter.
const DefaultInterval = 200 * time.Millisecond

// IsTerminal reports whether f is a character device, as a terminal is.
// It needs no system-specific calls: a redirected stream is a regular
// file, a pipe or a socket, none of which is a character device. (The
// null device is one too; writing progress there is harmless.)
func IsTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	st, err := f.Stat()
	if err != nil {
		return false
	}
	return st.Mode()&os.ModeCharDevice != 0
}

// Reporter writes one self-overwriting status line. It is safe for
// concurrent use.
type Reporter struct {
	w     io.Writer
	label string
	// Interval is the least time between two written updates.
	Interval time.Duration

	mu      sync.Mutex
	now     func() time.Time
	last    time.Time
	written bool // a status line is on screen and needs ending
}

// New returns a Reporter that writes to f when f is a terminal, and nil
// (which reports nothing) otherwise.
func New(f *os.File, label string) *Reporter {
	if !IsTerminal(f) {
		return nil
	}
	return NewWriter(f, label)
}

// NewWriter returns a Reporter that always writes to w. Use New for the
// terminal check; NewWriter is for callers that made the decision.
func NewWriter(w io.Writer, label string) *Reporter {
	return &Reporter{w: w, label: label, Interval: DefaultInterval, now: time.Now}
}

// Update shows a new status unless the previous one was written less than
// Interval ago.
func (r *Reporter) Update(format string, args ...any) {
	if r == nil {
		return
	}
	r.show(false, format, args)
}

// Show shows a new status at once, whatever the rate limit: for the start
// of a new phase of work, which should not wait behind the previous one's
// last update.
func (r *Reporter) Show(format string, args ...any) {
	if r == nil {
		return
	}
	r.show(true, format, args)
}

func (r *Reporter) show(force bool, format string, args []any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.now()
	if !force && r.written && t.Sub(r.last) < r.Interval {
		return
	}
	r.last = t
	r.written = true
	// \r returns to the line start and ESC[K clears what a longer
	// previous status left behind.
	fmt.Fprintf(r.w, "\r%s: %s\x1b[K", r.label, fmt.Sprintf(format, args...))
}

// Done ends the status line: it shows a final status (when format is not
// empty) and moves to a new line, so later output starts clean. With an
// empty format it just clears the line.
func (r *Reporter) Done(format string, args ...any) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if format != "" {
		fmt.Fprintf(r.w, "\r%s: %s\x1b[K\n", r.label, fmt.Sprintf(format, args...))
		r.written = false
		return
	}
	r.clear()
}

// clear erases the status line if one is on screen. r.mu is held.
func (r *Reporter) clear() {
	if r.written {
		fmt.Fprint(r.w, "\r\x1b[K")
		r.written = false
	}
}

// Wrap returns a writer for other output to the same terminal, such as
// results on stdout: each write first clears the status line, so the text
// starts at the beginning of a line instead of after the status. The next
// update shows the status again below it. A nil Reporter returns w.
func (r *Reporter) Wrap(w io.Writer) io.Writer {
	if r == nil {
		return w
	}
	return clearingWriter{r, w}
}

type clearingWriter struct {
	r *Reporter
	w io.Writer
}

func (c clearingWriter) Write(p []byte) (int, error) {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	c.r.clear()
	return c.w.Write(p)
}

// Reader wraps rd so that reads from it report the bytes read so far, and
// the share of total when total > 0 (a file's size).
func (r *Reporter) Reader(rd io.Reader, total int64) *Reader {
	return &Reader{r: rd, rep: r, total: total}
}

// Reader counts the bytes read through it and reports them on its Reporter.
type Reader struct {
	r     io.Reader
	rep   *Reporter
	total int64
	n     atomic.Int64
}

// Read reads from the wrapped reader and reports progress.
func (c *Reader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	n := c.n.Add(int64(k))
	if c.rep != nil {
		if c.total > 0 {
			c.rep.Update("%s of %s (%.0f%%)", Bytes(n), Bytes(c.total), 100*float64(n)/float64(c.total))
		} else {
			c.rep.Update("%s", Bytes(n))
		}
	}
	return k, err
}

// Count returns the number of bytes read so far.
func (c *Reader) Count() int64 { return c.n.Load() }

// Bytes formats a byte count with a binary unit: "512 B", "1.5 MiB".
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
