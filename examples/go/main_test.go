package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestRun checks what the example claims: the corners are kept, and the
// levels shrink down to the hierarchy's target size.
func TestRun(t *testing.T) {
	for _, n := range []int{5, 12} {
		var buf bytes.Buffer
		if err := run(&buf, n); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if !strings.Contains(out, fmt.Sprintf("graph: %d vertices", n*n*n)) {
			t.Errorf("n=%d: no graph line:\n%s", n, out)
		}
		if !strings.Contains(out, "corners kept 8 of 8") {
			t.Errorf("n=%d: corners not all kept:\n%s", n, out)
		}
		prev := n*n*n + 1
		levels := 0
		for _, line := range strings.Split(out, "\n") {
			var l, nv, ns int
			if _, err := fmt.Sscanf(line, "level %d: %d vertices, %d in the MIS-2", &l, &nv, &ns); err != nil {
				continue
			}
			if l != levels || nv >= prev || ns < 1 || ns > nv {
				t.Errorf("n=%d: level line %q does not continue a shrinking hierarchy", n, line)
			}
			prev = nv
			levels++
		}
		if levels == 0 || prev > 64 && levels < 20 {
			t.Errorf("n=%d: %d levels, coarsest %d vertices: hierarchy stopped early:\n%s", n, levels, prev, out)
		}
	}
}

func TestRunRefusesSizes(t *testing.T) {
	for _, n := range []int{1, maxN + 1, 1 << 20} {
		if err := run(new(bytes.Buffer), n); err == nil || !strings.Contains(err.Error(), "want 2 to") {
			t.Errorf("run(%d): error %v, want a refusal", n, err)
		}
	}
}
