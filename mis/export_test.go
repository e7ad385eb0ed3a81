package mis

// SetParallelGrain lowers the split threshold of the parallel rounds so
// that small test graphs run on several goroutines; it returns a restore
// function.
func SetParallelGrain(n int) func() {
	old := parallelGrain
	parallelGrain = n
	return func() { parallelGrain = old }
}

// SetSlowRounds changes when Parallel's rounds count as slow (less than
// 1/fraction of the undecided vertices decided, at least minActive left)
// and it finishes serially; it returns a restore function.
func SetSlowRounds(fraction, minActive int) func() {
	of, om := slowFraction, slowMinActive
	slowFraction, slowMinActive = fraction, minActive
	return func() { slowFraction, slowMinActive = of, om }
}

// SetFinishMessageLimit changes the largest share of the remainder one
// part may send to the serial finish of the partitioned drivers; it
// returns a restore function.
func SetFinishMessageLimit(n int) func() {
	old := maxFinishMessage
	maxFinishMessage = n
	return func() { maxFinishMessage = old }
}
