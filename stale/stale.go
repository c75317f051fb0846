// Package stale is the stale-context guard. An agent that resumes a session
// (or goes on after a compaction) acts on what it remembers of the files it
// read; when those files changed on disk meanwhile, what it remembers is
// wrong. The guard has two halves, both run where the files are:
//
//   - when the agent reads or writes a file (the PostToolUse of Read, Write,
//     Edit, MultiEdit, NotebookEdit), the ingest pipeline records the file's
//     state — modification time, size and, up to HashMaxBytes, an FNV-1a
//     hash of its content — on the event's envelope (Take; event.FileState), and the
//     session model keeps it on the call (attribution.ToolCall.FileStates);
//   - at SessionStart(resume|compact|fork) the hook asks the collector for the
//     files of the session's lineage with the state last recorded of each
//     (Recorded; GET /v1/sessions/{id}/files), compares them with the files
//     as they are now (Check), and answers with additionalContext naming
//     those that changed (Decide, rendered by package decision).
//
// The decision tree (Thresholds):
//
//   - no file changed: nothing is said;
//   - 1 to FreshAbove files changed, none of them deleted or written by the
//     session itself: the context names them (at most MaxListed, paths
//     redacted) and tells the agent to re-read them before relying on what
//     it remembers;
//   - more than FreshAbove changed, or a file the session wrote changed
//     under it, or a file it read or wrote is gone: the same, and the
//     context recommends starting a fresh session from a short summary
//     rather than going on from memory.
//
// The package links only hash/fnv beyond what the hook already has, and does
// no work at init: the lean hook links it, and records a state on every
// Read.
package stale

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/envflag"
	"github.com/hookwatch/hookwatch/internal/regfile"
	"github.com/hookwatch/hookwatch/redact"
)

// HashMaxBytes is the largest file whose content Take hashes. FNV-1a goes
// a byte at a time (about 1 GB/s on this project's loaded machine): a
// source file of 10 KiB costs about 10 µs of CPU, one of 64 KiB about 70
// µs, and most files an agent reads are below it (see docs/benchmarks.md).
// A larger file is known by its modification time and size only: a touch
// that keeps its content then counts as a change.
const HashMaxBytes = 64 << 10

// hashPrefix names the hash in event.FileState.Hash.
const hashPrefix = "fnv1a64:"

// Take returns the state of the regular file at path now: its modification
// time, size and, when it holds at most HashMaxBytes, the hash of its
// content. It fails, without blocking, for anything but a regular file
// (regfile.Open): the path comes from a payload.
func Take(path string) (event.FileState, error) {
	f, fi, err := regfile.Open(path)
	if err != nil {
		return event.FileState{}, fmt.Errorf("cannot record %s: %w", path, err)
	}
	defer f.Close()
	st := event.FileState{Path: path, MtimeNS: fi.ModTime().UnixNano(), Size: fi.Size()}
	if fi.Size() <= HashMaxBytes {
		if st.Hash, err = hashOf(f, fi.Size()); err != nil {
			return event.FileState{}, err
		}
	}
	return st, nil
}

// hashOf hashes the size bytes of f.
func hashOf(f *os.File, size int64) (string, error) {
	buf := make([]byte, size+1) // one more: a file that grew is read to its new end
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("cannot hash %s: %w", f.Name(), err)
	}
	if n > int(size) {
		return "", fmt.Errorf("cannot hash %s: it grew while read", f.Name())
	}
	var b [len(hashPrefix) + 16]byte
	copy(b[:], hashPrefix)
	// FNV-1a, 64 bits: a change detector next to size and mtime, not a
	// digest. Not CRC-32C, faster in hardware, because hash/crc32 builds a
	// table at init (12-17 µs measured), which every hook run would pay,
	// Read or not; FNV has no init and no table.
	h := fnv.New64a()
	h.Write(buf[:n])
	sum := h.Sum64()
	const hex = "0123456789abcdef"
	for i := 0; i < 16; i++ {
		b[len(hashPrefix)+i] = hex[sum>>(60-4*i)&0xf]
	}
	return string(b[:]), nil
}

// Recorded is one file a session read or wrote, with the state recorded
// the last time it did: what GET /v1/sessions/{id}/files lists.
type Recorded struct {
	event.FileState
	// Wrote reports that the session wrote the file (Write, Edit, …, or a
	// shell command the model says writes it) at some point.
	Wrote bool `json:"wrote,omitempty"`
}

// Change is a recorded file that is not as it was.
type Change struct {
	Path string
	// Deleted: the file is gone (or no longer a regular file).
	Deleted bool
	// Wrote: the session itself wrote it (Recorded.Wrote).
	Wrote bool
}

// Check compares each recorded file with the file on disk and returns the
// ones that changed, in the order given. A file whose size differs
// changed; one whose size and mtime are as recorded did not (as make and
// git judge); one whose mtime alone moved changed only if its content's
// hash differs (a touch, a checkout of the same content), or, when no
// hash was recorded, by its mtime. Check stops at deadline (zero: none),
// so that a long list cannot hold the hook past its budget.
func Check(files []Recorded, deadline time.Time) []Change {
	var out []Change
	for i, r := range files {
		if i&15 == 15 && !deadline.IsZero() && time.Now().After(deadline) {
			break
		}
		if changed, deleted := compare(r.FileState); changed {
			out = append(out, Change{Path: r.Path, Deleted: deleted, Wrote: r.Wrote})
		}
	}
	return out
}

func compare(was event.FileState) (changed, deleted bool) {
	fi, err := os.Stat(was.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && !fi.Mode().IsRegular():
		return true, true
	case err != nil:
		return false, false // unreadable now (permissions): nothing to say
	case fi.Size() != was.Size:
		return true, false
	case fi.ModTime().UnixNano() == was.MtimeNS:
		return false, false
	case was.Hash == "" || fi.Size() > HashMaxBytes:
		return true, false
	}
	now, err := Take(was.Path)
	if err != nil {
		return false, false
	}
	return now.Hash != was.Hash, false
}

// Thresholds shape what Decide says.
type Thresholds struct {
	// MaxListed is how many changed files the context names at most; the
	// rest are counted.
	MaxListed int `json:"max_listed"`
	// FreshAbove is how many changed files the agent is told to re-read at
	// most: above it, the context recommends starting fresh.
	FreshAbove int `json:"fresh_above"`
}

// DefaultThresholds are the thresholds unless configured
// (HOOKWATCH_STALE_MAX_LISTED, HOOKWATCH_STALE_FRESH_ABOVE).
var DefaultThresholds = Thresholds{MaxListed: 20, FreshAbove: 10}

// ContextHeader opens the context Decide writes: tests and readers of the
// model's requests look for it.
const ContextHeader = "hookwatch stale-context guard:"

// Fresh reports whether changes call for starting fresh rather than
// re-reading: more of them than FreshAbove, or one the session wrote, or a
// deleted one.
func (th Thresholds) Fresh(changes []Change) bool { return th.freshReason(changes) != "" }

// freshReason says why changes call for starting fresh (Fresh), "" when
// they do not.
func (th Thresholds) freshReason(changes []Change) string {
	if len(changes) > th.FreshAbove {
		return "Many files changed"
	}
	wrote := false
	for _, c := range changes {
		if c.Deleted {
			return "Files this session used were deleted"
		}
		wrote = wrote || c.Wrote
	}
	if wrote {
		return "Files this session edited itself were changed by something else"
	}
	return ""
}

// Context returns the text for the agent about changes, "" for none. Paths
// are redacted (package redact) like everything hookwatch writes.
func (th Thresholds) Context(changes []Change) string {
	if len(changes) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(ContextHeader)
	b.WriteByte(' ')
	if len(changes) == 1 {
		b.WriteString("1 file this session read or wrote earlier has changed on disk since:\n")
	} else {
		b.WriteString(strconv.Itoa(len(changes)))
		b.WriteString(" files this session read or wrote earlier have changed on disk since:\n")
	}
	listed := max(th.MaxListed, 1)
	for i, c := range changes {
		if i == listed {
			fmt.Fprintf(&b, "- … and %d more\n", len(changes)-listed)
			break
		}
		p, _ := redact.String(c.Path)
		b.WriteString("- ")
		b.WriteString(p)
		switch {
		case c.Deleted:
			b.WriteString(" (deleted)")
		case c.Wrote:
			b.WriteString(" (modified; this session had edited it)")
		default:
			b.WriteString(" (modified)")
		}
		b.WriteByte('\n')
	}
	b.WriteString("What you remember of these files is out of date: re-read them before relying on their earlier contents.")
	if why := th.freshReason(changes); why != "" {
		b.WriteString("\n")
		b.WriteString(why)
		b.WriteString(": the earlier work may no longer hold. Consider starting a fresh session from a short summary of the task and its state, re-reading the files you need, rather than continuing from memory.")
	}
	return b.String()
}

// Decide returns the answer to a SessionStart of runtime whose recorded
// files changed as changes say: additionalContext, or the zero Decision
// when nothing changed.
func (th Thresholds) Decide(runtime string, changes []Change) decision.Decision {
	text := th.Context(changes)
	if text == "" {
		return decision.Decision{}
	}
	return decision.Decision{Event: event.SessionStart, Runtime: runtime, AdditionalContext: []string{text}}
}

// Guarded reports whether a SessionStart with source starts from an earlier
// context that may be stale: a resume, a fork (its parent's context, under
// a new id on clients from 2.1.332; older ones report a fork as a resume
// of the parent), or the summary of a compaction.
func Guarded(source string) bool {
	return source == "resume" || source == "compact" || source == "fork"
}

// Config is the guard's configuration.
type Config struct {
	// Off turns the guard off: no file state is recorded, nothing is
	// checked (HOOKWATCH_STALE_GUARD=0).
	Off bool
	Thresholds
}

// ConfigFromEnv reads HOOKWATCH_STALE_GUARD (0, false, off or no turn the
// guard off; default on), HOOKWATCH_STALE_MAX_LISTED and
// HOOKWATCH_STALE_FRESH_ABOVE (counts; defaults in DefaultThresholds)
// through getenv. A bad count keeps its default and is reported as a
// warning: the hook must run anyway.
func ConfigFromEnv(getenv func(string) string) (Config, []string) {
	c := Config{Thresholds: DefaultThresholds}
	c.Off = envflag.Off(getenv("HOOKWATCH_STALE_GUARD"))
	var warn []string
	for _, v := range []struct {
		key  string
		into *int
	}{{"HOOKWATCH_STALE_MAX_LISTED", &c.MaxListed}, {"HOOKWATCH_STALE_FRESH_ABOVE", &c.FreshAbove}} {
		s := getenv(v.key)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 10000 {
			warn = append(warn, fmt.Sprintf("ignoring %s=%q: want a count from 1 to 10000", v.key, s))
			continue
		}
		*v.into = n
	}
	return c, warn
}
