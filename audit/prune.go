package audit

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/internal/patherr"
	"github.com/hookwatch/hookwatch/internal/regfile"
)

// Retention of the trail (Writer.Prune). An audit trail is evidence: it is
// never pruned unless asked (serve --audit-retain), and what a prune
// deletes it deletes whole — a session's directory whose every file was
// last written before the cutoff, or a stream's oldest rotated segments —
// never part of a file, and never a stream's active file.
//
// When it deletes a stream's oldest segments it first records, beside the
// stream, where the chain stood at the end of them: <stream>.pruned.json,
//
//	{"schema":"hookwatch.audit.pruned/v1","line":N,"hash":"<hash of line N>","segment":K,"pruned_at":"…"}
//
// N being the last line deleted and K the number of the newest segment
// deleted. Verify starts the stream's chain there: the lines left verify
// as the chain's lines N+1 onwards, and a segment deleted since (a gap
// after N) is still a gap. The record itself is not chained: whoever can
// write the directory can write it too, which is why Verify says, for
// every stream that has one, that its start was pruned.

// prunedSchema names the record of a prune.
const prunedSchema = "hookwatch.audit.pruned/v1"

// prunedRecord is the content of <stream>.pruned.json.
type prunedRecord struct {
	Schema   string    `json:"schema"`
	Line     int64     `json:"line"`
	Hash     string    `json:"hash"`
	Segment  int       `json:"segment"`
	PrunedAt time.Time `json:"pruned_at"`
}

// PrunedFile is the name of the record a prune of stream name (EventsFile
// or ToolCallsFile) leaves in a session's directory.
func PrunedFile(name string) string { return strings.TrimSuffix(name, ".jsonl") + ".pruned.json" }

// readPruned reads the prune record of a stream; ok is false when it has
// none (nothing of it was pruned).
func readPruned(dir, name string) (rec prunedRecord, ok bool, err error) {
	path := filepath.Join(dir, PrunedFile(name))
	b, err := regfile.ReadHead(path, 4096)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, fmt.Errorf("cannot read %s: %w", path, patherr.Strip(err, path))
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, false, fmt.Errorf("%s is not a prune record: %w", path, err)
	}
	if _, herr := hex.DecodeString(rec.Hash); rec.Schema != prunedSchema || rec.Line < 1 || len(rec.Hash) != hashLen || herr != nil || rec.Segment < 1 {
		return rec, false, fmt.Errorf("%s is not a prune record of %s: no schema, line, hash or segment", path, prunedSchema)
	}
	return rec, true, nil
}

// segmentNumber is the number of a rotated segment's file name (0 for the
// active file).
func segmentNumber(path string) int {
	m := streamFile.FindStringSubmatch(filepath.Base(path))
	if m == nil || m[2] == "" {
		return 0
	}
	n, _ := strconv.Atoi(m[2][1:])
	return n
}

// PruneStats is what a Prune deleted.
type PruneStats struct {
	// Sessions are the session directories deleted whole, Segments the
	// rotated segments deleted from the others, Bytes the bytes of both.
	Sessions, Segments int
	Bytes              int64
}

// Prune deletes what of the trail was last written before before: each
// session directory whose every file was, closing its files if it is
// open (unless lines are pending in them), and, of the other sessions,
// each stream's rotated segments that were, oldest first, up to the first
// one that was not (so that what is left is one chain), after recording
// where the chain stood at the end of them (PrunedFile). It goes on past a
// session it cannot prune, and returns the errors with what it deleted.
func (w *Writer) Prune(before time.Time) (PruneStats, error) {
	var st PruneStats
	entries, err := os.ReadDir(w.root)
	if err != nil {
		return st, fmt.Errorf("cannot prune %s: %w", w.root, patherr.Strip(err, w.root))
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if err := w.pruneSession(e.Name(), before, &st); err != nil {
			errs = append(errs, err)
		}
	}
	return st, errors.Join(errs...)
}

// pruneSession prunes the session directory name (see Prune). It holds the
// Writer's lock: the session's files cannot be opened, written or rotated
// meanwhile.
func (w *Writer) pruneSession(name string, before time.Time, st *PruneStats) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	dir := filepath.Join(w.root, name)
	files, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("cannot prune %s: %w", dir, patherr.Strip(err, dir))
	}
	var size int64
	whole := len(files) > 0
	for _, f := range files {
		fi, err := f.Info()
		if err != nil {
			whole = false
			continue
		}
		size += fi.Size()
		whole = whole && !f.IsDir() && fi.ModTime().Before(before)
	}
	if sf := w.open[name]; whole && sf != nil {
		for _, s := range []*stream{sf.events, sf.calls} {
			whole = whole && (s == nil || len(s.pend) == 0)
		}
		if whole {
			if err := sf.close(w); err != nil {
				return err
			}
			delete(w.open, name)
			if i := slices.Index(w.lru, name); i >= 0 {
				w.lru = slices.Delete(w.lru, i, i+1)
			}
		}
	}
	if whole {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("cannot prune %s: %w", dir, patherr.Strip(err, dir))
		}
		st.Sessions++
		st.Bytes += size
		return nil
	}
	var errs []error
	for _, stream := range []string{EventsFile, ToolCallsFile} {
		errs = append(errs, pruneSegments(dir, stream, before, st))
	}
	return errors.Join(errs...)
}

// pruneSegments deletes the oldest rotated segments of a stream last
// written before before, after recording the chain's position at the end
// of the newest of them.
func pruneSegments(dir, name string, before time.Time, st *PruneStats) error {
	segs, err := Segments(dir, name)
	if err != nil {
		return err
	}
	var old []string
	var size int64
	for _, s := range segs {
		fi, err := os.Stat(s)
		if segmentNumber(s) == 0 || err != nil || !fi.ModTime().Before(before) {
			break
		}
		old = append(old, s)
		size += fi.Size()
	}
	if len(old) == 0 {
		return nil
	}
	last, err := readLastLine(old[len(old)-1])
	if err != nil {
		return err
	}
	if last == nil {
		return fmt.Errorf("cannot prune %s: it holds no line to anchor what is left", old[len(old)-1])
	}
	h, err := readLine(last)
	if err != nil {
		return fmt.Errorf("cannot prune %s: its last line: %w", old[len(old)-1], err)
	}
	rec := prunedRecord{Schema: prunedSchema, Line: h.Line, Hash: h.Hash, Segment: segmentNumber(old[len(old)-1]), PrunedAt: time.Now().UTC()}
	b, _ := json.Marshal(rec)
	path := filepath.Join(dir, PrunedFile(name))
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("cannot prune %s: %w", dir, patherr.Strip(err, tmp))
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cannot prune %s: %w", dir, err)
	}
	// The record first: a prune interrupted here leaves segments the record
	// says were pruned, which Verify passes over and the next prune deletes.
	for _, s := range old {
		if err := os.Remove(s); err != nil {
			return fmt.Errorf("cannot prune %s: %w", s, patherr.Strip(err, s))
		}
		st.Segments++
	}
	st.Bytes += size
	return nil
}
