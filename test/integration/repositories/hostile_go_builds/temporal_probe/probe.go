// Package probe is a hostile Go module: its code is generated (go generate) by a program that tries
// to reach the Temporal server's port and a host that is no registry, and its tests try the same.
package probe

//go:generate go run ./internal/gen

// Generated is what go generate wrote, with what its program could reach.
func Generated() (string, []string) { return generated, generatorReached }
