package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/misgrid/misgrid/mesh"
)

// createFile writes a file through a buffer with write, and reports the
// first error of writing, flushing or closing.
func createFile(path string, write func(w io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
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
