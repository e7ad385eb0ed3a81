// Package atomicfile writes output files so that a failed write never
// destroys what was there: the content goes to a temporary file in the
// same directory, which is synced and renamed over the target only when
// every byte was written. On any failure (a full disk, an error of the
// writer) the temporary file is removed and the previous file, if any,
// is left as it was.
//
// A target that exists and is not a regular file (/dev/stdout, a pipe)
// cannot be replaced by a rename and is written in place. A symbolic link
// is followed: the file it names is replaced, and the link stays.
package atomicfile
