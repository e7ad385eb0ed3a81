package sysmem

import (
	"os"
	"path/filepath"
	"testing"
)

func TestProcField(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "meminfo")
	if err := os.WriteFile(p, []byte("MemTotal:  100 kB\nMemAvailable:    2048 kB\nHugePages_Total: 7\nBad:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key  string
		want int64
	}{{"MemAvailable:", 2048 << 10}, {"MemTotal:", 100 << 10}, {"HugePages_Total:", 7}, {"Bad:", -1}, {"Missing:", -1}} {
		if got := procField(p, c.key); got != c.want {
			t.Errorf("%s: %d, want %d", c.key, got, c.want)
		}
	}
	if got := procField(filepath.Join(dir, "none"), "MemAvailable:"); got != -1 {
		t.Errorf("a missing file gave %d, want -1", got)
	}
	q := filepath.Join(dir, "max")
	for text, want := range map[string]int64{"max\n": -1, "123\n": 123, "-5": -1} {
		if err := os.WriteFile(q, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := fileInt(q); got != want {
			t.Errorf("fileInt(%q) = %d, want %d", text, got, want)
		}
	}
}

// On Linux the machine's available memory is known and positive.
func TestMeminfoHere(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo")
	}
	if v := Meminfo("MemAvailable:"); v <= 0 {
		t.Errorf("MemAvailable = %d", v)
	}
}
