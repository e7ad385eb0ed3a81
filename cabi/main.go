// Command cabi is libmisgrid, the C interface of misgrid, built with
//
//	go build -buildmode=c-shared  (libmisgrid.so)
//	go build -buildmode=c-archive (libmisgrid.a)
//
// by cabi/Makefile. The stable interface is the hand-written header
// include/misgrid.h; the Fortran module is fortran/misgrid.f90. This
// package holds the exported functions and the glue: a handle table (no
// Go pointer ever reaches C), one status code per call with a message per
// context, key=value options from one registry, and copying of every C
// array in and out with its size checked. docs/cabi.md is the user's
// guide.
//
// The main function is empty: a c-shared or c-archive build needs one.
package main

func main() {}
