package collector

import (
	"context"
	"time"

	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/codex/rollout"
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
	// Host and User are the envelopes' origin: the hooks' on this
	// machine (ingest.LocalOrigin), so that the calls join their sessions.
	Host, User string
	// Interval is the wait between two looks (default
	// DefaultRolloutInterval).
	Interval time.Duration
	// Since is how far back a rollout must have been written, from the
	// first look, to be read (default DefaultRolloutSince).
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
// their results. Offsets live in memory: a restarted collector reads
// the recent rollouts again, which stores nothing twice (an envelope's id
// is derived from the record).
func (s *Server) FollowRollouts(ctx context.Context, o RolloutOptions) {
	if o.Interval <= 0 {
		o.Interval = DefaultRolloutInterval
	}
	if o.Since <= 0 {
		o.Since = DefaultRolloutSince
	}
	tails := map[string]*rollout.Tail{}
	// counted are the lost lines of each rollout counted so far: a rollout
	// read again from its start after a failed store loses the same lines
	// again, which are not counted twice.
	counted := map[string]rollout.Stats{}
	// readOne reads what the rollout at path (size bytes at this look)
	// gained and stores it; false means it is to be read again.
	readOne := func(ctx context.Context, path string, size int64) bool {
		t := tails[path]
		if t == nil || size < t.Offset() {
			// New, grown after a while, or rewritten: from its start.
			if t != nil {
				delete(counted, path) // rewritten: its lines are new
			}
			t = rollout.NewTail(path, o.Host, o.User)
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
			// Read it again from its start at the next look: what was
			// stored is not stored twice.
			delete(tails, path)
			if ctx.Err() == nil {
				s.log.Warn("cannot store a Codex rollout's events", "path", path, "err", err)
			}
			return false
		}
		return true
	}
	f := &follower{
		dir: o.Dir, match: codex.IsRollout, interval: o.Interval, since: time.Now().Add(-o.Since),
		warn: s.log.Warn, what: "Codex's rollouts",
		read: func(ctx context.Context, files []grownFile) (failed []string) {
			for _, g := range files {
				if ctx.Err() != nil || !readOne(ctx, g.path, g.size) {
					failed = append(failed, g.path)
				}
			}
			return failed
		},
	}
	f.run(ctx)
}
