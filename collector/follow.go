package collector

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/treewalk"
	"github.com/hookwatch/hookwatch/internal/treewatch"
)

// follower is what following a client's growing files takes, the same for
// Codex's rollouts (FollowRollouts) and Claude Code's transcripts
// (FollowTranscripts): it hands the files under dir that match accepts and
// that grew since they were last read to read, all those of a look at
// once. A file last written before since is left alone until it grows (an
// old session goes on), unless unread says its reader stopped short of its
// end; a file is read from where its reader stopped, the reader leaving a
// torn last line for the next look.
//
// Where the platform tells which files change (treewatch: inotify on
// Linux), a look reads only those, at most one look per interval, and an
// idle client costs nothing; the whole tree is walked at the start, after
// lost notifications, and every fullLook as a safety net. Elsewhere, or
// while dir does not exist yet, each interval walks the tree.
type follower struct {
	dir      string
	match    func(path string) bool
	interval time.Duration
	since    time.Time
	// unread, when set, reports whether the reader of the file at path
	// stopped short of size, its size now (read up to an offset kept from
	// an earlier run): a file last written before since is read at once
	// then. What a client wrote while no collector followed it is read
	// however long ago that was, as long as the collector had read the
	// file before; old files it never read are left to hookwatch import.
	unread func(path string, size int64) bool
	// read reads what the files of a look gained and stores it, and
	// returns those of which nothing can be trusted to be stored: they
	// are handed over again at the next look.
	read func(ctx context.Context, files []grownFile) (failed []string)
	// sizes are the sizes of the files at their last read, -1 for one
	// to read at the next look; retry are those, for a look told of
	// changes; due are those the current look found grown.
	sizes map[string]int64
	retry map[string]bool
	due   []grownFile
	warn  func(msg string, args ...any)
	what  string // the files, for the log
}

// grownFile is a file a look found grown, and its size then.
type grownFile struct {
	path string
	size int64
}

// fullLook is how often a follower told of changes walks its whole tree
// anyway.
const fullLook = 5 * time.Minute

// run looks at the files until ctx ends.
func (f *follower) run(ctx context.Context) {
	f.sizes, f.retry = map[string]int64{}, map[string]bool{}
	var (
		w        *treewatch.Watcher
		canWatch = true
		walked   time.Time
	)
	for {
		if w == nil && canWatch {
			if _, err := os.Stat(f.dir); err == nil {
				// Watch first, then walk: nothing written in between is
				// missed.
				w, err = treewatch.New(ctx, f.dir)
				canWatch = err == nil
			}
		}
		if w == nil {
			clear(f.retry)
			f.walk(ctx, f.dir)
		} else if c := w.Take(); c.Overflow || walked.IsZero() || time.Since(walked) >= fullLook {
			clear(f.retry)
			f.walk(ctx, f.dir)
			walked = time.Now()
		} else {
			for p := range f.retry {
				c.Paths = append(c.Paths, p)
			}
			clear(f.retry)
			for _, p := range c.Paths {
				f.lookAt(ctx, p)
			}
		}
		f.readDue(ctx)
		next := time.NewTimer(f.interval)
		if w != nil && len(f.retry) == 0 {
			// Until something changes (or the next full walk), then at
			// least an interval after this look.
			full := time.NewTimer(fullLook - time.Since(walked))
			select {
			case <-ctx.Done():
			case _, ok := <-w.Wake():
				if !ok {
					w, canWatch = nil, false // the watch failed: poll
				}
			case <-full.C:
			}
			full.Stop()
		}
		select {
		case <-ctx.Done():
			next.Stop()
			return
		case <-next.C:
		}
	}
}

// lookAt looks at one path a notification named: a file, or a directory
// created or linked (walked: its files may predate its watch).
func (f *follower) lookAt(ctx context.Context, path string) {
	info, err := os.Lstat(path)
	if err == nil && info.Mode()&fs.ModeSymlink != 0 {
		if target, serr := os.Stat(path); serr == nil && target.IsDir() {
			info = target // a project linked in: walked through
		}
	}
	switch {
	case err != nil:
		return // gone since
	case info.IsDir():
		f.walk(ctx, path)
	case info.Mode().IsRegular() && f.match(path):
		f.check(path, info)
	}
}

// walk looks at every file below root, through the directories that are
// symlinks (treewalk): the root (~/.claude kept elsewhere and linked) or
// one below it (a project kept elsewhere). The files keep their paths
// through the links, those the client writes and its hooks carry.
func (f *follower) walk(ctx context.Context, root string) {
	err := treewalk.Walk(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if d != nil && d.IsDir() && path != root {
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
		f.check(path, info)
		return nil
	})
	if err != nil && ctx.Err() == nil && !errors.Is(err, ErrClosed) {
		f.warn("cannot look at "+f.what, "dir", root, "err", err)
	}
}

// check adds the file to the look's due when it grew since its last read.
func (f *follower) check(path string, info fs.FileInfo) {
	size, ok := f.sizes[path]
	if !ok {
		size = -1
		if info.ModTime().Before(f.since) && (f.unread == nil || !f.unread(path, info.Size())) {
			size = info.Size() // old: read only if it grows
		}
	}
	if info.Size() == size {
		return
	}
	f.sizes[path] = info.Size()
	f.due = append(f.due, grownFile{path, info.Size()})
}

// readDue hands the files the look found grown to read, in one call.
func (f *follower) readDue(ctx context.Context) {
	if len(f.due) == 0 || ctx.Err() != nil {
		return
	}
	due := f.due
	f.due = nil
	for _, p := range f.read(ctx, due) {
		f.sizes[p], f.retry[p] = -1, true
	}
}

// The sources of hookwatch_followed_lines_lost_total.
const (
	lostSourceTranscript = "transcript"
	lostSourceRollout    = "rollout"
)

// followedLost counts the lines a follower passed over in one read of the
// file at path for what they held (what of them, from source: long ones,
// above the reader's bound on a line, and unreadable ones, not JSON or
// not of a record's shape), and says so in one warning for the file, not
// one per line: what they record is missing from the store, as `hookwatch
// import` says of the lines it passes over.
func (s *Server) followedLost(source, what, path string, long, unreadable int) {
	if long+unreadable == 0 {
		return
	}
	s.metrics.followedLost[source].Add(long + unreadable)
	s.log.Warn("lines of "+what+" passed over: what they record is not stored",
		"path", path, "long", long, "unreadable", unreadable)
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
