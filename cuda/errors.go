package cuda

import (
	"errors"
	"fmt"
)

// Result is a CUDA driver result code (CUresult). Zero is success.
type Result int

// Driver result codes that callers may want to test for with errors.Is.
const (
	Success                Result = 0
	ErrorInvalidValue      Result = 1
	ErrorOutOfMemory       Result = 2
	ErrorNotInitialized    Result = 3
	ErrorDeinitialized     Result = 4
	ErrorNoDevice          Result = 100
	ErrorInvalidDevice     Result = 101
	ErrorInvalidImage      Result = 200
	ErrorInvalidContext    Result = 201
	ErrorNoBinaryForGPU    Result = 209
	ErrorInvalidPTX        Result = 218
	ErrorUnsupportedPTX    Result = 222
	ErrorInvalidHandle     Result = 400
	ErrorNotFound          Result = 500
	ErrorNotReady          Result = 600
	ErrorIllegalAddress    Result = 700
	ErrorLaunchOutOfRes    Result = 701
	ErrorLaunchTimeout     Result = 702
	ErrorIllegalInstr      Result = 715
	ErrorLaunchFailed      Result = 719
	ErrorCoopLaunchTooBig  Result = 720
	ErrorUnknown           Result = 999
	resultNotLoaded        Result = 100000 // ours: the driver library is not loaded
	resultClosed           Result = 100001 // ours: the object was closed
	resultContextCorrupted Result = 100002 // ours: an earlier sticky error
)

// Sticky reports whether r leaves its context unusable: after such an
// error every later call in the context fails until the context is reset.
func (r Result) Sticky() bool {
	switch r {
	case ErrorIllegalAddress, ErrorLaunchTimeout, ErrorIllegalInstr, ErrorLaunchFailed,
		713, 714, 716, 717, 718: // hardware stack error, ECC, misaligned address, invalid address space, invalid PC
		return true
	}
	return false
}

// Name returns the driver's name for r, such as "CUDA_ERROR_OUT_OF_MEMORY".
func (r Result) Name() string {
	switch r {
	case resultNotLoaded:
		return "MISGRID_CUDA_NOT_LOADED"
	case resultClosed:
		return "MISGRID_CUDA_CLOSED"
	case resultContextCorrupted:
		return "MISGRID_CUDA_CONTEXT_CORRUPTED"
	}
	if s := drvErrorName(r); s != "" {
		return s
	}
	return fmt.Sprintf("CUresult(%d)", int(r))
}

func (r Result) String() string { return r.Name() }

// Error is a failed driver call. It names the call, the driver's error name
// and description, and what the call was doing.
type Error struct {
	Op     string // the driver entry point or package operation, e.g. "cuMemAlloc"
	Code   Result
	Detail string // what was being done, e.g. "allocating 4.0 GiB (1.2 GiB free)"
}

func (e *Error) Error() string {
	desc := ""
	switch e.Code {
	case resultNotLoaded:
		desc = "the CUDA driver is not loaded"
	case resultClosed:
		desc = "the object was already closed"
	case resultContextCorrupted:
		desc = "the context hit a sticky error earlier and must be reset"
	default:
		desc = drvErrorString(e.Code)
	}
	s := fmt.Sprintf("cuda: %s: %s (%d)", e.Op, e.Code.Name(), int(e.Code))
	if desc != "" {
		s += ": " + desc
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Is lets errors.Is(err, cuda.ErrorOutOfMemory) match an *Error by code.
func (e *Error) Is(target error) bool {
	if r, ok := target.(Result); ok {
		return e.Code == r
	}
	return false
}

// Error makes a Result usable as an errors.Is target.
func (r Result) Error() string {
	if d := drvErrorString(r); d != "" {
		return fmt.Sprintf("cuda: %s (%d): %s", r.Name(), int(r), d)
	}
	return fmt.Sprintf("cuda: %s (%d)", r.Name(), int(r))
}

// check wraps a non-zero result into an *Error.
func check(op string, r Result) error {
	if r == Success {
		return nil
	}
	return &Error{Op: op, Code: r}
}

func checkf(op string, r Result, format string, args ...any) error {
	if r == Success {
		return nil
	}
	return &Error{Op: op, Code: r, Detail: fmt.Sprintf(format, args...)}
}

// ErrUnavailable is wrapped by every error that comes from having no
// usable driver or device; Available returns it with the reason.
var ErrUnavailable = errors.New("cuda: no usable CUDA driver or device")

type errorString string

func (e errorString) Error() string { return string(e) }

// FormatBytes prints a byte count in binary units, for error messages.
func FormatBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit && exp < 4; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTP"[exp])
}
