package install

import (
	"os"
	"path/filepath"
	"strings"
)

// IsTemporaryBuild reports whether path is a binary 'go run' built: in
// <temp>/go-build…/…/exe/<name>, removed when it exits (Go before 1.24), or
// in the build cache, <cache>/<2 hex digits>/<hash>-d/<name>, removed by
// 'go clean -cache' and by the cache's trim of what it has not used for a
// few days — the cache being <user cache dir>/go-build, or GOCACHE. A unit
// or a hook naming such a binary fails from then on.
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
