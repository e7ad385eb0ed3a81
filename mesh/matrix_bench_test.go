package mesh

import (
	"fmt"
	"testing"
)

func BenchmarkFromCSR(b *testing.B) {
	g := Hex27Graph(64, 64, 64)
	for _, bs := range []int{1, 3} {
		if bs == 3 {
			g = Hex27Graph(32, 32, 32)
		}
		a := stencilMatrix(g, bs)
		for _, theta := range []float64{0, 0.1} {
			b.Run(fmt.Sprintf("b=%d/theta=%v/nnz=%d", bs, theta, len(a.Col)), func(b *testing.B) {
				b.SetBytes(int64(len(a.Col)) * 12)
				for b.Loop() {
					if _, err := FromCSR(a, MatrixOptions{Theta: theta, BlockSize: bs}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// About 10⁸ nonzeros: the 27-point matrix of a 160³ grid.
func BenchmarkHugeFromCSR160(b *testing.B) {
	if testing.Short() {
		b.Skip("needs 3 GB")
	}
	a := stencilMatrix(Hex27Graph(160, 160, 160), 1)
	b.SetBytes(int64(len(a.Col)) * 12)
	b.ReportMetric(float64(len(a.Col))/1e6, "Mnnz")
	for b.Loop() {
		if _, err := FromCSR(a, MatrixOptions{Theta: 0.01}); err != nil {
			b.Fatal(err)
		}
	}
}
