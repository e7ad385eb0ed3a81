package gpuagg

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// The embedded image must be built from the agg.cu beside it: after an
// edit, `go generate ./internal/gpuagg` (nvcc 11.8) rebuilds it.
func TestImageMatchesSource(t *testing.T) {
	src, err := os.ReadFile("agg.cu")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(src)
	want := "source-sha256 " + hex.EncodeToString(sum[:])
	if !strings.Contains(BuildInfo, want+"\n") {
		t.Fatalf("agg.buildinfo does not record agg.cu's hash %s: rebuild the image (go generate)", want)
	}
	if len(image) == 0 {
		t.Fatal("empty kernel image")
	}
}
