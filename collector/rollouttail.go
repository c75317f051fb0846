package collector

import (
	"context"
	"errors"
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
	// rollout is kept, so that a restarted collector reads on from it.
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
// The offsets of what was stored are kept in o.StatePath, saved once per
// look that moved one, under the import state's lock (an import holding
// it: saved at a later look). A restarted collector reads on from them: a
// rollout it had read part of is read on at its first look however long
// ago it was written (rollout.ResumeTail reads its lines before the offset
// again for the reader's state, storing nothing of them, nor counting
// their lost lines again); one read to its end is not read until it grows.
// What was stored after the last save is read again, and stored once: an
// envelope's id is derived from the record.
func (s *Server) FollowRollouts(ctx context.Context, o RolloutOptions) {
	if o.Interval <= 0 {
		o.Interval = DefaultRolloutInterval
	}
	if o.Since <= 0 {
		o.Since = DefaultRolloutSince
	}
	// stored is how far each rollout's records are stored: the offsets
	// kept when the collector last ran, then those reached here; moved are
	// those not saved yet.
	stored := map[string]int64{}
	if o.StatePath != "" {
		var err error
		if stored, err = importer.RolloutOffsets(o.StatePath); err != nil {
			s.log.Warn("cannot read the import state: Codex's rollouts untouched for "+o.Since.String()+" are read only if they grow, the others from their start", "err", err)
			stored = map[string]int64{}
		}
	}
	moved := map[string]int64{}
	tails := map[string]*rollout.Tail{}
	// counted are the lost lines of each rollout counted so far: a rollout
	// read again after a failed store loses the same lines again, which
	// are not counted twice.
	counted := map[string]rollout.Stats{}
	// readOne reads what the rollout at path (size bytes at this look)
	// gained and stores it; false means it is to be read again.
	readOne := func(ctx context.Context, path string, size int64) bool {
		t := tails[path]
		if t != nil && size < t.Offset() {
			t = nil // rewritten: from its start
		}
		if t == nil {
			off, ok := stored[path]
			switch {
			case ok && off == size:
				return true // read to its end before: nothing gained
			case ok && off < size:
				// Read part way before (by this collector, before a
				// failed store or a restart): on from there.
				rt, err := rollout.ResumeTail(path, o.Host, o.User, off)
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
				if ok {
					stored[path], moved[path] = 0, 0
				}
				t = rollout.NewTail(path, o.Host, o.User)
			}
			tails[path] = t
		}
		envs, err := t.Next()
		lost, seen := t.Lost(), counted[path]
		s.followedLost(lostSourceRollout, "a Codex rollout", path,
			max(lost.Long-seen.Long, 0), max(lost.Unreadable-seen.Unreadable, 0))
		counted[path] = rollout.Stats{Long: max(lost.Long, seen.Long), Unreadable: max(lost.Unreadable, seen.Unreadable)}
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
		if off := t.Offset(); stored[path] != off {
			stored[path], moved[path] = off, off
		}
		return true
	}
	busy := false // an import holds the state: said once until it ends
	save := func() {
		if o.StatePath == "" || len(moved) == 0 || !s.importState.TryLock() {
			return // the transcripts' follower holds the state: next look
		}
		err := importer.SaveRolloutOffsets(o.StatePath, "hookwatch serve", moved)
		s.importState.Unlock()
		var held *importer.BusyError
		switch {
		case errors.As(err, &held):
			if !busy {
				s.log.Info("the import state is held by an import: Codex's rollouts' offsets are kept once it ends", "holder", held.Holder)
			}
			busy = true
		case err != nil:
			busy = false
			s.log.Warn("cannot keep Codex's rollouts' offsets: a restarted collector reads them again", "err", err)
		default:
			busy = false
			clear(moved)
		}
	}
	f := &follower{
		dir: o.Dir, match: codex.IsRollout, interval: o.Interval, since: time.Now().Add(-o.Since),
		unread: func(path string, size int64) bool {
			off, ok := stored[path]
			return ok && off != size
		},
		warn: s.log.Warn, what: "Codex's rollouts",
		read: func(ctx context.Context, files []grownFile) (failed []string) {
			for _, g := range files {
				if ctx.Err() != nil || !readOne(ctx, g.path, g.size) {
					failed = append(failed, g.path)
				}
			}
			save()
			return failed
		},
	}
	f.run(ctx)
	save() // what the last looks stored, when their saves found the state held
}
