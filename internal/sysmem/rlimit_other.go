//go:build !unix

package sysmem

// AddressSpaceHeadroom reports no limit: none is known here.
func AddressSpaceHeadroom() (int64, bool) { return 0, false }
