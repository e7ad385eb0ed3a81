package cuda_test

import _ "embed"

// testImage holds the test kernels (testdata/test.cu): test_add and
// test_trap.
//
//go:embed testdata/test.fatbin
var testImage []byte
