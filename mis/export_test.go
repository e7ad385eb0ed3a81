package mis

// SetParallelGrain lowers the split threshold of the parallel rounds so
// that small test graphs run on several goroutines; it returns a restore
// function.
func SetParallelGrain(n int) func() {
	old := parallelGrain
	parallelGrain = n
	return func() { parallelGrain = old }
}
