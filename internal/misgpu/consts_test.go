package misgpu_test

import (
	"math/bits"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/misgrid/misgrid/internal/misgpu"
)

// TestKernelConstants checks the constants the host shares with the
// kernel sources against their #defines: a mismatch would pass every
// CPU test and go wrong only on a GPU.
func TestKernelConstants(t *testing.T) {
	files, err := filepath.Glob("../kernels/*.cu*")
	if err != nil || len(files) == 0 {
		t.Fatalf("kernel sources: %v (%d files)", err, len(files))
	}
	def := map[string]int64{}
	re := regexp.MustCompile(`(?m)^#define ([A-Z0-9_]+) \(?([0-9]+)u?\)?\b`)
	mailbox := regexp.MustCompile(`(?m)^#define PART_MAILBOX \(1ull << 63\)$`)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			v, _ := strconv.ParseInt(m[2], 10, 64)
			def[m[1]] = v
		}
		if mailbox.Match(src) { // the only shift among the constants
			def["PART_MAILBOX"] = 63
		}
	}
	for _, c := range []struct {
		name string
		host int64
	}{
		{"TILE", misgpu.Tile},
		{"FLUSHB", misgpu.FlushMax},
		{"KF_ALWAYS", misgpu.KFAlways},
		{"KF_WORDS", misgpu.KFWords},
		{"KF_JOIN2", misgpu.KFJoin2},
		{"KF_SCAN", misgpu.KFScanLarger},
		{"WARPS", misgpu.BlockSize / 32},
		{"PART_SLOT_BITS", misgpu.SlotBits},
		{"PART_WINDOWS", misgpu.MaxWindows},
		{"PART_MAILBOX", bitIndex(misgpu.MailboxBit)},
	} {
		got, ok := def[c.name]
		if !ok {
			t.Errorf("no #define %s in the kernel sources", c.name)
		} else if got != c.host {
			t.Errorf("%s is %d in the kernels, %d on the host", c.name, got, c.host)
		}
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
