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
	for _, m := range kernelsrc.Mismatches(def, map[string]int64{
		"AMG_THREADS":     int64(gpuThreads),
		"SU_THREADS":      int64(gpuThreads),
		"IN_THREADS":      int64(gpuThreads),
		"AMG_PARTS":       int64(gpuParts),
		"SU_SCAN_BLOCKS":  int64(scanBlocks),
		"SU_MAX_BS":       int64(maxDevBS),
		"SU_MAX_K":        int64(maxDevK),
		"SU_NB_CAP":       int64(suNbCap),
		"SU_NF_CAP":       int64(suNfCap),
		"SU_AT_CAP":       int64(suAtCap),
		"SU_AT_RUNS":      int64(suAtRuns),
		"AMG_MV":          int64(rowMV),
		"AMG_MVADD":       int64(rowMVAdd),
		"AMG_RESID":       int64(rowResid),
		"AMG_CHEB0":       int64(rowCheb0),
		"AMG_CHEB":        int64(rowCheb),
		"AMG_CHEBLAST":    int64(rowChebLast),
		"AMG_V_CHEBZERO":  int64(vecChebZero),
		"AMG_V_ADD":       int64(vecAdd),
		"AMG_V_SCALE":     int64(vecScale),
		"AMG_V_SCALEADD":  int64(vecScaleAdd),
		"AMG_V_XPAY":      int64(vecXpay),
		"AMG_V_COPY":      int64(vecCopy),
		"IN_BAD_PTR":      int64(badPtr),
		"IN_BAD_ENTRY":    int64(badEntry),
		"IN_BAD_ORDER":    int64(badOrder),
		"IN_BAD_DIAG":     int64(badDiag),
		"IN_THETA_SAMPLE": int64(thetaSample),
	}) {
		t.Error(m)
	}
}
