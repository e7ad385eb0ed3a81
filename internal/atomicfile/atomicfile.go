package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Write writes path with write, through a buffer. Errors start with the
// path.
// A new file gets the mode os.Create would give it (0666 less the umask);
// a replaced file keeps its mode.
func Write(path string, write func(w io.Writer) error) error {
	if path == "" {
		return errors.New("the file name is empty")
	}
	target, mode, err := resolve(path)
	if err != nil {
		return err
	}
	if mode.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	if mode != 0 && !mode.IsRegular() {
		return inPlace(path, write)
	}
	perm := fs.FileMode(0o666) &^ umask()
	if mode != 0 {
		perm = mode.Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".tmp*")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := writeAll(tmp, write); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	ok = true
	syncDir(filepath.Dir(target))
	return nil
}

// resolve follows symbolic links to the file to replace and returns its
// mode, 0 when it does not exist yet.
func resolve(path string) (string, fs.FileMode, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A dangling link is replaced by the file, as os.Create would
		// create its target only in some cases.
		return path, 0, nil
	case err != nil:
		return "", 0, err
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	return target, fi.Mode(), nil
}

// writeAll runs write into f through a buffer and flushes it.
func writeAll(f io.Writer, write func(w io.Writer) error) error {
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return err
	}
	return bw.Flush()
}

func inPlace(path string, write func(w io.Writer) error) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err := writeAll(f, write); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// syncDir makes the rename durable where the system allows it; failing
// to is not an error of the write.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// umask reads the process's umask from /proc (Linux), without setting
// it as syscall.Umask would; 022 where it cannot be read.
func umask() fs.FileMode {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return fs.FileMode(m)
				}
			}
		}
	}
	return 0o022
}
