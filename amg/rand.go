package amg

// startValue is entry i of the fixed start vector of the eigenvalue
// estimates: a hash of i (lowbias32, Chris Wellons: xor-shifts and odd
// multiplies, each invertible) mapped to [-0.5, 0.5), so that every run
// and every machine starts from the same vector.
func startValue(i int) float64 {
	x := uint32(i) ^ 0x5eed
	x = (x ^ x>>16) * 0x7feb352d
	x = (x ^ x>>15) * 0x846ca68b
	x ^= x >> 16
	return float64(x)/float64(1<<32) - 0.5
}
