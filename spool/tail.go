package spool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/hookwatch/hookwatch/internal/lines"
)

// DefaultRotateBytes is the size past which a Tail hands the active segment
// over to the claim of Drain (see Tail).
const DefaultRotateBytes = 1 << 20

// leftoverEvery is how often a Tail looks for segments left by drains that
// failed or died, besides its first pass and whenever a drainer claimed the
// segment it followed: listing the directory for every event would cost more
// than reading the event.
const leftoverEvery = time.Second

// tailName is the file in which a Tail publishes how far it has delivered the
// active segment, for Stats.
const tailName = "tail"

// Tail delivers the active segment in place: the consumer of a spool (the
// collector attached to it) follows current.jsonl from the offset it has
// delivered up to, as writers append to it, instead of claiming it by a
// rename for every drain. A claim creates files (the segment's new name, the
// next active segment, the backlog): on ext4 most of what a drain of one
// record costs. A Tail reads what is new with one open, one fstat and one
// pread.
//
// The protocol is Drain's, with one more reader: writers are unchanged (an
// Append is one write(2) under a shared lock), and a Tail takes no lock. It
// reads only whole lines: a write(2) in progress may be visible in part, but
// always as a prefix, so a line without its '\n' yet is left for the next
// pass. A line torn for good (its writer died) ends at the next Append's
// leading '\n' and is then skipped and counted as corrupt, as by Drain.
//
// A Tail never truncates nor rewrites the segment. Once it has seen the
// segment grow past DefaultRotateBytes it claims it as Drain does (a rename,
// then the exclusive lock that waits for the writers that opened it), delivers
// what follows its offset and deletes it. Any other drainer may claim the
// active segment at any time: a Tail tells by the inode at the path and
// starts the new one from its first byte; what was appended to the old one
// after its offset is the claimer's to deliver.
//
// Delivery stays at-least-once, and a record is delivered twice only after a
// failure or a restart: the offset lives in the Tail, so a new Tail (a
// restarted collector) delivers the active segment again from its start,
// DefaultRotateBytes at most, unless the previous one was Settled. The offset
// is also published in the spool's tail file, so that Stats does not count
// what a Tail delivered as pending. Two Tails of one spool would both deliver
// everything; only the consumer holding Attach's lock should follow the
// spool.
//
// A Tail is not safe for concurrent use.
type Tail struct {
	s        *Spool
	fd       int    // the active segment the offset belongs to, held open; -1 if none
	dev, ino uint64 // its device and inode
	off      int64  // bytes of it delivered, up to a line's end
	rotateAt int64
	listed   time.Time     // when it last looked for leftover segments; zero: at the next pass
	lr       *lines.Reader // reused from pass to pass
	mark     int           // the tail file, open for writing; -1 until needed
	marked   int64         // the offset last published, -1 if none
	markedAt uint64        // the inode it was published for
}

// Tail returns a Tail of s that starts at the beginning of the active
// segment.
func (s *Spool) Tail() *Tail {
	return &Tail{s: s, rotateAt: DefaultRotateBytes, fd: -1, mark: -1, marked: -1}
}

// Drain delivers what is pending, as Spool.Drain does and with the same
// contract for deliver and for errors: first the segments claimed by drains
// that failed or died, then the active segment from the Tail's offset,
// rotating it when it has grown past its size. It looks for such leftover
// segments on its first pass, after a drainer claimed the segment it
// followed or a pass failed, and otherwise at most once a second: they are
// rare (another drainer's failure or crash), and listing the directory for
// every event would cost more than reading the event.
func (t *Tail) Drain(ctx context.Context, max int, deliver func(records [][]byte) error) (delivered int, err error) {
	if max <= 0 {
		max = DefaultBatch
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			t.listed = time.Time{} // a rotation may have left its segment
		}
	}()
	var left []string
	if now := time.Now(); t.fd < 0 || now.Sub(t.listed) >= leftoverEvery {
		if left, err = t.s.segments(); err != nil {
			return 0, err
		}
		t.listed = now
	}
	if delivered, err = t.s.drainLeftovers(ctx, left, max, deliver); err != nil {
		return delivered, err
	}
	n, size, err := t.follow(ctx, max, deliver)
	delivered += n
	if err != nil || size < t.rotateAt {
		return delivered, err
	}
	n, err = t.rotate(ctx, max, deliver)
	return delivered + n, err
}

// follow delivers the whole lines of the active segment past the offset and
// returns the segment's size.
func (t *Tail) follow(ctx context.Context, max int, deliver func([][]byte) error) (delivered int, size int64, err error) {
	var st syscall.Stat_t
	if err := stat(t.s.current, &st); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return 0, 0, nil // claimed by a drainer; the next Append creates it
		}
		return 0, 0, fmt.Errorf("cannot stat %s: %w", t.s.current, err)
	}
	// The segment is held open from one pass to the next: its inode cannot
	// be freed meanwhile, so no new segment can take its number, and the
	// same device and inode at the path mean the same file.
	if t.fd < 0 || st.Ino != t.ino || uint64(st.Dev) != t.dev {
		// Another segment than the one the offset belongs to: a drainer
		// claimed ours, and every record written to it is its to deliver
		// (if it fails, its segment is left: look for it next time).
		if t.fd >= 0 {
			t.listed = time.Time{}
		}
		t.closeSegment()
		fd, err := openFile(t.s.current, syscall.O_RDONLY, 0)
		if err != nil {
			if errors.Is(err, syscall.ENOENT) {
				return 0, 0, nil
			}
			return 0, 0, fmt.Errorf("cannot open %s: %w", t.s.current, err)
		}
		if err := fstat(fd, &st); err != nil {
			closeFD(fd)
			return 0, 0, fmt.Errorf("cannot stat %s: %w", t.s.current, err)
		}
		t.fd, t.dev, t.ino, t.off = fd, uint64(st.Dev), uint64(st.Ino), 0
	}
	if st.Size <= t.off {
		return 0, st.Size, t.publish()
	}
	fd := t.fd

	batch := make([][]byte, 0, min(max, 64))
	from := t.off
	var end, skipped, counted int64 // past the batch's last record; corrupt lines before it; of which counted
	flush := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := deliver(batch); err != nil {
			return fmt.Errorf("cannot deliver %d records of %s: %w", len(batch), t.s.current, err)
		}
		delivered += len(batch)
		batch = make([][]byte, 0, cap(batch))
		err := t.advance(end, skipped-counted)
		counted = skipped
		return err
	}
	if t.lr == nil {
		t.lr = lines.NewReader(nil, 64<<10, MaxRecordBytes)
	}
	t.lr.Reset(&preader{fd: fd, off: from, end: st.Size})
	corrupt, consumed, err := readLines(t.lr, true, func(rec []byte, e, c int64) error {
		batch = append(batch, slices.Clone(rec))
		end, skipped = from+e, c
		if len(batch) < max {
			return nil
		}
		return flush()
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	if err == nil {
		// Lines skipped after the last record, and empty ones.
		err = t.advance(from+consumed, corrupt-counted)
	}
	return delivered, st.Size, errors.Join(err, t.publish())
}

// advance moves the offset to off, counting the corrupt lines it passed
// first: a crash in between counts them twice rather than never.
func (t *Tail) advance(off, corrupt int64) error {
	if err := t.s.addCount(corruptName, corrupt); err != nil {
		return err
	}
	t.off = off
	return nil
}

// rotate claims the active segment, as Drain does, delivers what was written
// to it past the offset and deletes it: a Tail does not let one segment grow
// without end.
func (t *Tail) rotate(ctx context.Context, max int, deliver func([][]byte) error) (int, error) {
	name, err := t.s.claimCurrent()
	if err != nil || name == "" {
		return 0, err
	}
	var st syscall.Stat_t
	from := int64(0)
	if err := stat(filepath.Join(t.s.dir, name), &st); err == nil && st.Ino == t.ino && uint64(st.Dev) == t.dev {
		from = t.off
	}
	t.forget()
	n, err := t.s.drainSegment(ctx, name, true, from, max, deliver)
	if err != nil {
		err = errors.Join(err, t.s.updateBacklog())
	}
	return n, errors.Join(err, t.publish())
}

// forget drops the segment the Tail followed, once claimed: the tail file
// must not name it once it is deleted and its inode free for another.
func (t *Tail) forget() {
	t.closeSegment()
	t.dev, t.ino, t.off = 0, 0, 0
	t.listed = time.Time{}
}

func (t *Tail) closeSegment() {
	if t.fd >= 0 {
		closeFD(t.fd)
		t.fd = -1
	}
}

// Settle is for a consumer that stops: it claims the active segment and
// deletes it if the Tail had delivered all of it, so that the next consumer
// does not deliver it again. If a writer is appending to it, the segment
// stays, claimed, and the next drain delivers it. The Tail lets go of its
// files; a later Drain starts again from the active segment's start.
func (t *Tail) Settle() error {
	defer t.close()
	var st syscall.Stat_t
	if t.fd < 0 || t.off == 0 || stat(t.s.current, &st) != nil || st.Ino != t.ino || uint64(st.Dev) != t.dev || st.Size != t.off {
		return nil // not ours, or not all delivered: the next consumer delivers it
	}
	name, err := t.s.claimCurrent()
	if err != nil || name == "" {
		return err
	}
	ino, dev, off := t.ino, t.dev, t.off
	t.forget()
	path := filepath.Join(t.s.dir, name)
	// Without waiting: a writer still holding its lock leaves the segment
	// for the next drain, delivered again from its start.
	fd, err := openFile(path, syscall.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("cannot open %s: %w", path, err)
	}
	defer closeFD(fd)
	if flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == nil && fstat(fd, &st) == nil &&
		st.Ino == ino && uint64(st.Dev) == dev && st.Size == off {
		if err := syscall.Unlink(path); err != nil {
			return fmt.Errorf("cannot remove delivered segment: %w", err)
		}
		return t.publish()
	}
	return errors.Join(t.s.updateBacklog(), t.publish())
}

// publish writes the offset to the tail file when it changed. The file stays
// open: an overwrite in place allocates nothing, and a Tail that closed it
// after each write would wake itself through Notify.
func (t *Tail) publish() error {
	if t.off == t.marked && t.ino == t.markedAt {
		return nil
	}
	if t.mark < 0 {
		fd, err := openFile(filepath.Join(t.s.dir, tailName), syscall.O_WRONLY|syscall.O_CREAT, 0o600)
		if err != nil {
			return fmt.Errorf("cannot open the spool's tail: %w", err)
		}
		t.mark = fd
	}
	if _, err := syscall.Pwrite(t.mark, formatTail(t.dev, t.ino, t.off), 0); err != nil {
		return fmt.Errorf("cannot write the spool's tail: %w", err)
	}
	t.marked, t.markedAt = t.off, t.ino
	return nil
}

func (t *Tail) close() {
	t.closeSegment()
	if t.mark >= 0 {
		closeFD(t.mark)
		t.mark, t.marked = -1, -1
	}
}

// formatTail returns the tail file's content: device, inode and offset, each
// padded to a fixed width so that an overwrite leaves no older bytes behind.
func formatTail(dev, ino uint64, off int64) []byte {
	b := make([]byte, 0, 63)
	for i, v := range [3]uint64{dev, ino, uint64(off)} {
		var num [20]byte
		d := strconv.AppendUint(num[:0], v, 10)
		for range 20 - len(d) {
			b = append(b, ' ')
		}
		b = append(b, d...)
		b = append(b, " \n"[min(i/2, 1)])
	}
	return b
}

// LastDelivered returns when the consumer of the spool in dir (the collector
// or forwarder attached to it, following it with a Tail) last published how
// far it delivered: the last time it took records the hooks wrote, or let
// go of the spool (Settle). False when no consumer ever followed it.
func LastDelivered(dir string) (time.Time, bool) {
	fi, err := os.Stat(filepath.Join(dir, tailName))
	if err != nil || !fi.Mode().IsRegular() {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}

// tailOf returns the offset of the segment dev, ino that the tail file says
// was delivered, 0 if it names another segment or cannot be read.
func tailOf(dir string, dev, ino uint64) int64 {
	fd, err := openFile(filepath.Join(dir, tailName), syscall.O_RDONLY, 0)
	if err != nil {
		return 0
	}
	defer closeFD(fd)
	var buf [64]byte
	n, _ := syscall.Pread(fd, buf[:], 0)
	if n != 63 {
		return 0
	}
	d, err1 := strconv.ParseUint(trimSpaces(buf[0:20]), 10, 64)
	i, err2 := strconv.ParseUint(trimSpaces(buf[21:41]), 10, 64)
	off, err3 := strconv.ParseInt(trimSpaces(buf[42:62]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || d != dev || i != ino || off < 0 {
		return 0
	}
	return off
}

func trimSpaces(b []byte) string {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	return string(b)
}

// preader reads a file from off to end with pread(2), without moving the
// descriptor's offset.
type preader struct {
	fd       int
	off, end int64
}

func (r *preader) Read(p []byte) (int, error) {
	if r.off >= r.end {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.end-r.off)]
	for {
		n, err := syscall.Pread(r.fd, p, r.off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, io.EOF
		}
		r.off += int64(n)
		return n, nil
	}
}
