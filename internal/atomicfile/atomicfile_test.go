package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func put(s string) func(w io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

// entries lists the directory, so that a test sees a temporary file left
// behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteNewAndReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := Write(path, put("first")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, put("second")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "second" {
		t.Fatalf("content %q, %v; want second", b, err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the replaced file's 0600", fi.Mode().Perm())
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("directory holds %v, want only out.txt", got)
	}
}

// A write that fails midway, as on a full disk, leaves the previous file
// whole and no temporary file behind.
func TestFailureKeepsPrevious(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.vtu")
	if err := Write(path, put("good content")); err != nil {
		t.Fatal(err)
	}
	err := Write(path, func(w io.Writer) error {
		if _, err := io.WriteString(w, strings.Repeat("partial ", 1<<18)); err != nil {
			return err
		}
		return syscall.ENOSPC
	})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want ENOSPC naming %s", err, path)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "good content" {
		t.Errorf("previous file now holds %d bytes %.20q, want it untouched", len(b), b)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("directory holds %v after the failure, want only out.vtu", got)
	}
}

// Errors from the system: a missing directory, and a full device
// (/dev/full is not a regular file, so it is written in place) report
// the error and leave other files alone.
func TestWriteErrorFromSystem(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x")
	if err := Write(path, put("keep")); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "missing", "x"), put("y")); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
	if err := Write("/dev/full", put("z")); !errors.Is(err, syscall.ENOSPC) {
		if _, serr := os.Stat("/dev/full"); serr == nil {
			t.Errorf("writing /dev/full: %v, want ENOSPC (written in place, not replaced)", err)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "keep" {
		t.Errorf("content %q", b)
	}
}

func TestSymlinkFollowed(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	link := filepath.Join(dir, "link")
	if err := os.WriteFile(real, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	if err := Write(link, put("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("target holds %q, want new", b)
	}
}
