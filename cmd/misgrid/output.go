package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/misgrid/misgrid/internal/atomicfile"
	"github.com/misgrid/misgrid/mesh"
)

// createFile writes a file through a buffer with write, atomically: on
// any failure the previous file at path is left as it was.
func createFile(path string, write func(w io.Writer) error) error {
	return atomicfile.Write(path, write)
}

// writeVTUFile writes the cells of m when there is a mesh, and the graph
// itself (vertices and edges as cells) otherwise.
func writeVTUFile(path string, g *mesh.Graph, m *mesh.Mesh, fields []mesh.Field) error {
	if m == nil && g.Coords == nil {
		return fmt.Errorf("%s: the graph has no coordinates to draw (it came from a matrix or an .egr file): write .egr or .txt instead", path)
	}
	return createFile(path, func(w io.Writer) error {
		if m != nil {
			return mesh.WriteMeshVTU(w, m, fields...)
		}
		return mesh.WriteVTU(w, g, fields...)
	})
}

// writeList writes the members of a set, one vertex id a line.
func writeList(w io.Writer, in []bool) error {
	bw := bufio.NewWriter(w)
	var buf []byte
	for v, ok := range in {
		if ok {
			buf = strconv.AppendInt(buf[:0], int64(v), 10)
			buf = append(buf, '\n')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// writeJSON writes v as indented JSON, the -json form of the benchmarks.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
