package mesh

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ReadFile reads a graph from a file, choosing the reader by extension:
//
//	.mtx  Matrix Market matrix → FromCOO with zero MatrixOptions
//	.msh  Gmsh 4.1 mesh        → FromElements with zero ElementOptions
//	.egr  ECL binary graph     → used as it is
//
// with an optional .gz after any of them. The mesh is returned too when
// the file holds one (.msh), and is nil otherwise. Callers who need a
// strength threshold, a block size or vertex-only element graphs call
// ReadMatrixMarket or ReadGmsh and build the graph themselves.
func ReadFile(path string) (*Graph, *Mesh, error) {
	name := strings.ToLower(path)
	gz := strings.HasSuffix(name, ".gz")
	if gz {
		name = strings.TrimSuffix(name, ".gz")
	}
	ext := filepath.Ext(name)
	switch ext {
	case ".mtx", ".msh", ".egr":
	default:
		return nil, nil, fmt.Errorf("mesh: %s: unknown extension %q, want .mtx, .msh or .egr (optionally .gz)", path, ext)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if gz {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: gzip: %w", path, err)
		}
		defer zr.Close()
		r = gzipErrors{zr}
	}
	g, m, err := readGraph(r, ext)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, m, nil
}

// gzipErrors names gzip as the source of its read errors, so that a
// truncated or corrupt .gz says so rather than looking like a short file.
type gzipErrors struct{ r io.Reader }

func (g gzipErrors) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("gzip: %w", err)
	}
	return n, err
}

func readGraph(r io.Reader, ext string) (*Graph, *Mesh, error) {
	switch ext {
	case ".mtx":
		a, err := ReadMatrixMarket(r)
		if err != nil {
			return nil, nil, err
		}
		g, err := FromCOO(a, MatrixOptions{})
		return g, nil, err
	case ".msh":
		m, err := ReadGmsh(r)
		if err != nil {
			return nil, nil, err
		}
		g, err := FromElements(m, ElementOptions{})
		if err != nil {
			return nil, nil, err
		}
		return g, m, nil
	}
	g, err := ReadEGR(r)
	return g, nil, err
}

// ParseError reports malformed input to one of the readers: which format,
// where (a line for text formats, a byte offset for binary ones), and what
// is wrong.
type ParseError struct {
	Format string // "mtx", "msh" or "egr"
	Line   int    // 1-based line of a text file; 0 for binary formats
	Offset int64  // byte offset in a binary file
	Msg    string
	Err    error // underlying cause such as io.ErrUnexpectedEOF, or nil
}

func (e *ParseError) Error() string {
	where := fmt.Sprintf("line %d", e.Line)
	if e.Line == 0 {
		where = fmt.Sprintf("byte offset %d", e.Offset)
	}
	s := fmt.Sprintf("mesh: %s %s: %s", e.Format, where, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *ParseError) Unwrap() error { return e.Err }

// errNilIO reports a nil reader or writer passed to op.
func errNilIO(op, what string) error {
	return fmt.Errorf("mesh: %s: nil %s", op, what)
}

func parseFloat(b []byte) (float64, error) {
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, errors.New("not a number")
	}
	if !isFinite(v) {
		return 0, errors.New("not finite")
	}
	return v, nil
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// parseInt parses a decimal integer with an optional sign, without
// allocating; it reports false on junk or overflow.
func parseInt(b []byte) (int64, bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, i = b[0] == '-', 1
	}
	if i == len(b) {
		return 0, false
	}
	var n int64
	for ; i < len(b); i++ {
		d := int64(b[i]) - '0'
		if d < 0 || d > 9 || n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if neg {
		n = -n
	}
	return n, true
}

// splitFields splits line at blanks into dst and returns the number of
// fields; a result above len(dst) means the line had more.
func splitFields(line []byte, dst [][]byte) int {
	n := 0
	for i := 0; i < len(line); {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		for j < len(line) && !isSpace(line[j]) {
			j++
		}
		if n < len(dst) {
			dst[n] = line[i:j]
		}
		n++
		i = j
	}
	return n
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

// remainingBytes returns how many bytes r can still deliver when r can
// tell (an in-memory reader, a regular file), or -1.
func remainingBytes(r io.Reader) int64 {
	switch v := r.(type) {
	case *bytes.Reader:
		return int64(v.Len())
	case *strings.Reader:
		return int64(v.Len())
	case *bytes.Buffer:
		return int64(v.Len())
	case interface {
		Stat() (fs.FileInfo, error)
		io.Seeker
	}:
		fi, err := v.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return -1
		}
		pos, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			return -1
		}
		return max(fi.Size()-pos, 0)
	}
	return -1
}

// capEstimate is the capacity to preallocate for count items declared by
// a header, when each needs at least minBytes of input: never more than
// the remaining input could hold, and modest when that is unknown.
func capEstimate(count, remaining, minBytes int64) int {
	const unknownCap = 1 << 16
	limit := int64(unknownCap)
	if remaining >= 0 {
		limit = remaining/minBytes + 1
	}
	return int(max(min(count, limit), 0))
}

// textScanner reads text by lines or by blank-separated tokens, counting
// lines for error messages, without allocating per line or token. The
// slices it returns alias its buffer and are valid until the next call.
type textScanner struct {
	r      io.Reader
	format string
	buf    []byte
	pos    int   // first unread byte
	end    int   // end of buffered data
	line   int   // line number of buf[pos]
	last   int   // line number of the last line or token returned
	eof    bool  // r has no more data
	err    error // read error other than io.EOF
	// cut is set when the last line or token returned ended at the end
	// of input rather than at a blank or line end: in a file that turns
	// out malformed there, the likely cause is truncation.
	cut bool
}

func newTextScanner(r io.Reader, format string) *textScanner {
	return &textScanner{r: r, format: format, buf: make([]byte, 64<<10), line: 1}
}

// fill moves the unread bytes to the front of the buffer and reads more,
// growing the buffer when it is full. It reports whether it got any.
func (s *textScanner) fill() bool {
	if s.eof {
		return false
	}
	if s.pos > 0 {
		s.end = copy(s.buf, s.buf[s.pos:s.end])
		s.pos = 0
	}
	if s.end == len(s.buf) {
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	for {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.err = err
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

// readLine returns the rest of the current line without its line end, and
// its number; ok is false at the end of input.
func (s *textScanner) readLine() (line []byte, no int, ok bool) {
	if s.pos >= s.end && !s.fill() {
		return nil, max(s.last, 1), false
	}
	k := 0 // bytes already searched
	for {
		if i := bytes.IndexByte(s.buf[s.pos+k:s.end], '\n'); i >= 0 {
			line = s.buf[s.pos : s.pos+k+i]
			s.pos += k + i + 1
			no = s.line
			s.last = no
			s.line++
			return bytes.TrimSuffix(line, []byte{'\r'}), no, true
		}
		k = s.end - s.pos
		if !s.fill() {
			if s.err != nil {
				// A line cut by a read error is not data.
				s.pos = s.end
				return nil, s.line, false
			}
			line = s.buf[s.pos:s.end]
			s.pos = s.end
			s.last = s.line
			s.cut = true
			return bytes.TrimSuffix(line, []byte{'\r'}), s.line, true
		}
	}
}

// token returns the next blank-separated token and its line number, or
// nil at the end of input.
func (s *textScanner) token() ([]byte, int) {
	for {
		for s.pos < s.end {
			c := s.buf[s.pos]
			if !isSpace(c) {
				s.last = s.line
				return s.rest(), s.line
			}
			if c == '\n' {
				s.line++
			}
			s.pos++
		}
		if !s.fill() {
			return nil, max(s.last, 1)
		}
	}
}

// rest returns the token starting at s.pos.
func (s *textScanner) rest() []byte {
	k := 1
	for {
		for s.pos+k < s.end {
			if isSpace(s.buf[s.pos+k]) {
				tok := s.buf[s.pos : s.pos+k]
				s.pos += k
				return tok
			}
			k++
		}
		if !s.fill() {
			tok := s.buf[s.pos:s.end]
			s.pos = s.end
			if s.err != nil {
				return nil // a token cut by a read error is not data
			}
			s.cut = true
			return tok
		}
	}
}

// errorf reports malformed input on a line. When that line is the last
// and has no line end, the message says the file is probably truncated
// there, which explains errors such as a repeated tag that is the prefix
// of a longer one.
func (s *textScanner) errorf(line int, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if s.cut && line == s.last && s.pos >= s.end {
		msg = fmt.Sprintf("file is probably truncated at line %d, which it ends without a line end: %s", line, msg)
	}
	return &ParseError{Format: s.format, Line: max(line, 1), Msg: msg}
}

// eofError reports that input ended where msg says, or failed: a read
// error (a truncated or corrupt gzip stream, an I/O error) is named as such.
func (s *textScanner) eofError(line int, msg string) error {
	if s.err != nil {
		return &ParseError{Format: s.format, Line: max(line, 1),
			Msg: fmt.Sprintf("input is truncated or corrupt: reading failed here (%s)", msg), Err: s.err}
	}
	return &ParseError{Format: s.format, Line: max(line, 1), Msg: msg, Err: io.ErrUnexpectedEOF}
}
