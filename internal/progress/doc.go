// Package progress reports the progress of long work (file reads, coarse
// grid hierarchies) on a terminal.
//
// A Reporter writes only when its output is a terminal: a line that
// rewrites itself is a help to a person watching, and noise in a log file
// or a CI transcript, where the final summary is what counts. Updates are
// rate limited, so callers may report from hot loops without costing more
// than a clock read.
//
// A nil *Reporter is valid and reports nothing, so code can take one
// optionally without checks at every call.
package progress
