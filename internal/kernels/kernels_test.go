package kernels_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/internal/kernels"
)

// The committed images must come from the committed sources, with PTX
// old enough for drivers from 535 on.
func TestImagesUpToDate(t *testing.T) {
	CheckBuildInfo(t, ".", kernels.BuildInfo)
	for name, img := range map[string][]byte{"MIS": kernels.MIS, "Part": kernels.Part, "PartOneWindow": kernels.PartOneWindow, "AMG": kernels.AMG, "Setup": kernels.Setup, "Input": kernels.Input, "Sparse": kernels.Sparse} {
		if len(img) < 1000 {
			t.Errorf("image %s is only %d bytes", name, len(img))
		}
	}
}

// CheckBuildInfo compares the source hash that build.sh recorded in info
// with the *.cu and *.cuh files of dir, and checks the PTX ISA.
func CheckBuildInfo(t *testing.T, dir, info string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.cu"))
	if err != nil {
		t.Fatal(err)
	}
	headers, _ := filepath.Glob(filepath.Join(dir, "*.cuh"))
	files = append(files, headers...)
	slices.SortFunc(files, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) })
	var src []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, b...)
	}
	sum := sha256.Sum256(src)
	kv := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		kv[k] = v
	}
	if got := kv["source-sha256"]; got != hex.EncodeToString(sum[:]) {
		t.Errorf("the images of %s were built from other sources (sha256 %s, sources are %x): run build.sh", dir, got, sum)
	}
	maj, min, _ := strings.Cut(kv["ptx-isa"], ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if err1 != nil || err2 != nil || a > 8 || (a == 8 && b > 2) {
		t.Errorf("embedded PTX ISA %q: want 8.2 or older so that driver 535 loads it", kv["ptx-isa"])
	}
}
