package policy

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"

	"github.com/hookwatch/hookwatch/internal/atomicfile"
)

// Parsing YAML is the largest cost of a fresh hook process with a big policy
// (yaml.v3 needs ~25 µs per rule; decoding the same rules from JSON is ~8×
// faster). Discover therefore keeps the parse of each user and project file
// in HOOKWATCH_HOME/cache, keyed by the file's path and checked against the
// FNV-128a hash of its content, so an edit is picked up at once. The managed file is
// never cached: the cache is writable by the user, and a doctored entry must
// not be able to change the organisation's rules. Only the hash of the
// managed content last parsed is kept there, so that an edit of it is a
// change as an edit of the others is (parsedFile.rebuilt). A change is
// reported by one process, even when several hooks find it at once
// (claimChange).

// cacheVersion changes whenever the cached form or the parser's output does.
const cacheVersion = 1

type cacheEntry struct {
	Version  int         `json:"version"`
	Hash     string      `json:"hash"`
	Rules    []cacheRule `json:"rules"`
	Problems []Problem   `json:"problems,omitempty"`
}

type cacheRule struct {
	Rule     *ruleFields    `json:"rule"`
	KeyLines map[string]int `json:"key_lines,omitempty"`
}

// ruleFields is Rule without its methods, for JSON (only exported fields
// travel; the compiled form is rebuilt lazily).
type ruleFields Rule

// readFileCached is readFile with a parse cache in dir.
func readFileCached(src Source, dir string) (parsedFile, error) {
	if dir == "" {
		return readFile(src)
	}
	if src.Scope == ScopeManaged {
		return readManaged(src, dir)
	}
	data, err := readPolicy(src.Path)
	if err != nil {
		return readFile(src) // reports missing or unreadable files
	}
	if len(data) > maxFileSize {
		return readFile(src)
	}
	hash := digest(data)
	cachePath := cacheFile(dir, src)
	if b, err := os.ReadFile(cachePath); err == nil {
		if pf, ok := fromCache(b, hash, src); ok {
			return pf, nil
		}
	}
	pf := parse(src, data)
	pf.rebuilt = claimChange(dir, cachePath,
		func(b []byte) bool { _, ok := fromCache(b, hash, src); return ok },
		func() bool { return writeCache(dir, cachePath, hash, pf) })
	return pf, nil
}

// fromCache is the parse of the file at src that the cache entry b keeps,
// if b is whole and of the content whose digest is hash.
func fromCache(b []byte, hash string, src Source) (parsedFile, bool) {
	var e cacheEntry
	if json.Unmarshal(b, &e) != nil || e.Version != cacheVersion || e.Hash != hash {
		return parsedFile{}, false
	}
	pf := parsedFile{problems: e.Problems}
	for _, cr := range e.Rules {
		if cr.Rule == nil {
			return parsedFile{}, false
		}
		r := (*Rule)(cr.Rule)
		r.keyLines = cr.KeyLines
		r.Scope, r.File = src.Scope, src.Path
		pf.rules = append(pf.rules, r)
	}
	return pf, true
}

// claimChange records, with write, a change of a policy file's content
// that the file at path (its parse cache entry, or the managed file's
// note) does not reflect yet, and reports whether this process is the one
// to report the change (parsedFile.rebuilt): of the hooks that find the
// same change at once (those of parallel tool calls), one only. It holds
// an exclusive lock on path+".lock", taken without waiting, while it reads
// path again (current: it reflects the change already) and writes it: a
// process that finds the lock held leaves the change to its holder, one
// that takes it after finds path current and leaves it too. Only a change
// pays for the lock; where locks cannot be taken, each process that finds
// the change reports it, as it would without them.
func claimChange(dir, path string, current func([]byte) bool, write func() bool) bool {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false
	}
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return write()
	}
	defer f.Close() // drops the lock
	switch err := lockFile(f, 0); {
	case errors.Is(err, errLocked):
		return false // its holder writes the change and reports it
	case err != nil:
		return write()
	}
	if b, err := os.ReadFile(path); err == nil && current(b) {
		return false // written since this process read it: reported
	}
	return write()
}

// readManaged reads the managed file at src, always parsed afresh, and
// reports it rebuilt when its content is not what the note in dir says was
// last parsed (the note then rewritten): its first sight and each edit
// are a change, once, as a cached file's are. The note decides only that:
// a doctored one costs a report, or skips one, never a rule.
func readManaged(src Source, dir string) (parsedFile, error) {
	data, err := readPolicy(src.Path)
	if err != nil || len(data) > maxFileSize {
		return readFile(src) // reports missing, unreadable or oversized files
	}
	pf := parse(src, data)
	note := fmt.Sprintf("%d %s", cacheVersion, digest(data))
	notePath := cacheFile(dir, src) + ".seen"
	if b, err := os.ReadFile(notePath); err != nil || string(b) != note {
		pf.rebuilt = claimChange(dir, notePath,
			func(b []byte) bool { return string(b) == note },
			func() bool { return writeAtomic(dir, notePath, []byte(note)) })
	}
	return pf, nil
}

// cacheFile is where dir keeps what it knows of the file at src.
func cacheFile(dir string, src Source) string {
	return filepath.Join(dir, "policy-"+digest([]byte(src.Scope.String() + "\x00" + src.Path))[:24]+".json")
}

// writeCache stores a parse and reports whether it did; failures only cost
// the next process a parse.
func writeCache(dir, path, hash string, pf parsedFile) bool {
	for _, r := range pf.rules {
		if r.invalid != nil {
			return false // only managed rules carry this, and they are not cached
		}
	}
	e := cacheEntry{Version: cacheVersion, Hash: hash, Problems: pf.problems}
	for _, r := range pf.rules {
		e.Rules = append(e.Rules, cacheRule{Rule: (*ruleFields)(r), KeyLines: r.keyLines})
	}
	b, err := json.Marshal(e)
	if err != nil {
		return false
	}
	return writeAtomic(dir, path, b)
}

// writeAtomic replaces the file at path, in dir, with b (a reader sees the
// old content or the new, whole) and reports whether it did. Not synced: a
// cache entry lost to a crash of the machine is only compiled again.
func writeAtomic(dir, path string, b []byte) bool {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false
	}
	return atomicfile.Write(path, b, atomicfile.Options{NoSync: true}) == nil
}

// digest names file contents and cache paths. FNV-128a, not SHA-256: the
// cache only has to notice that a file changed, and crypto/sha256 would link
// the FIPS module whose init every hook process pays. The managed file, the
// one a user must not tamper with, is never cached.
func digest(b []byte) string {
	h := fnv.New128a()
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
