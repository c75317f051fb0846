package collector

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/codex/rollout"
	"github.com/hookwatch/hookwatch/event"
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

// followedRollout is one rollout file the collector knows: its tail while
// it is followed, nil while it is older than RolloutOptions.Since and has
// not grown.
type followedRollout struct {
	tail *rollout.Tail
	size int64
}

// FollowRollouts follows the rollouts of o.Dir until ctx ends: at each
// look it reads what each rollout gained since the last (nothing is read
// twice; a line still being written waits for the next look) and stores
// it. Memory is bounded by the number of rollout files (a path and an
// offset each) and, per followed file, the calls still waiting for their
// results. Offsets live in memory: a restarted collector reads the recent
// rollouts again, which stores nothing twice (an envelope's id is derived
// from the record).
func (s *Server) FollowRollouts(ctx context.Context, o RolloutOptions) {
	if o.Interval <= 0 {
		o.Interval = DefaultRolloutInterval
	}
	if o.Since <= 0 {
		o.Since = DefaultRolloutSince
	}
	files := map[string]*followedRollout{}
	since := time.Now().Add(-o.Since)
	t := time.NewTicker(o.Interval)
	defer t.Stop()
	for {
		s.lookAtRollouts(ctx, o, files, since)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// lookAtRollouts reads what each rollout under o.Dir gained.
func (s *Server) lookAtRollouts(ctx context.Context, o RolloutOptions, files map[string]*followedRollout, since time.Time) {
	err := filepath.WalkDir(o.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() || !codex.IsRollout(path) || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // gone since the directory was read
		}
		f := files[path]
		if f == nil {
			f = &followedRollout{size: -1}
			files[path] = f
			if info.ModTime().Before(since) {
				f.size = info.Size() // old: read only if it grows
			}
		}
		if info.Size() == f.size || (f.tail != nil && info.Size() == f.tail.Offset()) {
			return nil
		}
		f.size = info.Size()
		if f.tail == nil || info.Size() < f.tail.Offset() {
			// New, grown after a while, or rewritten: from its start.
			f.tail = rollout.NewTail(path, o.Host, o.User)
		}
		envs, err := f.tail.Next()
		if err != nil {
			s.log.Warn("cannot read a Codex rollout", "path", path, "err", err)
		}
		var be *BatchError
		if err := s.storeRollout(ctx, envs); errors.As(err, &be) {
			s.log.Warn("a Codex rollout's event refused", "path", path, "err", err)
		} else if err != nil {
			// Read it again from its start at the next look: what was
			// stored is not stored twice.
			f.tail, f.size = nil, -1
			if ctx.Err() == nil {
				s.log.Warn("cannot store a Codex rollout's events", "path", path, "err", err)
			}
			return err
		}
		return nil
	})
	if err != nil && ctx.Err() == nil && !errors.Is(err, ErrClosed) {
		s.log.Warn("cannot look at Codex's rollouts", "dir", o.Dir, "err", err)
	}
}

// rolloutBatch is how many envelopes of a rollout one commit stores.
const rolloutBatch = 500

func (s *Server) storeRollout(ctx context.Context, envs []event.Envelope) error {
	for len(envs) > 0 {
		n := min(len(envs), rolloutBatch)
		if _, err := s.Ingest(ctx, envs[:n]); err != nil {
			return err
		}
		envs = envs[n:]
	}
	return nil
}
