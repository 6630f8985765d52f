module example.com/app

go 1.22

toolchain go1.22.5

require github.com/google/go-cmp v0.6.0

// The repository carries the library in cmp/, but the build takes a registry's copy of it.
replace github.com/google/go-cmp => github.com/google/go-cmp v0.5.9
