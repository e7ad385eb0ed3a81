package cuda_test

import _ "embed"

// testImage holds the test kernels (testdata/test.cu): test_add,
// test_trap, test_hold and test_peek.
//
//go:embed testdata/test.fatbin
var testImage []byte
