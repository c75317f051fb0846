package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// envCPUProfile names the file serve writes its CPU profile to, from its
// start to its exit (pprof's format; unset: none). It is how the profile
// builds are optimised with is made (cmd/hookwatch/default.pgo, see
// docs/benchmarks.md) and how a collector that spends more CPU than
// expected shows where.
const envCPUProfile = "HOOKWATCH_CPU_PROFILE"

// startCPUProfile starts profiling into path and returns what ends the
// profile and closes its file; "" profiles nothing. A path that cannot
// be written is an error: asked for a profile, serve does not run
// without one.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envCPUProfile, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", envCPUProfile, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
