package mesh

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

type malformedCase struct {
	name, in string
	want     []string
}

const mtxHeader = "%%MatrixMarket matrix coordinate real general\n"

// Each malformed input must give an error that says where: the want
// strings hold the line (or byte offset) and a word of the reason.
// mtxMalformed and gmshMalformed also seed the fuzzers.
var mtxMalformed = []malformedCase{
	{"empty", "", []string{"line 1", "file ends where the %%MatrixMarket header"}},
	{"no header", "3 3 1\n1 1 1\n", []string{"line 1", "missing %%MatrixMarket"}},
	{"short header", "%%MatrixMarket matrix coordinate real\n", []string{"line 1", "want 5"}},
	{"object", "%%MatrixMarket vector coordinate real general\n", []string{"line 1", "object"}},
	{"format", "%%MatrixMarket matrix sparse real general\n", []string{"line 1", "format"}},
	{"complex", "%%MatrixMarket matrix coordinate complex general\n", []string{"line 1", "complex"}},
	{"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n", []string{"line 1", "hermitian"}},
	{"skew pattern", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n", []string{"line 1", "skew"}},
	{"array file", "%%MatrixMarket matrix array real general\n1 1\n1\n", []string{"line 1", "ReadMatrixMarketArray"}},
	{"no size line", mtxHeader + "% only a comment\n", []string{"line 2", "before the size line"}},
	{"size fields", mtxHeader + "3 3\n", []string{"line 2", "size line has 2 fields"}},
	{"negative size", mtxHeader + "-3 3 1\n", []string{"line 2", "non-negative"}},
	{"negative nnz", mtxHeader + "3 3 -1\n", []string{"line 2", "non-negative"}},
	{"huge dimension", mtxHeader + "3000000000 3 1\n", []string{"line 2", "int32"}},
	{"size junk", mtxHeader + "3 x 1\n", []string{"line 2", `"x"`}},
	{"truncated", mtxHeader + "3 3 3\n1 1 1\n2 2 1\n", []string{"line 4", "2 of the 3 entries"}},
	{"truncated mid-line", mtxHeader + "3 3 2\n1 1 1\n2 2", []string{"line 4", "2 fields, want 3"}},
	{"too many entries", mtxHeader + "3 3 1\n1 1 1\n2 2 1\n", []string{"line 4", "more entries"}},
	{"row out of range", mtxHeader + "3 3 1\n4 1 1\n", []string{"line 3", "row index", "[1,3]"}},
	{"column zero", mtxHeader + "3 3 1\n1 0 1\n", []string{"line 3", "column index", "out of range"}},
	{"index overflow", mtxHeader + "3 3 1\n99999999999999999999 1 1\n", []string{"line 3", "not an integer"}},
	{"NaN", mtxHeader + "3 3 1\n1 1 NaN\n", []string{"line 3", "not finite"}},
	{"Inf", mtxHeader + "3 3 1\n1 1 -inf\n", []string{"line 3", "not finite"}},
	{"bad value", mtxHeader + "3 3 1\n1 1 1.5.5\n", []string{"line 3", "not a number"}},
	{"extra field", mtxHeader + "3 3 1\n1 1 1 1\n", []string{"line 3", "4 fields, want 3"}},
	{"pattern with value", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n", []string{"line 3", "want 2"}},
	{"integer field", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n", []string{"line 3", "not an integer"}},
	{"symmetric not square", "%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n", []string{"line 2", "not square"}},
	{"skew diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n", []string{"line 3", "diagonal"}},
	{"symmetric both triangles", "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 2\n2 1 -1\n1 2 -1\n3 3 2\n",
		[]string{"line 5", "(2,1) below the diagonal on line 4", "(1,2) above it on line 5", "count twice"}},
	{"skew both triangles", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n1 3 1\n% comment\n3 2 1\n",
		[]string{"line 5", "(3,2) below the diagonal on line 5", "(1,3) above it on line 3"}},
}

func TestReadMatrixMarketMalformed(t *testing.T) {
	for _, tt := range mtxMalformed {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ReadMatrixMarket(strings.NewReader(tt.in))
			checkParseError(t, a, err, tt.want)
		})
	}
}

func TestReadMatrixMarketArrayMalformed(t *testing.T) {
	const hdr = "%%MatrixMarket matrix array real general\n"
	tests := []struct {
		name, in string
		want     []string
	}{
		{"coordinate file", "%%MatrixMarket matrix coordinate real general\n1 1 0\n", []string{"line 1", "ReadMatrixMarket"}},
		{"pattern", "%%MatrixMarket matrix array pattern general\n1 1\n", []string{"line 1", "pattern"}},
		{"size fields", hdr + "2 2 4\n", []string{"line 2", "want 2"}},
		{"truncated", hdr + "2 2\n1\n2\n3\n", []string{"line 5", "3 of the 4 values"}},
		{"too many", hdr + "1 2\n1\n2\n3\n", []string{"line 5", "more entries"}},
		{"two per line", hdr + "1 2\n1 2\n", []string{"line 3", "2 fields"}},
		{"NaN", hdr + "1 2\n1\nnan\n", []string{"line 4", "not finite"}},
		{"symmetric not square", "%%MatrixMarket matrix array real symmetric\n2 3\n", []string{"line 2", "not square"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := ReadMatrixMarketArray(strings.NewReader(tt.in))
			checkParseError(t, nil, err, tt.want)
		})
	}
}

const (
	gmshFormat = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n"
	gmshNodes  = "$Nodes\n1 3 1 3\n2 1 0 3\n1\n2\n3\n0 0 0\n1 0 0\n0 1 0\n$EndNodes\n"
)

var gmshMalformed = []malformedCase{
	{"empty", "", []string{"line 1", "no $MeshFormat"}},
	{"not gmsh", "solid cube\n", []string{"line 1", "want $MeshFormat"}},
	{"version 2.2", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n", []string{"line 2", "version"}},
	{"binary", "$MeshFormat\n4.1 1 8\n$EndMeshFormat\n", []string{"line 2", "binary"}},
	{"format not closed", "$MeshFormat\n4.1 0 8\n$Nodes\n", []string{"line 3", "$EndMeshFormat"}},
	{"junk between sections", gmshFormat + "hello\n", []string{"line 4", "between sections"}},
	{"stray end marker", gmshFormat + "$EndNodes\n", []string{"line 4", "between sections"}},
	{"twice", gmshFormat + gmshNodes + gmshNodes, []string{"line 14", "second $Nodes"}},
	{"no nodes", gmshFormat, []string{"no $Nodes"}},
	{"no elements", gmshFormat + gmshNodes, []string{"no $Elements"}},
	{"elements first", gmshFormat + "$Elements\n0 0 0 0\n$EndElements\n", []string{"line 4", "before $Nodes"}},
	{"unknown section open", gmshFormat + "$NodeData\n1\n2\n", []string{"line 6", "$NodeData opened on line 4 never ends"}},
	{"names unquoted", gmshFormat + "$PhysicalNames\n1\n2 1 domain\n$EndPhysicalNames\n", []string{"line 6", "double quotes"}},
	{"names unclosed", gmshFormat + "$PhysicalNames\n1\n2 1 \"my domain\n$EndPhysicalNames\n", []string{"line 6", "closing quote"}},
	{"names count", gmshFormat + "$PhysicalNames\n2\n2 1 \"a\"\n$EndPhysicalNames\n", []string{"line 7", "physical dimension"}},
	{"entities negative", gmshFormat + "$Entities\n0 -1 0 0\n$EndEntities\n", []string{"line 5", "out of range"}},
	{"entities truncated", gmshFormat + "$Entities\n1 0 0 0\n1 0 0\n", []string{"line 6", "file ends"}},
	{"nodes negative", gmshFormat + "$Nodes\n1 -3 1 3\n", []string{"line 5", "number of nodes -3"}},
	{"nodes count lie", gmshFormat + "$Nodes\n1 4 1 4\n2 1 0 3\n1\n2\n3\n0 0 0\n1 0 0\n0 1 0\n$EndNodes\n", []string{"line 13", "hold 3 nodes, header says 4"}},
	{"node block too big", gmshFormat + "$Nodes\n1 2 1 3\n2 1 0 3\n", []string{"line 6", "number of nodes in block 3 out of range [0,2]"}},
	{"node tag duplicate", gmshFormat + "$Nodes\n1 3 1 3\n2 1 0 3\n1\n2\n1\n", []string{"line 9", "node tag 1 defined twice"}},
	{"node tag beyond max", gmshFormat + "$Nodes\n1 3 1 3\n2 1 0 3\n1\n2\n7\n", []string{"line 9", "node tag 7 out of range [1,3]"}},
	{"node NaN", gmshFormat + "$Nodes\n1 1 1 1\n2 1 0 1\n1\n0 nan 0\n", []string{"line 8", "not finite"}},
	{"node truncated", gmshFormat + "$Nodes\n1 2 1 2\n2 1 0 2\n1\n2\n0 0 0\n1 0", []string{"line 10", "file ends"}},
	{"parametric flag", gmshFormat + "$Nodes\n1 1 1 1\n2 1 2 1\n", []string{"line 6", "parametric flag 2"}},
	{"element unknown node", gmshFormat + gmshNodes + "$Elements\n1 1 1 1\n2 1 2 1\n1 1 2 4\n$EndElements\n", []string{"line 17", "node tag 4 is not in $Nodes"}},
	{"element dim mismatch", gmshFormat + gmshNodes + "$Elements\n1 1 1 1\n3 1 2 1\n1 1 2 3\n$EndElements\n", []string{"line 16", "dimension 3"}},
	{"element count lie", gmshFormat + gmshNodes + "$Elements\n1 2 1 2\n2 1 2 1\n1 1 2 3\n$EndElements\n", []string{"line 18", "hold 1 elements, header says 2"}},
	{"element truncated", gmshFormat + gmshNodes + "$Elements\n1 1 1 1\n2 1 2 1\n1 1 2", []string{"line 17", "file ends"}},
	{"unknown type short", gmshFormat + gmshNodes + "$Elements\n1 2 1 2\n2 1 16 2\n1 1 2 3 1 2 3 1 2\n$EndElements\n", []string{"line 18", "after 1 of 2 elements"}},
	{"only lines", gmshFormat + gmshNodes + "$Elements\n1 1 1 1\n1 1 1 1\n1 1 2\n$EndElements\n", []string{"line 18", "no 2D or 3D"}},
	{"end marker wrong", gmshFormat + gmshNodes + "$Elements\n0 0 0 0\n$EndNodes\n", []string{"line 16", "$EndElements"}},
}

func TestReadGmshMalformed(t *testing.T) {
	for _, tt := range gmshMalformed {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ReadGmsh(strings.NewReader(tt.in))
			if m != nil {
				t.Errorf("returned a mesh beside the error")
			}
			checkParseError(t, nil, err, tt.want)
		})
	}
}

func le32(vals ...int32) []byte {
	b := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

func TestReadEGRMalformed(t *testing.T) {
	tests := []struct {
		name   string
		in     []byte
		stream bool // hide the size, as a pipe would
		want   []string
	}{
		{"empty", nil, false, []string{"byte offset 0", "header"}},
		{"short header", []byte{1, 0, 0, 0, 2}, false, []string{"byte offset 5", "header"}},
		{"negative nodes", le32(-1, 0, 0), false, []string{"byte offset 0", "negative node count"}},
		{"negative edges", le32(1, -5, 0, 0), false, []string{"byte offset 4", "negative edge count"}},
		{"size lie", le32(2, 2, 0, 1, 2, 1), false, []string{"byte offset 8", "20 bytes of arrays, but 16"}},
		{"size lie stream", le32(2, 2, 0, 1, 2, 1), true, []string{"byte offset 24", "1 of 2 values"}},
		// Below the size at which the memory guard looks at the machine.
		{"large header stream", le32(2_000_000, 2_000_000, 0), true, []string{"byte offset 12", "1 of 2000001 values"}},
		{"trailing data", append(le32(1, 0, 0, 0), 7), false, []string{"byte offset 8", "but 9 bytes follow"}},
		{"trailing data stream", append(le32(1, 0, 0, 0), 7), true, []string{"byte offset 16", "after the end"}},
		{"nindex start", le32(1, 1, 1, 1, 0), false, []string{"byte offset 8", "nindex[0] = 1"}},
		{"nindex decreasing", le32(3, 2, 0, 2, 1, 2, 1, 0), false, []string{"byte offset 16", "nindex[2] = 1 < nindex[1] = 2"}},
		{"nindex end", le32(2, 2, 0, 1, 1, 1, 0), false, []string{"byte offset 16", "nindex[2] = 1"}},
		{"nlist range", le32(2, 2, 0, 1, 2, 1, 2), false, []string{"byte offset 24", "nlist[1] = 2 out of range"}},
		{"nlist negative", le32(2, 2, 0, 1, 2, -1, 0), false, []string{"byte offset 20", "nlist[0] = -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r io.Reader = bytes.NewReader(tt.in)
			if tt.stream {
				r = struct{ io.Reader }{r}
			}
			g, err := ReadEGR(r)
			if g != nil {
				t.Errorf("returned a graph beside the error")
			}
			checkParseError(t, nil, err, tt.want)
		})
	}
}

func checkParseError(t *testing.T, a *COO[float64], err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error (result %+v), want one containing %q", a, want)
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Errorf("error %T is not a *ParseError", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

// A header that promises billions of items must not make the reader
// allocate for them before the data arrives. Each input here is a few
// bytes long and read as a stream, whose size the reader cannot know.
func TestLyingHeadersAllocateLittle(t *testing.T) {
	inputs := map[string]func(io.Reader) error{
		"%%MatrixMarket matrix coordinate real symmetric\n2000000000 2000000000 4000000000000000000\n1 1 1\n": func(r io.Reader) error {
			_, err := ReadMatrixMarket(r)
			return err
		},
		"%%MatrixMarket matrix array real general\n2000000000 2000000000\n1\n": func(r io.Reader) error {
			_, _, _, err := ReadMatrixMarketArray(r)
			return err
		},
		"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 2000000000 1 9000000000000000000\n2 1 0 2000000000\n1\n": func(r io.Reader) error {
			_, err := ReadGmsh(r)
			return err
		},
		"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 1 1 1\n2 1 0 1\n1\n0 0 0\n$EndNodes\n$Elements\n1 1000000000000 1 1\n3 1 12 1000000000000\n1 1\n": func(r io.Reader) error {
			_, err := ReadGmsh(r)
			return err
		},
		string(le32(2_000_000_000, 2_000_000_000, 0)): func(r io.Reader) error {
			_, err := ReadEGR(r)
			return err
		},
	}
	for in, read := range inputs {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := read(struct{ io.Reader }{strings.NewReader(in)})
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%.40q: no error", in)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
			t.Errorf("%.40q: allocated %d MiB before failing", in, got>>20)
		}
	}
}
