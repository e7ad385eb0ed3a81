package mis_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/misgrid/misgrid/mis"
)

// The partitioned driver returns the same set as Compute, whatever the
// number of parts; what changes is the communication it reports.
func ExampleComputePartitioned() {
	g := partGrid7(16, 16, 16)
	whole, _ := mis.Compute(g, mis.Options{Device: mis.CPU})
	for _, parts := range []int{1, 4} {
		r, err := mis.ComputePartitioned(context.Background(), g, mis.PartOptions{Parts: parts})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%d parts: same set %v, %d rounds, %d messages\n",
			parts, slices.Equal(r.In, whole.In), r.Rounds, r.Messages)
	}
	// Output:
	// 1 parts: same set true, 6 rounds, 0 messages
	// 4 parts: same set true, 6 rounds, 58 messages
}

// Each part of a distributed run holds only its rows, with global column
// ids, and calls RunPart with its own exchanger (here an in-process
// group; an MPI rank would use package mis/mpi).
func ExampleRunPart() {
	g := partRing(10)
	locs, _ := mis.SplitGraph(g, 2, nil)
	grp, _ := mis.NewLocalGroup(2, 0)
	defer grp.Close()
	res := make([]*mis.LocalResult, 2)
	done := make(chan error)
	for q := range 2 {
		go func() {
			var err error
			res[q], err = mis.RunPart(context.Background(), grp.Member(q), &locs[q], mis.PartOptions{})
			done <- err
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println("part 0 rows 0-4:", res[0].In)
	fmt.Println("part 1 rows 5-9:", res[1].In)
	fmt.Println("set size:", res[0].Size)
	// Output:
	// part 0 rows 0-4: [true false true false true]
	// part 1 rows 5-9: [false true false true false]
	// set size: 5
}
