package misgpu_test

import (
	"math/bits"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/internal/kernels/kernelsrc"
	"github.com/misgrid/misgrid/internal/misgpu"
)

// TestKernelConstants checks the constants the host shares with the
// kernel sources against their #defines: a mismatch would pass every
// CPU test and go wrong only on a GPU.
func TestKernelConstants(t *testing.T) {
	def, err := kernelsrc.Defines("../kernels")
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := kernelsrc.Sources("../kernels")
	if err != nil {
		t.Fatal(err)
	}
	mailbox := regexp.MustCompile(`(?m)^#define PART_MAILBOX \(1ull << 63\)$`)
	for _, src := range srcs {
		if mailbox.Match(src) { // the only shift among the constants
			def["PART_MAILBOX"] = 63
		}
	}
	for _, m := range kernelsrc.Mismatches(def, map[string]int64{
		"TILE":           int64(misgpu.Tile),
		"FLUSHB":         int64(misgpu.FlushMax),
		"KF_ALWAYS":      int64(misgpu.KFAlways),
		"KF_WORDS":       int64(misgpu.KFWords),
		"KF_JOIN2":       int64(misgpu.KFJoin2),
		"KF_SCAN":        int64(misgpu.KFScanLarger),
		"KF_PIPE":        int64(misgpu.KFPipe),
		"WARPS":          int64(misgpu.BlockSize / 32),
		"PART_SLOT_BITS": int64(misgpu.SlotBits),
		"PART_WINDOWS":   int64(misgpu.MaxWindows),
		"PART_MAILBOX":   int64(bitIndex(misgpu.MailboxBit)),
		"PULL_WORDS":     misgpu.PullUnroll,
	}) {
		t.Error(m)
	}
}

// bitIndex is the index of x's one set bit, or -1: part.cu writes
// PART_MAILBOX as 1ull << index.
func bitIndex(x uint64) int64 {
	if bits.OnesCount64(x) != 1 {
		return -1
	}
	return int64(bits.TrailingZeros64(x))
}

// TestBucketKernelNames checks that bucketKernels names exactly the
// kernels mis.cu instantiates with BUCKET2K.
func TestBucketKernelNames(t *testing.T) {
	src, err := os.ReadFile("../kernels/mis.cu")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^BUCKET2K\((\w+),`).FindAllStringSubmatch(string(src), -1) {
		got = append(got, m[1])
	}
	want := misgpu.BucketKernels()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("mis.cu instantiates %v, bucketKernels lists %v", got, want)
	}
}
