package misgpu

// What the tests (package misgpu_test, which imports package mis for
// its reference Greedy) need from inside.
var (
	BucketThresholds = bucketThresholds
	AboveClass0      = aboveClass0
	BucketKernels    = bucketKernels
	SmallRanks       = smallRanks
	SampleStep       = sampleStep
	RowRuns          = rowRuns
	PartTuning       = partTuning
	PartBuckets      = partBuckets
	PartHashBuckets  = partHashBuckets
)

// SampleRows is what near_sample counts on dg (see sampleRows).
func SampleRows(dg *Graph) ([3]uint32, error) { return dg.sampleRows() }

const (
	MaxSmallRanks = maxSmallRanks
	FlushMax      = flushMax
	Tile          = tile
	KFAlways      = kfAlways
	KFWords       = kfWords
	KFJoin2       = kfJoin2
	KFScanLarger  = kfScanLarger
	KFPipe        = kfPipe
	BlockSize     = blockSize
	SlotBits      = slotBits
	MailboxBit    = mailboxBit
	PullUnroll    = pullUnroll
)
