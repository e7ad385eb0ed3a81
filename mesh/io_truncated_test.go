package mesh

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A symmetric file may store the upper triangle instead of the lower: it
// reads as the same matrix. Only a file with both is refused (see
// mtxMalformed).
func TestMatrixMarketSymmetricUpperTriangle(t *testing.T) {
	const head = "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n"
	lower, err := ReadMatrixMarket(strings.NewReader(head + "1 1 2\n2 1 -1\n3 2 -1\n3 3 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	upper, err := ReadMatrixMarket(strings.NewReader(head + "1 1 2\n1 2 -1\n2 3 -1\n3 3 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	gl, err := FromCOO(lower, MatrixOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gu, err := FromCOO(upper, MatrixOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gl.Adj, gu.Adj) || len(lower.Row) != 6 || len(upper.Row) != 6 {
		t.Errorf("upper triangle reads as %v (%d entries), lower as %v (%d)", gu.Adj, len(upper.Row), gl.Adj, len(lower.Row))
	}
}

// gzipBytes compresses data as one gzip member.
func gzipBytes(data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

// A truncated .gz says that it is truncated or corrupt, wherever the cut
// falls, and never that the file is empty or that a tag repeats.
func TestReadFileTruncatedGzip(t *testing.T) {
	mtx, err := os.ReadFile(filepath.Join("testdata", "real_symmetric.mtx"))
	if err != nil {
		t.Fatal(err)
	}
	msh := gmshText(StructuredHex(4, 3, 3))
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data []byte
	}{{"a.mtx.gz", mtx}, {"a.msh.gz", msh}, {"a.egr.gz", le32(3, 4, 0, 1, 3, 4, 1, 0, 2, 1)}} {
		path := filepath.Join(dir, c.name)
		full := gzipBytes(c.data)
		for _, cut := range []int{12, len(full) / 2, len(full) - 5} {
			if err := os.WriteFile(path, full[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := ReadFile(path)
			if err == nil {
				t.Errorf("%s cut at %d of %d bytes: no error", c.name, cut, len(full))
				continue
			}
			msg := err.Error()
			if !strings.Contains(msg, "gzip") || strings.Contains(msg, "empty") || strings.Contains(msg, "twice") {
				t.Errorf("%s cut at %d of %d bytes: %v", c.name, cut, len(full), err)
			}
		}
	}
}

// A plain file cut in the middle of a token that still parses (tag "10"
// cut to "1") says where it is probably truncated.
func TestReadGmshTruncatedMidToken(t *testing.T) {
	data := gmshText(StructuredHex(3, 3, 3))
	at := bytes.Index(data, []byte("\n10\n"))
	if at < 0 {
		t.Fatal("no node tag 10 in the test mesh")
	}
	line := bytes.Count(data[:at+1], []byte("\n")) + 1
	_, err := ReadGmsh(bytes.NewReader(data[:at+2]))
	want := []string{"probably truncated at line " + strconv.Itoa(line), "defined twice"}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("got %v, want an error containing %q", err, w)
		}
	}
}
