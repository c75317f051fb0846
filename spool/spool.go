// Package spool is the hook's durable local queue: envelopes the collector could
// not take are appended here and delivered later, so that a collector that is
// down, slow or failing loses nothing.
//
// # Delivery contract
//
// The spool guarantees at-least-once delivery: every record for which Append
// returned nil is handed to a Drain's deliver function at least once, whatever
// the interleaving of writer and drainer processes and whatever process dies
// where. A record may be delivered more than once (a drain whose deliver call
// failed, or that crashed before deleting its segment, delivers the segment
// again later), so the receiver must be idempotent; hookwatch's collector
// dedups envelopes by id, which makes the whole path exactly-once. Records are
// delivered roughly in append order, but not strictly: a retried segment comes
// before newer ones, and concurrent writers interleave.
//
// A record Append refuses (ErrFull, ErrInvalidRecord, a failed write) is never
// lost silently: it is counted in Stats.Dropped. A line that cannot be a
// record (a write torn by a crash or a full disk, bytes that are not JSON) is
// skipped by Drain and counted in Stats.Corrupt.
//
// # Layout
//
// Everything lives in one directory (normally $HOOKWATCH_HOME/spool), on a
// local file system (the protocol relies on flock(2), rename(2) and O_APPEND
// being atomic, which network file systems do not all promise):
//
//	current.jsonl                     the active segment; writers append here
//	draining-<ns>-<pid>-<rand>.jsonl  segments claimed by a drainer, or left by one that failed or died
//	backlog                           symlink whose target is the byte size of all draining-* segments
//	tail                              how far the consumer's Tail delivered current.jsonl (device, inode, offset)
//	drain.lock                        serialises backlog updates among drainers
//	dropped, corrupt                  counters: the file size is the count
//	acknowledged                      symlink whose target is how many of those losses the user has seen (Acknowledge)
//
// # Protocol
//
// A writer opens current.jsonl with O_APPEND|O_CREAT, takes a shared flock,
// checks that the file it opened is still the one at the path (fstat and stat
// name the same inode, and it is still linked), then appends all its lines in
// one write(2) and closes, which drops the lock. A drainer claims the active
// segment by renaming it to a unique draining-* name (atomic: two drainers
// cannot both win), then takes an exclusive flock on it, which it gets only
// once every writer that validated before the rename has written and closed;
// writers that lock after the rename see that the path names another inode
// and retry on the new current.jsonl. So once a drainer holds the exclusive
// lock the segment is complete and immutable; it reads it, delivers it in
// batches and deletes it only after every record was delivered. Leftover
// segments (from failed or crashed drains) are claimed with a non-blocking
// exclusive lock so that two drainers never deliver the same segment at once.
//
// The consumer attached to the spool (Attach: the collector) does not claim
// the active segment for every drain: its Tail follows current.jsonl in
// place, from the offset it has delivered up to, reading only whole lines,
// and claims it as above only once it has grown past DefaultRotateBytes
// (see Tail). Until then the active segment holds records already delivered
// as well: Stats does not count them (the tail file says how many), but the
// cap does, so it is soft by up to DefaultRotateBytes more.
//
// Nobody ever blocks on a lock: a writer that finds its inode exclusively
// locked knows a drainer already claimed it and retries on the path, and a
// drainer polls, so a stopped process holding a lock can delay a drain (until
// its ctx ends) but never hang a hook.
//
// Each Append starts its bytes with a '\n': if an earlier write was torn (a
// process killed mid-write, a full disk), the torn bytes end up on a line of
// their own and are skipped, instead of swallowing the next writer's first
// record. Empty lines are therefore normal and not counted as corrupt.
//
// The spool does not fsync by default: a hook runs once per event, and an
// fsync costs milliseconds. Records survive a process crash (they are in the
// page cache), not a power loss. Options.Sync trades that latency for
// durability across power loss.
package spool

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
)

// File names inside the spool directory.
const (
	currentName   = "current.jsonl"
	segmentPrefix = "draining-"
	segmentSuffix = ".jsonl"
	backlogName   = "backlog"
	drainLockName = "drain.lock"
	droppedName   = "dropped"
	corruptName   = "corrupt"
	ackedName     = "acknowledged"
)

// DefaultMaxBytes is the cap on pending bytes when Options.MaxBytes is 0.
const DefaultMaxBytes = 256 << 20

// MaxRecordBytes is the largest record Append accepts and Drain reads; longer
// lines are corrupt. It bounds the memory a drain needs for one line whatever
// bytes a segment holds.
const MaxRecordBytes = 16 << 20

// ErrFull is returned (wrapped) by Append when writing the records would take
// the pending bytes of all segments over Options.MaxBytes. The refused records
// are counted in Stats.Dropped.
var ErrFull = errors.New("spool is full")

// ErrInvalidRecord is returned (wrapped) by Append for a record that is
// empty, longer than MaxRecordBytes or contains a '\n': Drain could not give
// it back intact. Nothing of that Append is written and its records are
// counted in Stats.Dropped.
var ErrInvalidRecord = errors.New("invalid spool record")

// Options configures a Spool. The zero value is the default.
type Options struct {
	// MaxBytes caps the bytes of all pending segments; an Append that would
	// exceed it fails with ErrFull. 0 means DefaultMaxBytes, a negative value
	// means no cap. The cap is soft by a few records: concurrent writers
	// check it before writing, and a drain that claimed the active segment
	// publishes its size only when it cannot deliver it (while it delivers,
	// the segment counts nowhere).
	MaxBytes int64
	// Sync makes Append fsync the segment after writing, so appended records
	// survive a power loss, at the cost of milliseconds per Append.
	Sync bool
}

// Spool is a durable queue of records in one directory, shared by any number
// of processes. A Spool holds no open files, needs no Close, and is safe for
// concurrent use by multiple goroutines.
type Spool struct {
	dir      string
	current  string
	backlog  string
	maxBytes int64
	sync     bool
	attached atomic.Int32 // Attaches not released
}

// Open returns the spool in dir, creating dir (mode 0700) if needed. It does
// nothing else, so that a hook process can open a spool for every event.
func Open(dir string, o Options) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create spool directory: %w", err)
	}
	s := &Spool{
		dir:      dir,
		current:  filepath.Join(dir, currentName),
		backlog:  filepath.Join(dir, backlogName),
		maxBytes: o.MaxBytes,
		sync:     o.Sync,
	}
	if s.maxBytes == 0 {
		s.maxBytes = DefaultMaxBytes
	}
	return s, nil
}

// Dir returns the spool's directory.
func (s *Spool) Dir() string { return s.dir }

// Append writes records to the spool, each as one line, all in a single
// write(2) so that concurrent writers never interleave within an Append.
// Each record must be one JSON document without '\n' (ErrInvalidRecord
// otherwise; Append does not parse records, and Drain skips one that is not
// JSON and counts it in Stats.Corrupt). Append with no records does nothing.
//
// When Append returns nil, every record is in the spool and will be delivered
// at least once. When it returns an error, the records it did not write are
// counted in Stats.Dropped: all of them, or those after a short write (whose
// torn record Drain skips), or none if only the sync or close failed.
//
// Append is the hook's fallback when the collector is down, so it does the
// least it can: one open, one non-blocking lock, an fstat, a stat and a
// readlink to validate and apply the cap, one write, one close; no fsync
// unless Options.Sync.
func (s *Spool) Append(records ...[]byte) error { return s.append(records, true) }

// Offer is Append for a caller that has another way to deliver the records
// when the spool refuses them (a hook whose collector is attached to the
// spool can still post to it): what Offer does not write is not counted in
// Stats.Dropped, since it is not lost yet. The caller that then fails to
// deliver them must Append them, or count them itself.
func (s *Spool) Offer(records ...[]byte) error { return s.append(records, false) }

func (s *Spool) append(records [][]byte, count bool) error {
	if len(records) == 0 {
		return nil
	}
	drop := func(n int, err error) error {
		if !count {
			return err
		}
		return s.drop(n, err)
	}
	for i, r := range records {
		if err := checkRecord(r); err != nil {
			return drop(len(records), fmt.Errorf("cannot append record %d of %d: %w", i+1, len(records), err))
		}
	}
	buf := frame(records)

	fd, st, err := s.openCurrent()
	if err != nil {
		return drop(len(records), err)
	}
	if s.maxBytes >= 0 {
		pending := st.Size
		if pending+int64(len(buf)) <= s.maxBytes {
			// Only look at the claimed segments when the active one alone
			// does not already decide.
			pending += s.backlogBytes()
		}
		if pending+int64(len(buf)) > s.maxBytes {
			closeFD(fd)
			return drop(len(records), fmt.Errorf("cannot append %d records (%d bytes) to a spool holding %d of %d bytes: %w",
				len(records), len(buf), pending, s.maxBytes, ErrFull))
		}
	}
	n, err := writeOnce(fd, buf)
	if err == nil && s.sync {
		err = fsync(fd)
		if err != nil {
			err = fmt.Errorf("cannot sync %s: %w", s.current, err)
		}
	}
	cerr := closeFD(fd)
	if n < len(buf) {
		// Records whose '\n' made it to disk are complete and will be
		// delivered; the rest are torn or missing.
		return drop(unwritten(buf, n), fmt.Errorf("cannot append to %s (wrote %d of %d bytes): %w", s.current, n, len(buf), err))
	}
	if err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("cannot close %s: %w", s.current, cerr)
	}
	return nil
}

// frame returns the bytes one Append writes for records: a '\n' that ends any
// torn line an earlier writer left, then each record and its '\n'.
func frame(records [][]byte) []byte {
	size := 1
	for _, r := range records {
		size += len(r) + 1
	}
	buf := make([]byte, 0, size)
	buf = append(buf, '\n')
	for _, r := range records {
		buf = append(buf, r...)
		buf = append(buf, '\n')
	}
	return buf
}

// checkRecord reports why Drain could not give r back intact, if it could
// not. It does not parse r: the hook has just encoded it, and json.Valid would
// cost a quarter of an Append; a record that is not JSON after all is skipped
// by Drain and counted in Stats.Corrupt, so it is still not lost silently.
func checkRecord(r []byte) error {
	switch {
	case len(r) == 0:
		return fmt.Errorf("empty record: %w", ErrInvalidRecord)
	case len(r) > MaxRecordBytes:
		return fmt.Errorf("record of %d bytes exceeds %d: %w", len(r), MaxRecordBytes, ErrInvalidRecord)
	case bytes.IndexByte(r, '\n') >= 0:
		return fmt.Errorf("record contains a newline: %w", ErrInvalidRecord)
	}
	return nil
}

// unwritten returns how many records of buf (framed as Append frames them) do
// not have their terminating '\n' within the first n bytes.
func unwritten(buf []byte, n int) int {
	if n < 1 {
		n = 1 // the leading separator carries no record
	}
	return bytes.Count(buf[n:], []byte{'\n'})
}

// openCurrent opens the active segment for appending and takes a shared lock
// on it, retrying until the locked file is the one at the path, so that no
// drainer has claimed it (see the package doc). It returns the segment's
// fstat.
func (s *Spool) openCurrent() (int, syscall.Stat_t, error) {
	var st, pst syscall.Stat_t
	mkdir := true
	// Every retry means a drainer renamed the segment between our open and
	// our check; drainers skip an empty segment, so a few retries suffice
	// even under heavy drain traffic.
	for range 100 {
		fd, err := openFile(s.current, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT, 0o600)
		if errors.Is(err, syscall.ENOENT) && mkdir {
			// The directory was removed under us (a user cleaning up):
			// recreate it once rather than lose the record.
			mkdir = false
			if err := os.MkdirAll(s.dir, 0o700); err != nil {
				return -1, st, fmt.Errorf("cannot create spool directory: %w", err)
			}
			continue
		}
		if err != nil {
			return -1, st, fmt.Errorf("cannot open %s: %w", s.current, err)
		}
		if testHookOpened != nil {
			testHookOpened()
		}
		if err := flock(fd, syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
			closeFD(fd)
			if errors.Is(err, syscall.EWOULDBLOCK) {
				// Only drainers lock exclusively, and only segments they
				// already renamed: this inode is no longer current.
				continue
			}
			return -1, st, fmt.Errorf("cannot lock %s: %w", s.current, err)
		}
		if err := fstat(fd, &st); err != nil {
			closeFD(fd)
			return -1, st, fmt.Errorf("cannot stat %s: %w", s.current, err)
		}
		err = stat(s.current, &pst)
		if err == nil && st.Nlink > 0 && pst.Ino == st.Ino && pst.Dev == st.Dev {
			return fd, st, nil
		}
		closeFD(fd)
		if err != nil && !errors.Is(err, syscall.ENOENT) {
			return -1, st, fmt.Errorf("cannot stat %s: %w", s.current, err)
		}
	}
	return -1, st, fmt.Errorf("cannot lock %s: it kept being claimed by drainers", s.current)
}

// testHookOpened, if set, runs in openCurrent between the open and the lock:
// tests use it to claim the segment in that window.
var testHookOpened func()

// backlogBytes returns the size of the claimed segments as last published by
// a drainer, 0 if unknown. It costs one readlink(2).
func (s *Spool) backlogBytes() int64 { return readCount(s.backlog) }

// readCount returns the number a symlink at path points to, 0 if unknown.
func readCount(path string) int64 {
	var buf [32]byte
	n, err := readlink(path, buf[:])
	if err != nil || n <= 0 {
		return 0
	}
	v, err := strconv.ParseInt(string(buf[:n]), 10, 64)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// drop counts n refused records and returns err, joined with the counting
// error if the count itself could not be written.
func (s *Spool) drop(n int, err error) error {
	if cerr := s.addCount(droppedName, int64(n)); cerr != nil {
		return errors.Join(err, cerr)
	}
	return err
}

// addCount adds n to the counter file name by appending n bytes. O_APPEND
// makes concurrent increments from any number of processes atomic without a
// lock, and reading the count is a stat. A byte per record stays small: the
// counters only grow on drops and corruption.
func (s *Spool) addCount(name string, n int64) error {
	if n <= 0 {
		return nil
	}
	path := filepath.Join(s.dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("cannot count %d %s records: %w", n, name, err)
	}
	var chunk [4096]byte
	for i := range chunk {
		chunk[i] = '.'
	}
	for n > 0 {
		k := min(n, int64(len(chunk)))
		if _, err := f.Write(chunk[:k]); err != nil {
			f.Close()
			return fmt.Errorf("cannot count %d %s records: %w", n, name, err)
		}
		n -= k
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cannot count %s records: %w", name, err)
	}
	return nil
}

// Stats describes a spool at one moment.
type Stats struct {
	// PendingBytes is the size of all segments not yet delivered, framing
	// included; the cap applies to it.
	PendingBytes int64 `json:"pending_bytes"`
	// Segments is the number of segment files holding records: the active
	// one unless it is empty, and those claimed by drains (in progress,
	// failed or interrupted).
	Segments int `json:"segments"`
	// Dropped counts the records Append refused since the spool was created.
	// When the disk itself is full the count may fail too; Append's error
	// then says so.
	Dropped int64 `json:"dropped"`
	// Corrupt counts the lines drains skipped since the spool was created:
	// torn writes and bytes that were not JSON.
	Corrupt int64 `json:"corrupt"`
	// Acknowledged is how many of the losses (Dropped + Corrupt) the user
	// has acknowledged (see Acknowledge).
	Acknowledged int64 `json:"acknowledged"`
}

// Unacknowledged returns the losses (records dropped or corrupt) the user has
// not acknowledged yet: while there are any, hookwatch is degraded.
func (st Stats) Unacknowledged() int64 {
	return max(0, st.Dropped+st.Corrupt-st.Acknowledged)
}

// Acknowledge records that the user has seen every loss counted so far, so
// that Stats.Unacknowledged is 0 until the next one; the counters themselves
// keep counting. It returns the stats it acknowledged.
func (s *Spool) Acknowledge() (Stats, error) {
	st, err := s.Stats()
	if err != nil {
		return st, err
	}
	// A symlink is replaced atomically by a rename, and read with one
	// readlink(2), like the backlog.
	tmp := filepath.Join(s.dir, fmt.Sprintf(".%s-%d", ackedName, os.Getpid()))
	_ = os.Remove(tmp)
	if err := os.Symlink(strconv.FormatInt(st.Dropped+st.Corrupt, 10), tmp); err != nil {
		return st, fmt.Errorf("cannot acknowledge the spool's losses: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, ackedName)); err != nil {
		_ = os.Remove(tmp)
		return st, fmt.Errorf("cannot acknowledge the spool's losses: %w", err)
	}
	st.Acknowledged = st.Dropped + st.Corrupt
	return st, nil
}

// Stats returns the spool's sizes and counters. It reads no segment (one
// directory listing and a stat per file), so a health endpoint can call it on
// every request; that is also why it reports no pending record count, which
// would mean reading up to MaxBytes.
func (s *Spool) Stats() (Stats, error) {
	var st Stats
	d, err := os.Open(s.dir)
	if err != nil {
		return st, fmt.Errorf("cannot open spool directory: %w", err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return st, fmt.Errorf("cannot list spool directory: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		var counter *int64
		switch {
		case name == currentName || isSegment(name):
		case name == droppedName:
			counter = &st.Dropped
		case name == corruptName:
			counter = &st.Corrupt
		case name == ackedName:
			st.Acknowledged = readCount(filepath.Join(s.dir, name))
			continue
		default:
			continue
		}
		info, err := e.Info()
		if errors.Is(err, os.ErrNotExist) {
			continue // delivered or renamed since the listing
		}
		if err != nil {
			return st, fmt.Errorf("cannot stat spool file: %w", err)
		}
		if counter != nil {
			*counter = info.Size()
			continue
		}
		size := info.Size()
		if name == currentName && size > 0 {
			size -= s.tailDelivered(info)
		}
		if size <= 0 && name == currentName {
			continue // made ready for the next writer, or delivered by a Tail: nothing pending
		}
		st.Segments++
		st.PendingBytes += size
	}
	return st, nil
}

// tailDelivered returns how many bytes of the active segment, described by
// info, the attached consumer's Tail has delivered: what it published, if it
// names this segment and a consumer is attached (the Tail of a consumer that
// died no longer holds its segment, whose inode may have been reused since).
func (s *Spool) tailDelivered(info os.FileInfo) int64 {
	sys, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	off := tailOf(s.dir, uint64(sys.Dev), uint64(sys.Ino))
	if off == 0 {
		return 0
	}
	if _, attached := consumer(s.dir); !attached {
		return 0
	}
	return min(off, info.Size())
}

func isSegment(name string) bool {
	return len(name) > len(segmentPrefix)+len(segmentSuffix) &&
		name[:len(segmentPrefix)] == segmentPrefix &&
		name[len(name)-len(segmentSuffix):] == segmentSuffix
}

// The raw system calls below keep the hot path to exactly one syscall each:
// os.OpenFile would also register the descriptor with the poller, and
// (*os.File).Write would turn a short write into a second write(2), which
// another process's append could land between.

func openFile(path string, mode int, perm uint32) (int, error) {
	for {
		fd, err := syscall.Open(path, mode|syscall.O_CLOEXEC, perm)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

func flock(fd, how int) error {
	for {
		if err := syscall.Flock(fd, how); err != syscall.EINTR {
			return err
		}
	}
}

func fstat(fd int, st *syscall.Stat_t) error {
	for {
		if err := syscall.Fstat(fd, st); err != syscall.EINTR {
			return err
		}
	}
}

func stat(path string, st *syscall.Stat_t) error {
	for {
		if err := syscall.Stat(path, st); err != syscall.EINTR {
			return err
		}
	}
}

func readlink(path string, buf []byte) (int, error) {
	for {
		n, err := syscall.Readlink(path, buf)
		if err != syscall.EINTR {
			return n, err
		}
	}
}

func fsync(fd int) error {
	for {
		if err := syscall.Fsync(fd); err != syscall.EINTR {
			return err
		}
	}
}

// writeOnce writes buf with a single write(2) (retried only if interrupted
// before writing anything) and returns how many bytes were written. A short
// write is an error: a second write could interleave with other writers.
func writeOnce(fd int, buf []byte) (int, error) {
	for {
		n, err := syscall.Write(fd, buf)
		if err == syscall.EINTR && n <= 0 {
			continue
		}
		if n < 0 {
			n = 0
		}
		if err == nil && n < len(buf) {
			err = io.ErrShortWrite
		}
		return n, err
	}
}

func closeFD(fd int) error { return syscall.Close(fd) }
