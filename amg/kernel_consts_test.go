package amg

import (
	"testing"

	"github.com/misgrid/misgrid/internal/kernels/kernelsrc"
)

// TestKernelConstants checks the constants amg shares with the kernel
// sources (block sizes, buffer bounds, mode numbers, the models' caps)
// against their #defines: a mismatch passes every CPU test and goes
// wrong only on a GPU.
func TestKernelConstants(t *testing.T) {
	def, err := kernelsrc.Defines("../internal/kernels")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		host int64
	}{
		{"AMG_THREADS", gpuThreads},
		{"SU_THREADS", gpuThreads},
		{"IN_THREADS", gpuThreads},
		{"AMG_PARTS", gpuParts},
		{"SU_SCAN_BLOCKS", scanBlocks},
		{"SU_MAX_BS", maxDevBS},
		{"SU_MAX_K", maxDevK},
		{"SU_NB_CAP", suNbCap},
		{"SU_NF_CAP", suNfCap},
		{"SU_AT_CAP", suAtCap},
		{"SU_AT_RUNS", suAtRuns},
		{"AMG_MV", int64(rowMV)},
		{"AMG_MVADD", int64(rowMVAdd)},
		{"AMG_RESID", int64(rowResid)},
		{"AMG_CHEB0", int64(rowCheb0)},
		{"AMG_CHEB", int64(rowCheb)},
		{"AMG_CHEBLAST", int64(rowChebLast)},
		{"AMG_V_CHEBZERO", int64(vecChebZero)},
		{"AMG_V_ADD", int64(vecAdd)},
		{"AMG_V_SCALE", int64(vecScale)},
		{"AMG_V_SCALEADD", int64(vecScaleAdd)},
		{"AMG_V_XPAY", int64(vecXpay)},
		{"AMG_V_COPY", int64(vecCopy)},
		{"IN_BAD_PTR", badPtr},
		{"IN_BAD_ENTRY", badEntry},
		{"IN_BAD_ORDER", badOrder},
		{"IN_BAD_DIAG", badDiag},
		{"IN_THETA_SAMPLE", thetaSample},
	} {
		got, ok := def[c.name]
		if !ok {
			t.Errorf("no #define %s in the kernel sources", c.name)
		} else if got != c.host {
			t.Errorf("%s is %d in the kernels, %d on the host", c.name, got, c.host)
		}
	}
}
