// Package cmp is the repository's own copy of the library, the one its tests should compile.
package cmp

// Equal reports whether x and y are equal.
func Equal(x, y any, _ ...any) bool { return false }
