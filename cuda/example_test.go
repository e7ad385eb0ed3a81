package cuda_test

import (
	"fmt"

	"github.com/misgrid/misgrid/cuda"
)

// Adding a constant to a vector on the GPU, with every error checked. On a
// machine without a driver the first call says why and nothing else runs.
func Example() {
	if err := cuda.Available(); err != nil {
		fmt.Println("no GPU:", err)
		return
	}
	dev, err := cuda.GetDevice(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, err := dev.PrimaryContext()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	mod, err := ctx.LoadModule(testImage)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mod.Close()
	add, err := mod.Function("test_add")
	if err != nil {
		fmt.Println(err)
		return
	}
	xs := []int32{1, 2, 3}
	buf, err := ctx.Alloc(4 * int64(len(xs)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer buf.Free()
	if err := cuda.CopyToDevice(buf, 0, xs); err != nil {
		fmt.Println(err)
		return
	}
	err = add.Launch(cuda.Launch{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32}}, buf, int32(len(xs)), int32(10))
	if err == nil {
		err = cuda.CopyToHost(xs, buf, 0)
	}
	fmt.Println(xs, err)
}
