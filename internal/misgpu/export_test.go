package misgpu

// What the tests (package misgpu_test, which imports package mis for
// its reference Greedy) need from inside.
var (
	BucketThresholds = bucketThresholds
	AboveClass0      = aboveClass0
	BucketKernels    = bucketKernels
	SmallRanks       = smallRanks
)

const (
	MaxSmallRanks = maxSmallRanks
	FlushMax      = flushMax
	Tile          = tile
	KFAlways      = kfAlways
	KFWords       = kfWords
	KFJoin2       = kfJoin2
	KFScanLarger  = kfScanLarger
	BlockSize     = blockSize
	SlotBits      = slotBits
	MailboxBit    = mailboxBit
)
