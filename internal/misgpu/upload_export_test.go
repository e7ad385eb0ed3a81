package misgpu

import "github.com/misgrid/misgrid/cuda"

// Classes copies the graph's class bytes back (tests).
func (dg *Graph) Classes() ([]uint8, error) {
	if err := dg.l.Stream.Synchronize(); err != nil {
		return nil, err
	}
	out := make([]uint8, dg.n)
	if dg.n == 0 {
		return out, nil
	}
	return out, cuda.CopyToHost(out, dg.class, 0)
}
