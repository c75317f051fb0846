package spool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/internal/lines"
)

// DefaultBatch is the batch size Drain uses when max is not positive.
const DefaultBatch = 500

// Drain delivers pending records: first the segments left by earlier drains
// that failed or died (oldest first), then the active segment, which it
// claims so that new appends go to a fresh one. It calls deliver with batches
// of at most max records (DefaultBatch if max <= 0), in segment order; deliver
// owns the slices it receives and may keep them.
//
// A segment is deleted only after deliver accepted all its records. When
// deliver returns an error, or ctx ends, Drain stops and returns it (wrapped)
// with the number of records delivered so far; the segment stays, and a later
// Drain delivers it again from its start, including the records already
// delivered (at-least-once: the receiver dedups). deliver should therefore
// fail only on transient errors: a batch it can never deliver would block the
// spool until the cap is reached, so it should keep or report such records
// itself and return nil.
//
// Drain is one pass: records appended after it claimed the active segment
// are left for the next call. Any number of Drains may run at once, in any
// processes; they never deliver the same segment concurrently.
func (s *Spool) Drain(ctx context.Context, max int, deliver func(records [][]byte) error) (delivered int, err error) {
	if max <= 0 {
		max = DefaultBatch
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	left, err := s.segments()
	if err != nil {
		return 0, err
	}
	if delivered, err = s.drainLeftovers(ctx, left, max, deliver); err != nil {
		return delivered, err
	}
	name, err := s.claimCurrent()
	if err != nil || name == "" {
		return delivered, err
	}
	n, err := s.drainSegment(ctx, name, true, 0, max, deliver)
	if err != nil {
		// The claimed segment stays: writers must count it now (on
		// success its removal published the backlog already).
		err = errors.Join(err, s.updateBacklog())
	}
	return delivered + n, err
}

// drainLeftovers delivers the claimed segments names (segments), in order,
// until one fails.
func (s *Spool) drainLeftovers(ctx context.Context, names []string, max int, deliver func([][]byte) error) (delivered int, err error) {
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return delivered, err
		}
		n, err := s.drainSegment(ctx, name, false, 0, max, deliver)
		delivered += n
		if err != nil {
			return delivered, err
		}
	}
	return delivered, nil
}

// segments lists the claimed segments, oldest first: their names start with
// the claim time.
func (s *Spool) segments() ([]string, error) {
	d, err := os.Open(s.dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open spool directory: %w", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("cannot list spool directory: %w", err)
	}
	names = slices.DeleteFunc(names, func(n string) bool { return !isSegment(n) })
	slices.Sort(names)
	return names, nil
}

// claimCurrent renames the active segment to a new draining-* name and
// returns that name, or "" if there was nothing to claim. The rename is the
// claim: of two drainers, one gets ENOENT.
func (s *Spool) claimCurrent() (string, error) {
	var st syscall.Stat_t
	if err := stat(s.current, &st); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return "", nil
		}
		return "", fmt.Errorf("cannot stat %s: %w", s.current, err)
	}
	if st.Size == 0 {
		// Nothing written yet (a writer may be about to): claiming it would
		// only make writers retry and leave an empty segment to delete.
		return "", nil
	}
	name := fmt.Sprintf("%s%020d-%d-%08x%s", segmentPrefix, time.Now().UnixNano(), os.Getpid(), rand.Uint32(), segmentSuffix)
	if err := os.Rename(s.current, filepath.Join(s.dir, name)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", nil // another drainer claimed it first
		}
		return "", fmt.Errorf("cannot claim %s: %w", s.current, err)
	}
	// The next writer then opens a file instead of creating one: creating
	// cost a hook ~0.15 ms on ext4, every event when a collector drains
	// each one. A writer that got there first created it already.
	if fd, err := openFile(s.current, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL, 0o600); err == nil {
		closeFD(fd)
	}
	// The backlog is not published here but once the segment is delivered
	// and removed, or found undeliverable (Drain): for the milliseconds of a
	// delivery, writers count the claimed bytes neither in the active
	// segment nor in the backlog. The cap may be passed by what one drain
	// holds, and a collector draining a trickle of hooks claims a segment per
	// event: publishing twice per event (a symlink and a rename each) cost
	// more than the rest of the claim.
	return name, nil
}

// drainSegment delivers the segment name from the offset from (a line's
// start: what precedes it was delivered already) and deletes it. With wait,
// it waits (until ctx ends) for the writers still appending to a segment it
// has just claimed; without, it skips a segment that is locked, since another
// drainer (or a last writer, with a drainer that will follow) owns it.
func (s *Spool) drainSegment(ctx context.Context, name string, wait bool, from int64, max int, deliver func([][]byte) error) (int, error) {
	path := filepath.Join(s.dir, name)
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil // delivered and deleted by another drainer
		}
		return 0, fmt.Errorf("cannot open %s: %w", path, err)
	}
	defer f.Close() // also drops the lock
	fd := int(f.Fd())
	locked, err := lockExclusive(ctx, fd, wait)
	if err != nil {
		return 0, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	if !locked {
		return 0, nil
	}
	var st syscall.Stat_t
	if err := fstat(fd, &st); err != nil {
		return 0, fmt.Errorf("cannot stat %s: %w", path, err)
	}
	if st.Nlink == 0 {
		return 0, nil // another drainer delivered it while we waited for the lock
	}
	if from > 0 && from <= st.Size {
		if _, err := f.Seek(from, io.SeekStart); err != nil {
			return 0, fmt.Errorf("cannot seek %s: %w", path, err)
		}
	}

	delivered := 0
	batch := make([][]byte, 0, min(max, 64))
	flush := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := deliver(batch); err != nil {
			return fmt.Errorf("cannot deliver %d records of %s: %w", len(batch), name, err)
		}
		delivered += len(batch)
		batch = make([][]byte, 0, cap(batch))
		return nil
	}
	corrupt, err := readSegment(f, func(rec []byte) error {
		batch = append(batch, slices.Clone(rec))
		if len(batch) < max {
			return nil
		}
		return flush()
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	if err != nil {
		return delivered, err
	}
	// Count before deleting: a crash in between counts these lines twice
	// rather than never.
	if err := s.addCount(corruptName, corrupt); err != nil {
		return delivered, err
	}
	if err := os.Remove(path); err != nil {
		return delivered, fmt.Errorf("cannot remove delivered segment: %w", err)
	}
	return delivered, s.updateBacklog()
}

// lockExclusive takes an exclusive flock on fd. Without wait it tries once;
// with wait it polls until ctx ends rather than blocking in flock(2), so that
// a writer stopped while holding its shared lock cannot hang a drain. Writers
// hold their lock for one write, so the first retries almost always win.
func lockExclusive(ctx context.Context, fd int, wait bool) (bool, error) {
	delay := 50 * time.Microsecond
	for {
		err := flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return false, err
		}
		if !wait {
			return false, nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			// The segment stays claimed and unlocked: the next Drain
			// picks it up as a leftover.
			return false, ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, 10*time.Millisecond)
	}
}

// updateBacklog publishes the total size of the claimed segments for Append's
// cap check, as the target of the backlog symlink: a writer reads it with one
// readlink(2), and replacing it with rename(2) is atomic; a total already
// published is not written again. The drain lock serialises updates, and
// every delete, and every claim whose segment is not deleted, is followed by
// one, so the last update reflects the latest change.
func (s *Spool) updateBacklog() error {
	lock, err := os.OpenFile(filepath.Join(s.dir, drainLockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("cannot open drain lock: %w", err)
	}
	defer lock.Close()
	// Held only for a directory listing, by drainers only: blocking is fine.
	if err := flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("cannot lock drain lock: %w", err)
	}
	names, err := s.segments()
	if err != nil {
		return err
	}
	var total int64
	for _, name := range names {
		var st syscall.Stat_t
		if err := stat(filepath.Join(s.dir, name), &st); err == nil {
			total += st.Size
		}
	}
	if readCount(s.backlog) == total { // 0 also when never published: the same to writers
		return nil
	}
	tmp := s.backlog + ".tmp"
	_ = os.Remove(tmp) // left by a drainer that died here
	if err := os.Symlink(strconv.FormatInt(total, 10), tmp); err != nil {
		return fmt.Errorf("cannot write spool backlog: %w", err)
	}
	if err := os.Rename(tmp, s.backlog); err != nil {
		return fmt.Errorf("cannot write spool backlog: %w", err)
	}
	return nil
}

// valid reports whether a record is JSON, exactly as json.Valid does
// (jsonscan's FuzzScan holds the two to it), in a third of json.Valid's
// time: a collector reads every event its hooks hand over here, and then
// decodes it.
func valid(rec []byte) bool {
	_, ok := jsonscan.Valid(rec)
	return ok
}

// readSegment calls fn with every record of a segment, in order, and returns
// how many lines it skipped as corrupt: a last line without its '\n' (a torn
// write), a line that is not valid JSON, a line longer than MaxRecordBytes.
// Empty lines separate appends and are skipped silently. rec is only valid
// during the call. An error from fn stops the read and is returned as is.
// readSegment copes with any bytes.
func readSegment(r io.Reader, fn func(rec []byte) error) (corrupt int64, err error) {
	corrupt, _, err = readLines(lines.NewReader(r, 64<<10, MaxRecordBytes), false, func(rec []byte, _, _ int64) error { return fn(rec) })
	return corrupt, err
}

// readLines is readSegment, reading through lr (of max MaxRecordBytes), for
// a reader that may stop inside a line that is still being written. With
// partial, a last line without its '\n' is neither returned nor counted:
// consumed, the bytes up to and including the last '\n' read, is where the
// next read starts. fn also gets end, the offset (from the reader's start)
// just past rec's '\n', and skipped, the lines counted as corrupt before rec.
func readLines(lr *lines.Reader, partial bool, fn func(rec []byte, end, skipped int64) error) (corrupt, consumed int64, err error) {
	for {
		line, f, err := lr.Next()
		switch {
		case err == io.EOF:
			return corrupt, lr.Offset(), nil
		case err != nil:
			return corrupt, lr.Offset(), fmt.Errorf("cannot read segment: %w", err)
		case f&lines.Unterminated != 0:
			if !partial {
				corrupt++ // torn: its '\n' never made it to disk
			}
		case f&lines.Long != 0:
			corrupt++
		case len(line) == 0:
		case !valid(line):
			corrupt++
		default:
			if err := fn(line, lr.Offset(), corrupt); err != nil {
				return corrupt, lr.Offset(), err
			}
		}
	}
}
