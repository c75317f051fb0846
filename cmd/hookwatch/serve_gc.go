package main

import (
	"runtime/debug"

	"github.com/hookwatch/hookwatch/collector"
)

// serveGCPercent is serve's GOGC: the heap may grow to three times what is
// live before the next collection, not twice. A collector's live heap is
// mostly the session model's groups (a long session's group holds a few
// KiB per event), which every collection marks whole: at Go's default a
// session of 100,000 events went through about twenty collections, the
// last ones marking a gigabyte each, and they cost more CPU per event than
// the model's own work (docs/benchmarks.md, Session model).
const serveGCPercent = 200

// serveMemoryLimit is the soft memory limit of serve, derived from what it
// bounds: the model's groups (the cache, and up to ModelCacheCeiling times
// as much for the sessions at hand) and a gigabyte for the rest (request
// bodies, the SQLite page caches, the events waiting for the model, the
// streams). Near it the
// garbage collector runs as often as it takes, so that serveGCPercent's
// room is taken only when there is room.
func serveMemoryLimit(modelCacheBytes int64) int64 {
	if modelCacheBytes <= 0 {
		modelCacheBytes = collector.DefaultModelCacheBytes
	}
	return (1+collector.ModelCacheCeiling)*modelCacheBytes + 1<<30
}

// serveGC sets serve's garbage collector, but for what the environment
// sets itself (GOGC, GOMEMLIMIT: the Go runtime has read them already).
func serveGC(getenv func(string) string, modelCacheBytes int64) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serveMemoryLimit(modelCacheBytes))
	}
}
