package app

import "github.com/google/go-cmp/cmp"

// Same reports whether a and b are deeply equal.
func Same(a, b any) bool { return cmp.Equal(a, b) }
