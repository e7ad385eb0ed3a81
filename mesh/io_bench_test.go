package mesh

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// hexMatrix returns the pattern of the 27-point hex graph on n³ vertices,
// diagonal included, with values: about 27·n³ entries.
func hexMatrix(n int) *COO[float64] {
	g := Hex27Graph(n, n, n)
	a := &COO[float64]{Rows: g.N(), Cols: g.N()}
	for v := int32(0); int(v) < g.N(); v++ {
		a.Row, a.Col, a.Val = append(a.Row, v), append(a.Col, v), append(a.Val, 26)
		for _, u := range g.Neighbors(v) {
			a.Row, a.Col, a.Val = append(a.Row, v), append(a.Col, u), append(a.Val, -1.0/3)
		}
	}
	return a
}

// BenchmarkReadMatrixMarket reads a 4.2M-entry matrix (54³ hex27
// pattern): from a file, whose size lets the reader allocate once, and
// as a stream, whose size it cannot see.
func BenchmarkReadMatrixMarket(b *testing.B) {
	a := hexMatrix(54)
	path := filepath.Join(b.TempDir(), "hex.mtx")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := WriteMatrixMarket(f, a); err != nil {
		b.Fatal(err)
	}
	f.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("file", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := ReadMatrixMarket(f); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	b.Run("stream", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := ReadMatrixMarket(struct{ io.Reader }{bytes.NewReader(data)}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// gmshText writes m as MSH 4.1 ASCII in one entity block per element
// block, node tags 1..n.
func gmshText(m *Mesh) []byte {
	var b bytes.Buffer
	n := m.NumNodes()
	fmt.Fprintf(&b, "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 %d 1 %d\n3 1 0 %d\n", n, n, n)
	for v := 1; v <= n; v++ {
		fmt.Fprintln(&b, v)
	}
	for v := 0; v < n; v++ {
		x := m.Coords[v*m.Dim : v*m.Dim+m.Dim]
		fmt.Fprintf(&b, "%.17g %.17g %.17g\n", x[0], x[1], x[2])
	}
	gmshNum := map[ElementType]int{}
	for num, t := range gmshTypes {
		gmshNum[t] = int(num)
	}
	total := 0
	for _, blk := range m.Blocks {
		total += blk.Len()
	}
	fmt.Fprintf(&b, "$EndNodes\n$Elements\n%d %d 1 %d\n", len(m.Blocks), total, total)
	tag := 1
	for i, blk := range m.Blocks {
		fmt.Fprintf(&b, "%d %d %d %d\n", blk.Type.Dim(), i+1, gmshNum[blk.Type], blk.Len())
		k := blk.Type.Nodes()
		for e := 0; e < blk.Len(); e++ {
			fmt.Fprint(&b, tag)
			tag++
			for _, v := range blk.Conn[e*k : e*k+k] {
				fmt.Fprint(&b, " ", v+1)
			}
			b.WriteByte('\n')
		}
	}
	b.WriteString("$EndElements\n")
	return b.Bytes()
}

// BenchmarkReadGmsh reads a 64³-element hex8 mesh (275k nodes).
func BenchmarkReadGmsh(b *testing.B) {
	data := gmshText(StructuredHex(64, 64, 64))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ReadGmsh(struct{ io.Reader }{bytes.NewReader(data)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadEGR(b *testing.B) {
	g := Hex27Graph(64, 64, 64)
	var buf bytes.Buffer
	if err := WriteEGR(&buf, g); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ReadEGR(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteVTU(b *testing.B) {
	g := Hex27Graph(64, 64, 64)
	f := ClassField("class", g.Class)
	var buf bytes.Buffer
	if err := WriteVTU(&buf, g, f); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if err := WriteVTU(io.Discard, g, f); err != nil {
			b.Fatal(err)
		}
	}
}
