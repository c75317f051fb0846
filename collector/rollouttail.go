package collector

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/codex/rollout"
	"github.com/hookwatch/hookwatch/importer"
)

// Defaults of RolloutOptions.
const (
	// DefaultRolloutInterval is how often the collector looks for what
	// Codex appended to its rollouts: a look stats each rollout file.
	DefaultRolloutInterval = 2 * time.Second
	// DefaultRolloutSince is how far back, from the collector's start, a
	// rollout must have been written to be read at all: older sessions
	// are `hookwatch import --codex`'s, unless they go on.
	DefaultRolloutSince = 24 * time.Hour
)

// RolloutOptions makes the collector follow Codex's rollout files on this
// machine (rollout.Tail), for what Codex's hooks do not carry: the exit
// code of a command, and the calls that fired no hook (denied,
// interrupted, made while no hook was installed). The rollouts' envelopes
// are stored as an import's are (event.KindRollout); the session model
// merges their calls with the hooks' by tool_use_id, so a call both report
// is counted once.
type RolloutOptions struct {
	// Dir is Codex's sessions directory ($CODEX_HOME/sessions); "" follows
	// nothing. It need not exist yet.
	Dir string
	// StatePath is the import state file (hookwatch import's,
	// $HOOKWATCH_HOME/import-state.json), where the offset reached in each
	// rollout is kept, so that a restarted collector, and hookwatch import
	// --codex, read on from it (and the follower on from an import's).
	// Start sets it to the one in its Home; "" keeps the offsets in
	// memory only.
	StatePath string
	// Host and User are the envelopes' origin: the hooks' on this
	// machine (ingest.LocalOrigin), so that the calls join their sessions.
	Host, User string
	// Interval is the wait between two looks (default
	// DefaultRolloutInterval).
	Interval time.Duration
	// Since is how far back a rollout must have been written, from the
	// first look, to be read (default DefaultRolloutSince), unless
	// StatePath keeps an offset for it short of its end: the collector
	// was following it when it stopped, and the session went on.
	Since time.Duration
}

// FollowRollouts follows the rollouts of o.Dir until ctx ends (a
// follower): at each look it reads what each rollout gained since the last
// (nothing is read twice; a line still being written waits for the next
// look) and stores it. A line it passes over for what it held (above
// rollout.MaxLine, or not a record: rollout.Stats) is counted on /metrics
// and the rollout named in a warning with the count of its read. Memory is
// bounded by the number of rollout files (a path, an offset and a count of
// lost lines each) and, per followed file, the calls still waiting for
// their results.
//
// The offsets of what was stored are kept in o.StatePath, the ones
// hookwatch import --codex reads on from and moves. Each look holds the
// import state's lock from before it reads the offsets until it has saved
// those it moved (importer.HoldRollouts), as each look of the
// transcripts' follower does: one reader of a rollout at a time, so that
// a record is read and stored by the follower or by an import, never by
// both, and no offset kept moves back. A look finds the offset kept for a
// rollout past where its Tail stopped when an import read on since: the
// Tail skips what the import stored (rollout.Tail.SkipTo). An import
// holding the lock makes the look read nothing: the files are looked at
// again at the next look, on from where the import left them.
//
// A restarted collector reads on from the offsets kept: a rollout it had
// read part of is read on at its first look however long ago it was
// written (rollout.ResumeTail reads its lines before the offset again for
// the reader's state, storing nothing of them, nor counting their lost
// lines again); one read to its end is not read until it grows. What was
// stored after the last save is read again, and stored once: an
// envelope's id is derived from the record.
func (s *Server) FollowRollouts(ctx context.Context, o RolloutOptions) {
	if o.Interval <= 0 {
		o.Interval = DefaultRolloutInterval
	}
	if o.Since <= 0 {
		o.Since = DefaultRolloutSince
	}
	// stored is how far each rollout's records are stored, as last seen in
	// the state (the offsets kept when the collector last ran, then at
	// each look): what the follower asks of a file it meets (unread).
	stored := map[string]int64{}
	// unreadable is why the import state could not be read, as last said:
	// a state that stays unreadable is warned of once, not at every look,
	// and its end is said.
	unreadable := ""
	if o.StatePath != "" {
		var err error
		if stored, err = importer.RolloutOffsets(o.StatePath); err != nil {
			s.log.Warn("cannot read the import state: Codex's rollouts untouched for "+o.Since.String()+" are read only if they grow, the others from their start", "err", err)
			stored, unreadable = map[string]int64{}, err.Error()
		}
	}
	// moved are the offsets reached and not saved yet: kept as the look
	// releases the state, or at a later look when that save fails.
	moved := map[string]int64{}
	// shared says the look's offsets are the import state's: not so
	// without a StatePath, or with one that cannot be read, where they are
	// stored's alone, kept nowhere.
	shared := false
	tails := map[string]*rollout.Tail{}
	// counted are the lost lines of each rollout counted so far: a rollout
	// read again after a failed store loses the same lines again, which
	// are not counted twice, nor are those of lines an import read.
	counted := map[string]rollout.Stats{}
	// seen records the lost lines of t as counted, the most of each kind.
	seen := func(path string, t *rollout.Tail) {
		lost, was := t.Lost(), counted[path]
		counted[path] = rollout.Stats{Long: max(lost.Long, was.Long), Unreadable: max(lost.Unreadable, was.Unreadable)}
	}
	countLost := func(path string, t *rollout.Tail) {
		lost, was := t.Lost(), counted[path]
		s.followedLost(lostSourceRollout, "a Codex rollout", path,
			max(lost.Long-was.Long, 0), max(lost.Unreadable-was.Unreadable, 0))
		seen(path, t)
	}
	// readOne reads what the rollout at path (size bytes at this look)
	// gained past the offset h keeps for it and stores it; false means it
	// is to be read again.
	readOne := func(ctx context.Context, h *importer.RolloutState, path string, size int64) bool {
		kept := stored[path]
		if shared {
			kept = h.Offset(path)
			stored[path] = kept
		}
		t := tails[path]
		if t != nil && size < t.Offset() {
			t = nil // rewritten: from its start
		}
		if t != nil && kept > t.Offset() && kept <= size {
			// An import read on past this Tail and stored what it read:
			// skipped, read for the reader's state alone, its lost lines
			// told of by the import.
			if err := t.SkipTo(kept); err != nil {
				s.log.Warn("cannot read a Codex rollout", "path", path, "err", err)
				delete(tails, path)
				return false
			}
			seen(path, t)
		}
		if t == nil {
			switch {
			case kept > 0 && kept == size:
				return true // read to its end before: nothing gained
			case kept > 0 && kept < size:
				// Read part way before (by this collector, before a
				// failed store or a restart, or by an import): on from
				// there.
				rt, err := rollout.ResumeTail(path, o.Host, o.User, kept)
				if err != nil {
					s.log.Warn("cannot read a Codex rollout", "path", path, "err", err)
					return false
				}
				t = rt
				if _, seen := counted[path]; !seen {
					counted[path] = t.Lost() // counted before the restart
				}
			default:
				// New, or rewritten: from its start, its lines new.
				delete(counted, path)
				t = rollout.NewTail(path, o.Host, o.User)
			}
			tails[path] = t
		}
		envs, err := t.Next()
		countLost(path, t)
		if err != nil {
			s.log.Warn("cannot read a Codex rollout", "path", path, "err", err)
		}
		if err := s.storeFollowed(ctx, "a Codex rollout", path, envs); err != nil {
			// Read it again from what was stored at the next look: what
			// was stored since is not stored twice.
			delete(tails, path)
			if ctx.Err() == nil {
				s.log.Warn("cannot store a Codex rollout's events", "path", path, "err", err)
			}
			return false
		}
		// Past the offset kept, or another file's (rewritten): an offset
		// the Tail stopped short of is an import's, read on from at the
		// next look.
		if off := t.Offset(); off > kept || kept > size {
			stored[path] = off
			if shared {
				moved[path] = off
			}
		}
		return true
	}
	busy := false // an import holds the state: said once until it ends
	// hold takes the import state for a look (nil: an import holds it).
	hold := func() *importer.RolloutState {
		h, err := importer.HoldRollouts(o.StatePath, "hookwatch serve", false)
		var held *importer.BusyError
		switch {
		case errors.As(err, &held):
			if !busy {
				s.log.Info("Codex's rollouts are being read by an import: followed again once it ends", "holder", held.Holder)
			}
			busy = true
			return nil
		case err != nil:
			if err.Error() != unreadable {
				s.log.Warn("cannot read the import state: Codex's rollouts' offsets are not kept until it can be", "err", err)
				unreadable = err.Error()
			}
			h, _ = importer.HoldRollouts("", "", true)
		case unreadable != "":
			s.log.Info("the import state is read again: Codex's rollouts' offsets are kept", "path", o.StatePath)
			unreadable = ""
		}
		busy, shared = false, err == nil && o.StatePath != ""
		return h
	}
	// keep records in h the offsets reached (and those of earlier looks a
	// save failed to keep, unless an import moved them on since), and
	// saves them as it releases the state.
	keep := func(h *importer.RolloutState) {
		for p, off := range moved {
			if kept := h.Offset(p); off > kept || kept > sizeOf(p) {
				if err := h.Set(p, off); err != nil {
					break // Release saves again
				}
			}
		}
		if err := h.Release(); err != nil {
			s.log.Warn("cannot keep Codex's rollouts' offsets: a restarted collector reads them again", "err", err)
			return
		}
		clear(moved)
	}
	f := &follower{
		dir: o.Dir, match: codex.IsRollout, interval: o.Interval, since: time.Now().Add(-o.Since),
		unread: func(path string, size int64) bool {
			off, ok := stored[path]
			return ok && off != size
		},
		warn: s.log.Warn, what: "Codex's rollouts",
		read: func(ctx context.Context, files []grownFile) (failed []string) {
			// The transcripts' follower takes the same lock in this
			// process: one of them at a time.
			s.importState.Lock()
			defer s.importState.Unlock()
			h := hold()
			if h == nil {
				for _, g := range files {
					failed = append(failed, g.path)
				}
				return failed
			}
			for _, g := range files {
				if ctx.Err() != nil || !readOne(ctx, h, g.path, g.size) {
					failed = append(failed, g.path)
				}
			}
			keep(h)
			return failed
		},
	}
	f.run(ctx)
	if len(moved) > 0 {
		// What the last looks stored, when their saves failed.
		s.importState.Lock()
		if h := hold(); h != nil {
			keep(h)
		}
		s.importState.Unlock()
	}
}

// sizeOf is the size of the file at path, -1 when it cannot be told.
func sizeOf(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return info.Size()
}
