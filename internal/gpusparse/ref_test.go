package gpusparse

import (
	"testing"

	"github.com/misgrid/misgrid/internal/gpusparse/sparsetest"
)

// hcsr is a host matrix of the references and the models.
type hcsr = sparsetest.CSR

func TestCorpusShapes(t *testing.T) {
	if sparsetest.RowLimit != RowLimit {
		t.Fatalf("sparsetest.RowLimit is %d, want %d", sparsetest.RowLimit, RowLimit)
	}
	for _, c := range sparsetest.Corpus(true) {
		for _, m := range []*hcsr{c.A, c.B} {
			if _, err := checkHost(m.Rows, m.Cols, m.Ptr, m.Col, m.Val); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
		}
	}
	// The long-row cases reach past the shared-memory limit.
	for _, c := range sparsetest.Corpus(true) {
		if c.Name == "dense row" || c.Name == "row at the shared limit" {
			ab := sparsetest.Mul(c.A, c.B, false)
			longest := 0
			for i := 0; i < ab.Rows; i++ {
				longest = max(longest, ab.Ptr[i+1]-ab.Ptr[i])
			}
			if longest <= RowLimit {
				t.Errorf("%s: longest product row %d, want > %d", c.Name, longest, RowLimit)
			}
		}
	}
}
