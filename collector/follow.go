package collector

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

// follower is what following a client's growing files takes, the same for
// Codex's rollouts (FollowRollouts) and Claude Code's transcripts
// (FollowTranscripts): a look every interval walks dir for the files
// match accepts and hands each one that grew since the last look to read.
// A file last written before since is left alone until it grows (an old
// session goes on); a file is read from where its reader stopped, the
// reader leaving a torn last line for the next look. Between looks nothing
// runs: an idle client costs one walk of dir per interval.
type follower struct {
	dir      string
	match    func(path string) bool
	interval time.Duration
	since    time.Time
	// read reads what the file at path gained (size is its size at this
	// look) and stores it; false means nothing of it can be trusted to be
	// stored, and the file is handed over again at the next look.
	read func(ctx context.Context, path string, size int64) bool
	// sizes are the sizes of the files at their last read, -1 for one
	// to read at the next look.
	sizes map[string]int64
	warn  func(msg string, args ...any)
	what  string // the files, for the log
}

// run looks at the files until ctx ends.
func (f *follower) run(ctx context.Context) {
	f.sizes = map[string]int64{}
	t := time.NewTicker(f.interval)
	defer t.Stop()
	for {
		f.look(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// look hands every file that grew since the last look to read.
func (f *follower) look(ctx context.Context) {
	err := filepath.WalkDir(f.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if d != nil && d.IsDir() && path != f.dir {
				return fs.SkipDir // unreadable: passed over
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() || !d.Type().IsRegular() || !f.match(path) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // gone since the directory was read
		}
		size, ok := f.sizes[path]
		if !ok {
			size = -1
			if info.ModTime().Before(f.since) {
				size = info.Size() // old: read only if it grows
			}
		}
		if info.Size() == size {
			return nil
		}
		f.sizes[path] = info.Size()
		if !f.read(ctx, path, info.Size()) {
			f.sizes[path] = -1
			return ctx.Err()
		}
		return nil
	})
	if err != nil && ctx.Err() == nil && !errors.Is(err, ErrClosed) {
		f.warn("cannot look at "+f.what, "dir", f.dir, "err", err)
	}
}

// followBatch is how many envelopes of a followed file one commit stores.
const followBatch = 500

// storeFollowed stores envelopes read from a followed file, in commits of
// followBatch. Envelopes the store refuses (BatchError) are logged and
// passed over: reading the file again would not change them.
func (s *Server) storeFollowed(ctx context.Context, what, path string, envs []event.Envelope) error {
	for len(envs) > 0 {
		n := min(len(envs), followBatch)
		var be *BatchError
		if _, err := s.Ingest(ctx, envs[:n]); errors.As(err, &be) {
			s.log.Warn("an event of "+what+" refused", "path", path, "err", err)
		} else if err != nil {
			return err
		}
		envs = envs[n:]
	}
	return nil
}
