package install

import (
	"os"
	"path/filepath"
	"strings"
)

// IsTemporaryBuild reports whether path is a binary 'go run' built. 'go
// run' runs the binary it links from its work directory,
// <temp>/go-build…/b001/exe/<name> (GOTMPDIR for <temp> where set), which
// it removes when it exits, whatever the Go version: a process it started
// that outlives it (a collector started in the background) runs a deleted
// file. Since Go 1.24 it also copies that binary into the build cache, and
// a later 'go run' of the same build runs the copy, at
// <cache>/<2 hex digits>/<hash>-d/<name>, removed by 'go clean -cache' and
// by the cache's trim of what it has not used for a few days — the cache
// being <user cache dir>/go-build, or GOCACHE. A unit or a hook naming
// such a binary fails from then on.
func IsTemporaryBuild(path string) bool {
	dir := filepath.Dir(path)
	if filepath.Base(dir) == "exe" {
		for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
			if strings.HasPrefix(filepath.Base(d), "go-build") {
				return true
			}
		}
	}
	entry, shard := filepath.Base(dir), filepath.Dir(dir)
	prefix := filepath.Base(shard)
	if len(prefix) != 2 || !strings.HasPrefix(entry, prefix) || !strings.HasSuffix(entry, "-d") ||
		strings.Trim(strings.TrimSuffix(entry, "-d"), "0123456789abcdef") != "" {
		return false
	}
	cache := filepath.Dir(shard)
	gocache := os.Getenv("GOCACHE")
	return filepath.Base(cache) == "go-build" || (gocache != "" && filepath.Clean(gocache) == cache)
}
