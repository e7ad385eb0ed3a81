package mesh

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// ReadMatrixMarket reads a sparse matrix in Matrix Market coordinate format
// (fields real, integer or pattern; symmetry general, symmetric or
// skew-symmetric). Indices are 1-based in the file and 0-based in the
// result. Entries are kept in file order, repeats included (COO sums them).
//
// A symmetric file stores one triangle, the lower by the format, the upper
// as some writers do; every off-diagonal entry (i,j) is mirrored to (j,i).
// A symmetric file with entries on both sides of the diagonal is refused,
// with the lines of one of each: it is most likely a general matrix
// labelled symmetric, whose off-diagonal entries would count twice. A
// skew-symmetric file is mirrored with the sign flipped and may not hold
// diagonal entries. A pattern matrix has Val == nil. Complex and Hermitian
// matrices are refused, and so are NaN and infinite values.
func ReadMatrixMarket(r io.Reader) (*COO[float64], error) {
	if r == nil {
		return nil, errNilIO("ReadMatrixMarket", "reader")
	}
	hint := remainingBytes(r)
	s := newTextScanner(r, "mtx")
	h, err := readMMHeader(s)
	if err != nil {
		return nil, err
	}
	if h.array {
		return nil, s.errorf(1, "dense array file; read it with ReadMatrixMarketArray")
	}
	if h.symmetry != "general" && h.rows != h.cols {
		return nil, s.errorf(h.sizeLine, "%s matrix is %d×%d, not square", h.symmetry, h.rows, h.cols)
	}
	a, err := newMMMatrix(h, hint)
	if err != nil {
		return nil, err
	}
	if err := readMMEntries(s, h, a); err != nil {
		return nil, err
	}
	if err := s.expectOnlyComments(h.nnz); err != nil {
		return nil, err
	}
	return a, nil
}

// newMMMatrix returns the empty matrix a coordinate file's entries are
// appended to, its capacity the declared count only as far as the hint
// of the bytes left could hold: a lying header must not make it
// allocate ("1 1\n" is the shortest entry).
func newMMMatrix(h mmHeader, hint int64) (*COO[float64], error) {
	mirror := h.symmetry != "general"
	est := capEstimate(h.nnz, hint, 4)
	if mirror {
		est *= 2
	}
	// The entries the header declares, as far as the input could hold
	// them, at 16 bytes each (8 for a pattern), must fit in memory.
	entries := h.nnz
	if hint >= 0 {
		entries = min(entries, hint/4+1)
	}
	if mirror {
		entries = bytesOf(entries, 2)
	}
	per := int64(16)
	if h.field == "pattern" {
		per = 8
	}
	if err := CheckMemory("ReadMatrixMarket", fmt.Sprintf("the %d entries line %d declares", h.nnz, h.sizeLine), bytesOf(entries, per), 0); err != nil {
		return nil, err
	}
	a := &COO[float64]{
		Rows: h.rows, Cols: h.cols,
		Row: make([]int32, 0, est),
		Col: make([]int32, 0, est),
	}
	if h.field != "pattern" {
		a.Val = make([]float64, 0, est)
	}
	return a, nil
}

// readMMEntries appends the h.nnz entries of a coordinate file to a,
// mirrored unless the file is general.
func readMMEntries(s *textScanner, h mmHeader, a *COO[float64]) error {
	mirror := h.symmetry != "general"
	pattern := h.field == "pattern"
	want := 3
	if pattern {
		want = 2
	}
	var f [4][]byte
	var tri triangles
	for k := int64(0); k < h.nnz; {
		line, no, ok := s.readLine()
		if !ok {
			return s.eofError(no, fmt.Sprintf("file ends after %d of the %d entries the header declares", k, h.nnz))
		}
		nf := splitFields(line, f[:])
		if nf == 0 || f[0][0] == '%' {
			continue
		}
		if nf != want {
			return s.errorf(no, "entry has %d fields, want %d", nf, want)
		}
		i, err := parseIndex(f[0], h.rows)
		if err != nil {
			return s.errorf(no, "row index %q: %v", f[0], err)
		}
		j, err := parseIndex(f[1], h.cols)
		if err != nil {
			return s.errorf(no, "column index %q: %v", f[1], err)
		}
		v := 1.0
		if !pattern {
			if v, err = parseValue(f[2], h.field == "integer"); err != nil {
				return s.errorf(no, "value %q: %v", f[2], err)
			}
		}
		if mirror {
			if err := tri.see(s, i, j, no); err != nil {
				return err
			}
		}
		a.Row = append(a.Row, i)
		a.Col = append(a.Col, j)
		if !pattern {
			a.Val = append(a.Val, v)
		}
		if mirror && i != j {
			a.Row = append(a.Row, j)
			a.Col = append(a.Col, i)
			if !pattern {
				if h.symmetry == "skew-symmetric" {
					v = -v
				}
				a.Val = append(a.Val, v)
			}
		} else if i == j && h.symmetry == "skew-symmetric" {
			return s.errorf(no, "skew-symmetric matrix has a diagonal entry (%d,%d)", i+1, j+1)
		}
		k++
	}
	return nil
}

// triangles remembers the first entry of a symmetric file below and above
// the diagonal.
type triangles struct {
	lower, upper [3]int // row, column (1-based), line; line 0 when none yet
}

func (t *triangles) see(s *textScanner, i, j int32, line int) error {
	switch {
	case i > j && t.lower[2] == 0:
		t.lower = [3]int{int(i) + 1, int(j) + 1, line}
	case i < j && t.upper[2] == 0:
		t.upper = [3]int{int(i) + 1, int(j) + 1, line}
	default:
		return nil
	}
	if t.lower[2] == 0 || t.upper[2] == 0 {
		return nil
	}
	return s.errorf(line, "a symmetric file stores one triangle, but this one has (%d,%d) below the diagonal on line %d and (%d,%d) above it on line %d: "+
		"a general matrix labelled symmetric? Its off-diagonal entries would count twice",
		t.lower[0], t.lower[1], t.lower[2], t.upper[0], t.upper[1], t.upper[2])
}

// ReadMatrixMarketArray reads a dense Matrix Market array (right-hand
// sides, coordinates), field real or integer, symmetry general, symmetric
// or skew-symmetric. The file stores values column by column; data is
// returned row-major, data[i*cols+j], the layout of Graph.Coords.
func ReadMatrixMarketArray(r io.Reader) (rows, cols int, data []float64, err error) {
	if r == nil {
		return 0, 0, nil, errNilIO("ReadMatrixMarketArray", "reader")
	}
	hint := remainingBytes(r)
	s := newTextScanner(r, "mtx")
	h, err := readMMHeader(s)
	if err != nil {
		return 0, 0, nil, err
	}
	if !h.array {
		return 0, 0, nil, s.errorf(1, "sparse coordinate file; read it with ReadMatrixMarket")
	}
	if h.field == "pattern" {
		return 0, 0, nil, s.errorf(1, "a dense array cannot be a pattern")
	}
	// Values stored: all for general, a triangle otherwise.
	n := int64(h.rows) * int64(h.cols)
	switch h.symmetry {
	case "symmetric":
		n = int64(h.rows) * int64(h.rows+1) / 2
	case "skew-symmetric":
		n = int64(h.rows) * int64(h.rows-1) / 2
	}
	if h.symmetry != "general" && h.rows != h.cols {
		return 0, 0, nil, s.errorf(h.sizeLine, "%s matrix is %d×%d, not square", h.symmetry, h.rows, h.cols)
	}
	vals := make([]float64, 0, capEstimate(n, hint, 2))
	var f [2][]byte
	for int64(len(vals)) < n {
		line, no, ok := s.readLine()
		if !ok {
			return 0, 0, nil, s.eofError(no, fmt.Sprintf("file ends after %d of the %d values the header declares", len(vals), n))
		}
		nf := splitFields(line, f[:])
		if nf == 0 || f[0][0] == '%' {
			continue
		}
		if nf != 1 {
			return 0, 0, nil, s.errorf(no, "array line has %d fields, want 1", nf)
		}
		v, err := parseValue(f[0], h.field == "integer")
		if err != nil {
			return 0, 0, nil, s.errorf(no, "value %q: %v", f[0], err)
		}
		vals = append(vals, v)
	}
	if err := s.expectOnlyComments(n); err != nil {
		return 0, 0, nil, err
	}
	rows, cols = h.rows, h.cols
	if h.symmetry == "general" && (rows == 1 || cols == 1) {
		return rows, cols, vals, nil
	}
	if err := CheckMemory("ReadMatrixMarketArray", fmt.Sprintf("a dense %d×%d matrix", rows, cols), bytesOf(int64(rows)*int64(cols), 8), 0); err != nil {
		return 0, 0, nil, err
	}
	data = make([]float64, int(rows)*int(cols))
	k := 0
	for j := 0; j < cols; j++ {
		switch h.symmetry {
		case "general":
			for i := 0; i < rows; i++ {
				data[i*cols+j] = vals[k]
				k++
			}
		case "symmetric":
			for i := j; i < rows; i++ {
				data[i*cols+j], data[j*cols+i] = vals[k], vals[k]
				k++
			}
		case "skew-symmetric":
			for i := j + 1; i < rows; i++ {
				data[i*cols+j], data[j*cols+i] = vals[k], -vals[k]
				k++
			}
		}
	}
	return rows, cols, data, nil
}

// WriteMatrixMarket writes a in Matrix Market coordinate format, general
// symmetry, field real (pattern when a.Val is nil), entries in a's order.
// Values are written in the shortest form that reads back exactly.
func WriteMatrixMarket(w io.Writer, a *COO[float64]) error {
	if w == nil {
		return errNilIO("WriteMatrixMarket", "writer")
	}
	if a == nil {
		return errors.New("mesh: WriteMatrixMarket: nil matrix")
	}
	if a.Rows < 0 || a.Cols < 0 || a.Rows > math.MaxInt32 || a.Cols > math.MaxInt32 {
		return fmt.Errorf("mesh: WriteMatrixMarket: size %d×%d out of range", a.Rows, a.Cols)
	}
	if len(a.Col) != len(a.Row) || (a.Val != nil && len(a.Val) != len(a.Row)) {
		return fmt.Errorf("mesh: WriteMatrixMarket: len(Row) = %d, len(Col) = %d, len(Val) = %d differ", len(a.Row), len(a.Col), len(a.Val))
	}
	for k := range a.Row {
		if a.Row[k] < 0 || int(a.Row[k]) >= a.Rows || a.Col[k] < 0 || int(a.Col[k]) >= a.Cols {
			return fmt.Errorf("mesh: WriteMatrixMarket: entry %d (%d,%d) out of range for %d×%d", k, a.Row[k], a.Col[k], a.Rows, a.Cols)
		}
		if a.Val != nil && !isFinite(a.Val[k]) {
			return fmt.Errorf("mesh: WriteMatrixMarket: entry %d has value %v", k, a.Val[k])
		}
	}
	field := "real"
	if a.Val == nil {
		field = "pattern"
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "%%%%MatrixMarket matrix coordinate %s general\n%d %d %d\n", field, a.Rows, a.Cols, len(a.Row))
	var buf []byte
	for k := range a.Row {
		buf = strconv.AppendInt(buf[:0], int64(a.Row[k])+1, 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(a.Col[k])+1, 10)
		if a.Val != nil {
			buf = append(buf, ' ')
			buf = strconv.AppendFloat(buf, a.Val[k], 'g', -1, 64)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteMatrixMarketArray writes a dense rows×cols matrix, given row-major
// as ReadMatrixMarketArray returns it, in Matrix Market array format.
func WriteMatrixMarketArray(w io.Writer, rows, cols int, data []float64) error {
	if w == nil {
		return errNilIO("WriteMatrixMarketArray", "writer")
	}
	if rows < 0 || cols < 0 || rows > math.MaxInt32 || cols > math.MaxInt32 {
		return fmt.Errorf("mesh: WriteMatrixMarketArray: size %d×%d out of range", rows, cols)
	}
	if int64(len(data)) != int64(rows)*int64(cols) {
		return fmt.Errorf("mesh: WriteMatrixMarketArray: len(data) = %d, want %d×%d", len(data), rows, cols)
	}
	for k, v := range data {
		if !isFinite(v) {
			return fmt.Errorf("mesh: WriteMatrixMarketArray: data[%d] = %v", k, v)
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "%%%%MatrixMarket matrix array real general\n%d %d\n", rows, cols)
	var buf []byte
	for j := 0; j < cols; j++ {
		for i := 0; i < rows; i++ {
			buf = strconv.AppendFloat(buf[:0], data[i*cols+j], 'g', -1, 64)
			buf = append(buf, '\n')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

type mmHeader struct {
	array           bool
	field, symmetry string
	rows, cols      int
	nnz             int64
	sizeLine        int
}

func readMMHeader(s *textScanner) (mmHeader, error) {
	var h mmHeader
	line, no, ok := s.readLine()
	if !ok {
		return h, s.eofError(no, "file ends where the %%MatrixMarket header should be")
	}
	var f [6][]byte
	nf := splitFields(line, f[:])
	if nf < 1 || !bytes.EqualFold(f[0], []byte("%%MatrixMarket")) {
		return h, s.errorf(no, "missing %%%%MatrixMarket header")
	}
	if nf != 5 {
		return h, s.errorf(no, "header has %d words, want 5 (%%%%MatrixMarket matrix format field symmetry)", nf)
	}
	if !bytes.EqualFold(f[1], []byte("matrix")) {
		return h, s.errorf(no, "object %q is not supported, want matrix", f[1])
	}
	switch format := string(bytes.ToLower(f[2])); format {
	case "coordinate", "array":
		h.array = format == "array"
	default:
		return h, s.errorf(no, "format %q is not supported, want coordinate or array", f[2])
	}
	switch h.field = string(bytes.ToLower(f[3])); h.field {
	case "real", "double", "integer", "pattern":
	default:
		return h, s.errorf(no, "field %q is not supported, want real, integer or pattern", f[3])
	}
	switch h.symmetry = string(bytes.ToLower(f[4])); h.symmetry {
	case "general", "symmetric", "skew-symmetric":
	default:
		return h, s.errorf(no, "symmetry %q is not supported, want general, symmetric or skew-symmetric", f[4])
	}
	if h.field == "pattern" && h.symmetry == "skew-symmetric" {
		return h, s.errorf(no, "a pattern cannot be skew-symmetric")
	}
	for {
		line, no, ok = s.readLine()
		if !ok {
			return h, s.eofError(no, "file ends before the size line")
		}
		if nf = splitFields(line, f[:]); nf > 0 && f[0][0] != '%' {
			break
		}
	}
	h.sizeLine = no
	want := 3
	if h.array {
		want = 2
	}
	if nf != want {
		return h, s.errorf(no, "size line has %d fields, want %d", nf, want)
	}
	var dims [3]int64
	for k := 0; k < nf; k++ {
		v, ok := parseInt(f[k])
		if !ok || v < 0 {
			return h, s.errorf(no, "size %q is not a non-negative integer", f[k])
		}
		if k < 2 && v > math.MaxInt32 {
			return h, s.errorf(no, "dimension %d exceeds the int32 index range", v)
		}
		dims[k] = v
	}
	h.rows, h.cols, h.nnz = int(dims[0]), int(dims[1]), dims[2]
	return h, nil
}

// expectOnlyComments checks that nothing but blank lines and comments
// follows the declared entries.
func (s *textScanner) expectOnlyComments(declared int64) error {
	var f [1][]byte
	for {
		line, no, ok := s.readLine()
		if !ok {
			if s.err != nil {
				return s.eofError(no, "after the declared entries")
			}
			return nil
		}
		if nf := splitFields(line, f[:]); nf > 0 && f[0][0] != '%' {
			return s.errorf(no, "more entries than the %d the header declares", declared)
		}
	}
}

// parseIndex converts a 1-based index in [1, n] to a 0-based int32.
func parseIndex(b []byte, n int) (int32, error) {
	v, ok := parseInt(b)
	if !ok {
		return 0, errors.New("not an integer")
	}
	if v < 1 || v > int64(n) {
		return 0, fmt.Errorf("out of range [1,%d]", n)
	}
	return int32(v - 1), nil
}

func parseValue(b []byte, integer bool) (float64, error) {
	if integer {
		v, ok := parseInt(b)
		if !ok {
			return 0, errors.New("not an integer")
		}
		return float64(v), nil
	}
	return parseFloat(b)
}
