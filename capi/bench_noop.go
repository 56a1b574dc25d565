//go:build sdkppbench

package main

import "C"

// Sdkpp_BenchNoop is a bare exported cgo function that does nothing: the anchor the C ABI
// benchmarks compare against. It exists only in the benchmark build (tag sdkppbench).
//
//export Sdkpp_BenchNoop
func Sdkpp_BenchNoop() {}
