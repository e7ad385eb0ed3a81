package progress

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeClock lets tests step time instead of sleeping.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newTestReporter(buf *bytes.Buffer) (*Reporter, *fakeClock) {
	r := NewWriter(buf, "work")
	c := &fakeClock{t: time.Unix(1000, 0)}
	r.now = c.now
	return r, c
}

func TestUpdateRateLimited(t *testing.T) {
	var buf bytes.Buffer
	r, clk := newTestReporter(&buf)
	r.Update("step %d", 1)
	r.Update("step %d", 2) // same instant: dropped
	clk.t = clk.t.Add(r.Interval / 2)
	r.Update("step %d", 3) // still within the interval: dropped
	clk.t = clk.t.Add(r.Interval)
	r.Update("step %d", 4)
	got := buf.String()
	want := "\rwork: step 1\x1b[K\rwork: step 4\x1b[K"
	if got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}

func TestShowIgnoresRateLimit(t *testing.T) {
	var buf bytes.Buffer
	r, _ := newTestReporter(&buf)
	r.Update("a")
	r.Show("phase %s", "b")
	r.Update("c") // rate limited after Show too
	if want := "\rwork: a\x1b[K\rwork: phase b\x1b[K"; buf.String() != want {
		t.Fatalf("output %q, want %q", buf.String(), want)
	}
}

func TestDone(t *testing.T) {
	var buf bytes.Buffer
	r, _ := newTestReporter(&buf)
	r.Done("") // nothing on screen: nothing to clear
	if buf.Len() != 0 {
		t.Fatalf("Done with no status wrote %q", buf.String())
	}
	r.Update("half")
	r.Done("all %d", 10)
	if want := "\rwork: half\x1b[K\rwork: all 10\x1b[K\n"; buf.String() != want {
		t.Fatalf("output %q, want %q", buf.String(), want)
	}
	// After Done the next update is written at once, whatever the clock.
	r.Update("again")
	if !strings.HasSuffix(buf.String(), "\rwork: again\x1b[K") {
		t.Fatalf("update after Done was dropped: %q", buf.String())
	}
	buf.Reset()
	r.Done("")
	if buf.String() != "\r\x1b[K" {
		t.Fatalf("Done(\"\") wrote %q, want a cleared line", buf.String())
	}
}

func TestWrapClearsStatus(t *testing.T) {
	var term, out bytes.Buffer
	r, clk := newTestReporter(&term)
	w := r.Wrap(&out)
	io.WriteString(w, "no status yet\n")
	r.Update("busy")
	io.WriteString(w, "result 1\n")
	io.WriteString(w, "result 2\n")
	// Writes cleared the status, so the next update shows at once.
	clk.t = clk.t.Add(r.Interval / 10)
	r.Update("still busy")
	if want := "\rwork: busy\x1b[K\r\x1b[K\rwork: still busy\x1b[K"; term.String() != want {
		t.Errorf("terminal got %q, want %q", term.String(), want)
	}
	if out.String() != "no status yet\nresult 1\nresult 2\n" {
		t.Errorf("wrapped writer got %q", out.String())
	}
}

func TestNilReporter(t *testing.T) {
	var r *Reporter
	r.Update("x")
	r.Show("x")
	r.Done("y")
	var buf bytes.Buffer
	if w := r.Wrap(&buf); w != io.Writer(&buf) {
		t.Error("nil reporter's Wrap did not return its writer")
	}
	data := strings.Repeat("abc", 1000)
	cr := r.Reader(strings.NewReader(data), 0)
	out, err := io.ReadAll(cr)
	if err != nil || string(out) != data {
		t.Fatalf("nil reporter's reader changed the data (err %v)", err)
	}
	if cr.Count() != int64(len(data)) {
		t.Fatalf("Count = %d, want %d", cr.Count(), len(data))
	}
}

func TestReaderCountsAndReports(t *testing.T) {
	var buf bytes.Buffer
	r, _ := newTestReporter(&buf)
	data := bytes.Repeat([]byte{7}, 3<<20)
	cr := r.Reader(bytes.NewReader(data), int64(len(data)))
	var got bytes.Buffer
	// A small buffer forces many reads; the fake clock does not move, so
	// exactly one update is written.
	if _, err := io.CopyBuffer(struct{ io.Writer }{&got}, struct{ io.Reader }{cr}, make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), data) {
		t.Fatal("data changed through the reader")
	}
	if cr.Count() != int64(len(data)) {
		t.Fatalf("Count = %d, want %d", cr.Count(), len(data))
	}
	if n := strings.Count(buf.String(), "\r"); n != 1 {
		t.Fatalf("%d updates written, want 1 (rate limit): %q", n, buf.String())
	}
	if !strings.Contains(buf.String(), "4.0 KiB of 3.0 MiB (0%)") {
		t.Fatalf("first update %q does not show bytes and share", buf.String())
	}
}

func TestIsTerminalFalseForFilesAndPipes(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a regular file is reported as a terminal")
	}
	if New(f, "x") != nil {
		t.Error("New on a regular file returned a reporter")
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	if IsTerminal(pw) {
		t.Error("a pipe is reported as a terminal")
	}
	if IsTerminal(nil) {
		t.Error("nil file is reported as a terminal")
	}
}

func TestIsTerminalTrueForCharDevice(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no null device:", err)
	}
	defer f.Close()
	if !IsTerminal(f) {
		t.Errorf("%s (a character device) is not reported as one", os.DevNull)
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{5 << 20, "5.0 MiB"}, {3 << 30, "3.0 GiB"}, {1 << 62, "4.0 EiB"},
	} {
		if got := Bytes(c.n); got != c.want {
			t.Errorf("Bytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
