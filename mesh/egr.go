package mesh

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// ReadEGR reads a graph in the binary ECL graph format (.egr): int32 node
// count, int32 edge count, int32 nindex[nodes+1], int32 nlist[edges], all
// little-endian, with no other header and nothing after.
//
// ECL graphs are symmetric with sorted rows and no self loops, and such a
// file is used as it is. A file that breaks those rules but is otherwise
// well formed is repaired rather than refused: self loops and repeated
// entries are dropped, rows are sorted, and every edge gets its reverse.
func ReadEGR(r io.Reader) (*Graph, error) {
	if r == nil {
		return nil, errNilIO("ReadEGR", "reader")
	}
	hint := remainingBytes(r)
	br := bufio.NewReaderSize(r, 64<<10)
	var hdr [8]byte
	if n, err := io.ReadFull(br, hdr[:]); err != nil {
		return nil, egrError(int64(n), "file ends in the 8-byte header", eofErr(err))
	}
	nodes := int32(binary.LittleEndian.Uint32(hdr[0:]))
	edges := int32(binary.LittleEndian.Uint32(hdr[4:]))
	if nodes < 0 {
		return nil, egrError(0, fmt.Sprintf("negative node count %d", nodes), nil)
	}
	if edges < 0 {
		return nil, egrError(4, fmt.Sprintf("negative edge count %d", edges), nil)
	}
	need := 4 * (int64(nodes) + 1 + int64(edges))
	if hint >= 0 && hint-8 != need {
		return nil, egrError(8, fmt.Sprintf("header declares %d nodes and %d edges, %d bytes of arrays, but %d bytes follow", nodes, edges, need, hint-8), nil)
	}
	// Reading takes the int32 arrays, int64 offsets and, for an nlist
	// that comes in pieces, one copy of it.
	what := fmt.Sprintf("a graph of %d vertices and %d directed edges", nodes, edges)
	if err := CheckMemory("ReadEGR", what, bytesOf(int64(nodes)+1, 12, int64(edges), 8), 0); err != nil {
		return nil, err
	}
	nindex, err := readInt32s(br, int(nodes)+1, 8, hint >= 0)
	if err != nil {
		return nil, err
	}
	base := int64(8 + 4*(int64(nodes)+1)) // offset of nlist
	g := &Graph{Offsets: make([]int64, nodes+1)}
	prev := int32(0)
	for v, o := range chunked(nindex) {
		switch {
		case v == 0 && o != 0:
			return nil, egrError(8, fmt.Sprintf("nindex[0] = %d, want 0", o), nil)
		case o < prev:
			return nil, egrError(8+4*int64(v), fmt.Sprintf("nindex[%d] = %d < nindex[%d] = %d", v, o, v-1, prev), nil)
		}
		g.Offsets[v] = int64(o)
		prev = o
	}
	nindex = nil
	if prev != edges {
		return nil, egrError(8+4*int64(nodes), fmt.Sprintf("nindex[%d] = %d, but the header declares %d edges", nodes, prev, edges), nil)
	}
	nlist, err := readInt32s(br, int(edges), base, hint >= 0)
	if err != nil {
		return nil, err
	}
	g.Adj = joinChunks(nlist, int(edges))
	for k, u := range g.Adj {
		if u < 0 || u >= nodes {
			return nil, egrError(base+4*int64(k), fmt.Sprintf("nlist[%d] = %d out of range [0,%d)", k, u, nodes), nil)
		}
	}
	if _, err := br.ReadByte(); err == nil {
		return nil, egrError(base+4*int64(edges), "data after the end of nlist", nil)
	} else if err != io.EOF {
		return nil, egrError(base+4*int64(edges), "read error", err)
	}
	if g.Validate() == nil {
		return g, nil
	}
	// Repair: add every entry both ways and let the builder sort, drop
	// self loops and deduplicate.
	if err := CheckMemory("ReadEGR", "repairing "+what, bytesOf(int64(edges), 32, int64(nodes)+1, 24), 0); err != nil {
		return nil, err
	}
	src := make([]int32, 0, 2*len(g.Adj))
	dst := make([]int32, 0, 2*len(g.Adj))
	for v := int32(0); v < nodes; v++ {
		for _, u := range g.Neighbors(v) {
			if u != v {
				src = append(src, v, u)
				dst = append(dst, u, v)
			}
		}
	}
	return csrFromDirected(int(nodes), src, dst), nil
}

// readInt32s reads n little-endian int32 values starting at byte offset
// off, in chunks. Unless the input size has been checked (sized), chunks
// start small and double, each only as large as what was read before it,
// so a lying count cannot force a large allocation, and the values are
// never copied to grow a slice.
func readInt32s(br *bufio.Reader, n int, off int64, sized bool) ([][]int32, error) {
	const step = 1 << 14
	var out [][]int32
	size, got := n, 0
	if !sized {
		size = step
	}
	var buf [4 * step]byte
	for got < n {
		c := make([]int32, 0, min(n-got, size))
		for len(c) < cap(c) {
			m := min(cap(c)-len(c), step)
			k, err := io.ReadFull(br, buf[:4*m])
			if err != nil {
				at := off + 4*int64(got+len(c)) + int64(k)
				return nil, egrError(at, fmt.Sprintf("file ends after %d of %d values", got+len(c)+k/4, n), eofErr(err))
			}
			for i := 0; i < m; i++ {
				c = append(c, int32(binary.LittleEndian.Uint32(buf[4*i:])))
			}
		}
		out = append(out, c)
		got += len(c)
		size = max(size, got)
	}
	return out, nil
}

// chunked ranges over the values of chunks with their overall index.
func chunked(chunks [][]int32) func(yield func(int, int32) bool) {
	return func(yield func(int, int32) bool) {
		i := 0
		for _, c := range chunks {
			for _, x := range c {
				if !yield(i, x) {
					return
				}
				i++
			}
		}
	}
}

// joinChunks returns the n values of chunks as one slice.
func joinChunks(chunks [][]int32, n int) []int32 {
	if len(chunks) == 1 {
		return chunks[0]
	}
	out := make([]int32, 0, n)
	for i, c := range chunks {
		out = append(out, c...)
		chunks[i] = nil
	}
	return out
}

// WriteEGR writes g in the binary ECL graph format. It fails when g has
// more than 2³¹−1 directed edges, which the format's int32 offsets cannot
// address.
func WriteEGR(w io.Writer, g *Graph) error {
	if w == nil {
		return errNilIO("WriteEGR", "writer")
	}
	if err := g.ValidateStructure(); err != nil {
		return fmt.Errorf("mesh: WriteEGR: %w", err)
	}
	n, m := g.N(), g.NumEdges()
	if m > math.MaxInt32 {
		return fmt.Errorf("mesh: WriteEGR: %d directed edges exceed the format's int32 offsets", m)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	// Write errors stay in bw, which keeps the first for Flush.
	c := &leWriter{w: bw, buf: make([]byte, 0, 64<<10)}
	c.i32(int32(n))
	c.i32(int32(m))
	c.i32(0)
	for v := 1; v <= n; v++ {
		c.i32(int32(g.Offsets[v]))
	}
	for _, u := range g.Adj {
		c.i32(u)
	}
	c.flush()
	return bw.Flush()
}

func egrError(off int64, msg string, err error) error {
	return &ParseError{Format: "egr", Offset: off, Msg: msg, Err: err}
}

func eofErr(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
