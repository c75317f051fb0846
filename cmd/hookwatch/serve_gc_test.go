package main

import (
	"runtime/debug"
	"testing"

	"github.com/hookwatch/hookwatch/collector"
)

// TestServeGC: serve sets its GOGC and memory limit, derived from the model
// cache, unless the environment sets them.
func TestServeGC(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) })
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	f := func(getenv func(string) string, cache int64, wantPercent int, wantLimit int64) {
		t.Helper()
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(1 << 40)
		serveGC(getenv, cache)
		if got := debug.SetGCPercent(100); got != wantPercent {
			t.Errorf("GOGC %d, want %d", got, wantPercent)
		}
		if got := debug.SetMemoryLimit(-1); got != wantLimit {
			t.Errorf("memory limit %d, want %d", got, wantLimit)
		}
	}
	def := int64(collector.DefaultModelCacheBytes)
	f(env(), def, serveGCPercent, 17*def+1<<30)
	f(env(), 1<<30, serveGCPercent, 17<<30+1<<30)
	f(env(), 0, serveGCPercent, 17*def+1<<30)
	f(env("GOGC", "50"), def, 100, 17*def+1<<30)
	f(env("GOMEMLIMIT", "1GiB"), def, serveGCPercent, 1<<40)
	f(env("GOGC", "off", "GOMEMLIMIT", "1GiB"), def, 100, 1<<40)
}
