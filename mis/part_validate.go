package mis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/misgrid/misgrid/mesh"
)

// agreedError is an error that needs no final agreement: every part has
// learned it through a collective, or this part's share of the last
// collective is given and the others end with that one.
type agreedError struct{ err error }

func (e agreedError) Error() string { return e.err.Error() }
func (e agreedError) Unwrap() error { return e.err }

// agree is a setup checkpoint: every part learns whether any part failed,
// so that no part waits for one that has given up.
func agree(ctx context.Context, ex Exchanger, err error) error {
	v := []int64{0, 0}
	if err != nil {
		v[0], v[1] = 1, int64(ex.Part())+1
	}
	if e := ex.Allreduce(ctx, Max, v); e != nil {
		if err != nil {
			return err
		}
		return e
	}
	if err != nil {
		return agreedError{err}
	}
	if v[0] != 0 {
		return agreedError{fmt.Errorf("mis: part %d: %w: part %d reported invalid input", ex.Part(), ErrAborted, v[1]-1)}
	}
	return nil
}

// validateLocal checks one part's input without talking to the others.
func validateLocal(l *Local, me, parts int, o *PartOptions) error {
	err := validatePartOptions(me, parts, o)
	if err == nil && l == nil {
		err = errors.New("nil Local")
	}
	var nRows int
	if err == nil {
		nRows, err = validateRows(l, me, parts)
	}
	if err == nil {
		err = validateRowData(l, nRows, o.Priority.Kind)
	}
	if err != nil {
		return fmt.Errorf("mis: part %d: %s", me, err)
	}
	return nil
}

func validatePartOptions(me, parts int, o *PartOptions) error {
	if me < 0 || me >= parts {
		return fmt.Errorf("exchanger part index out of range [0,%d)", parts)
	}
	if _, err := (&Options{Distance: o.Distance}).distance(); err != nil {
		return err
	}
	if o.Mode != Exact && o.Mode != ADMMA {
		return fmt.Errorf("unknown mode %d", int(o.Mode))
	}
	if o.Mode == ADMMA && o.Distance == 2 {
		return errors.New("ADMMA mode supports distance 1 only")
	}
	return nil
}

// validateRows checks which vertices the part owns and its ghosts, and
// returns its row count.
func validateRows(l *Local, me, parts int) (int, error) {
	fail := func(format string, a ...any) (int, error) { return 0, fmt.Errorf(format, a...) }
	if l.N < 0 || l.N > math.MaxInt32 {
		return fail("N = %d out of range [0, 2³¹)", l.N)
	}
	if l.Ranges != nil {
		if len(l.Ranges) != parts+1 {
			return fail("len(Ranges) = %d, want parts+1 = %d", len(l.Ranges), parts+1)
		}
		if l.Ranges[0] != 0 || int(l.Ranges[parts]) != l.N {
			return fail("Ranges run from %d to %d, want 0 to N = %d", l.Ranges[0], l.Ranges[parts], l.N)
		}
		for q := range parts {
			if l.Ranges[q+1] < l.Ranges[q] {
				return fail("Ranges[%d] = %d < Ranges[%d] = %d", q+1, l.Ranges[q+1], q, l.Ranges[q])
			}
		}
		lo, hi := l.Ranges[me], l.Ranges[me+1]
		if l.Rows != nil {
			for i, v := range l.Rows {
				if v != lo+int32(i) {
					return fail("Rows[%d] = %d, but Ranges give this part [%d,%d)", i, v, lo, hi)
				}
			}
			if len(l.Rows) != int(hi-lo) {
				return fail("%d rows, but Ranges give this part %d", len(l.Rows), hi-lo)
			}
		}
		return int(hi - lo), nil
	}
	for i, v := range l.Rows {
		if v < 0 || int(v) >= l.N {
			return fail("Rows[%d] = %d out of range [0,%d)", i, v, l.N)
		}
		if i > 0 && v <= l.Rows[i-1] {
			return fail("Rows[%d] = %d not above Rows[%d] = %d", i, v, i-1, l.Rows[i-1])
		}
	}
	if len(l.GhostParts) != len(l.Ghosts) {
		return fail("%d ghost parts for %d ghosts", len(l.GhostParts), len(l.Ghosts))
	}
	for i, v := range l.Ghosts {
		if v < 0 || int(v) >= l.N {
			return fail("Ghosts[%d] = %d out of range [0,%d)", i, v, l.N)
		}
		if i > 0 && v <= l.Ghosts[i-1] {
			return fail("Ghosts[%d] = %d not above Ghosts[%d] = %d", i, v, i-1, l.Ghosts[i-1])
		}
		if q := l.GhostParts[i]; q < 0 || int(q) >= parts || int(q) == me {
			return fail("GhostParts[%d] = %d (vertex %d): not another part in [0,%d)", i, q, v, parts)
		}
		if _, own := slices.BinarySearch(l.Rows, v); own {
			return fail("Ghosts[%d] = %d is one of this part's rows", i, v)
		}
	}
	return len(l.Rows), nil
}

// validateRowData checks the part's adjacency, classes and primary ranks
// against its nRows rows.
func validateRowData(l *Local, nRows int, kind PriorityKind) error {
	if len(l.Offsets) != nRows+1 {
		return fmt.Errorf("len(Offsets) = %d, want rows+1 = %d", len(l.Offsets), nRows+1)
	}
	if l.Offsets[0] != 0 || l.Offsets[nRows] != int64(len(l.Adj)) {
		return fmt.Errorf("Offsets run from %d to %d, want 0 to len(Adj) = %d", l.Offsets[0], l.Offsets[nRows], len(l.Adj))
	}
	for i := range nRows {
		if l.Offsets[i+1] < l.Offsets[i] {
			return fmt.Errorf("Offsets[%d] = %d < Offsets[%d] = %d", i+1, l.Offsets[i+1], i, l.Offsets[i])
		}
	}
	if l.Class != nil && len(l.Class) != nRows {
		return fmt.Errorf("len(Class) = %d, want rows = %d", len(l.Class), nRows)
	}
	for i, c := range l.Class {
		if c >= mesh.NumClasses {
			return fmt.Errorf("Class[%d] = %d out of range", i, c)
		}
	}
	if l.Primary != nil && len(l.Primary) != nRows {
		return fmt.Errorf("len(Primary) = %d, want rows = %d", len(l.Primary), nRows)
	}
	switch kind {
	case Hash, Boundary, Degree:
	case User:
		if l.Primary == nil && nRows > 0 {
			return errors.New("the user priority needs Local.Primary: ranks of the values over the whole graph (see Primaries)")
		}
	default:
		return fmt.Errorf("unknown priority kind %d", int(kind))
	}
	return nil
}
