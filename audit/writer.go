package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/hookwatch/hookwatch/internal/lines"
	"github.com/hookwatch/hookwatch/internal/patherr"
	"github.com/hookwatch/hookwatch/internal/regfile"
	"github.com/hookwatch/hookwatch/store"
)

// DefaultMaxFileBytes is the size past which the Writer rotates a stream
// when WriterOptions.MaxFileBytes is 0.
const DefaultMaxFileBytes = 64 << 20

// defaultMaxOpen is the default WriterOptions.MaxOpenSessions.
const defaultMaxOpen = 256

// WriterOptions configure a Writer.
type WriterOptions struct {
	// MaxFileBytes is the size past which a stream's active file is
	// rotated before the next write (DefaultMaxFileBytes when 0; negative:
	// never).
	MaxFileBytes int64
	// MaxOpenSessions caps the sessions whose files stay open (two
	// descriptors each); the least recently written is closed first and
	// opened again when written to (default 256).
	MaxOpenSessions int
	// UniqueCalls tells the Writer that its producer gives each tool call
	// once, as an in-process recorder does: it neither remembers nor looks
	// up tool_use_ids, so its memory does not grow with a session's calls.
	UniqueCalls bool
}

// Writer appends audit records to a directory: one subdirectory per
// session (SessionDir), holding EventsFile and ToolCallsFile, each a hash
// chain continued across restarts and rotations. Directories are 0700 and
// files 0600: they hold prompts and commands.
//
// A stream's active file is rotated when it has grown past MaxFileBytes:
// renamed to <name>.<NNNNNN>.jsonl (NNNNNN counting from 000001, the oldest
// lowest), and the chain goes on in a new active file — its first line's
// prev is the last hash of the segment before.
//
// A Writer writes each tool call of a session once, the first record given
// for its tool_use_id. It remembers them while the session is open and, on
// opening a session again, from its tool_calls files, the rotated segments
// included — unless WriterOptions.UniqueCalls says the producer sees to
// it. A collector restarted offers every finished call of a session that
// has a new event again, the records it makes then lacking what only the
// events gave (the output's preview): the trail keeps the first.
//
// A write is one write(2) per stream and batch, not synced: a crash of the
// process loses nothing written, a crash of the machine may. A write that
// fails is cut off again, so that a file never holds half a line the
// Writer made. A Writer is safe for concurrent use.
//
// WriteEvents and WriteToolCalls write at once. AppendEvent and
// AppendToolCall, for a producer that has one record at a time (an
// in-process agent's calls), encode and chain the record at once and keep
// its line in memory: Flush writes a stream's pending lines in one write.
type Writer struct {
	root    string
	maxSize int64
	maxOpen int
	unique  bool

	mu    sync.Mutex
	open  map[string]*sessionFiles
	lru   []string  // least recently written first
	dirty []*stream // streams with pending lines
	spare [][]byte  // buffers of flushed streams, for the next pending lines
	err   error     // of flushes no caller saw (a session closed to open another)
}

// sessionFiles are the streams of one session, each opened when first
// written to.
type sessionFiles struct {
	dir           string
	events, calls *stream
}

// NewWriter returns a Writer into root, created 0700 if needed.
func NewWriter(root string, o WriterOptions) (*Writer, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the audit directory %s: %w", root, patherr.Strip(err, root))
	}
	if o.MaxFileBytes == 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxOpenSessions <= 0 {
		o.MaxOpenSessions = defaultMaxOpen
	}
	return &Writer{root: root, maxSize: o.MaxFileBytes, maxOpen: o.MaxOpenSessions, unique: o.UniqueCalls,
		open: map[string]*sessionFiles{}}, nil
}

// SessionDir is the name of a session's directory: the session id itself
// when it is a plain name (letters, digits, '.', '_', '-'; at most 128
// bytes; not "." or ".."), else "x-" and the first 32 hex digits of its
// SHA-256, so that no id can name a path outside the audit directory.
func SessionDir(sessionID string) string {
	ok := sessionID != "" && len(sessionID) <= 128 && sessionID != "." && sessionID != ".."
	for i := 0; ok && i < len(sessionID); i++ {
		c := sessionID[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
	}
	if ok && !strings.HasPrefix(sessionID, "x-") {
		return sessionID
	}
	sum := sha256.Sum256([]byte(sessionID))
	return "x-" + hex.EncodeToString(sum[:16])
}

// WriteEvents appends event records of one session, in order, after the
// stream's pending lines (AppendEvent), and writes them all. When the
// write fails, none of them is written.
func (w *Writer) WriteEvents(sessionID string, recs []Event) error {
	if len(recs) == 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	s, err := w.eventsOf(sessionID)
	if err != nil {
		return err
	}
	for i := range recs {
		w.add(s, &recs[i])
	}
	return s.flush(w)
}

// WriteToolCalls appends the records of one session's calls not written
// before, in order, after the stream's pending lines (AppendToolCall), and
// writes them all. It returns how many of recs it wrote: none when the
// write fails.
func (w *Writer) WriteToolCalls(sessionID string, recs []ToolCall) (int, error) {
	if len(recs) == 0 {
		return 0, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	s, err := w.callsOf(sessionID)
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range recs {
		if w.addCall(s, &recs[i]) {
			n++
		}
	}
	if err := s.flush(w); err != nil {
		return 0, err
	}
	return n, nil
}

// AppendEvent encodes an event record as the next line of its session's
// events stream and keeps the line until Flush, or a WriteEvents of the
// same session, writes it. A failure to open the session's files is
// returned at once; a failure to write, by the write.
func (w *Writer) AppendEvent(rec *Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, err := w.eventsOf(rec.SessionID)
	if err != nil {
		return err
	}
	w.add(s, rec)
	return nil
}

// AppendToolCall is AppendEvent for a tool call's record, which is skipped
// when the call was written (or appended) before, as WriteToolCalls skips
// it.
func (w *Writer) AppendToolCall(rec *ToolCall) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, err := w.callsOf(rec.SessionID)
	if err != nil {
		return err
	}
	w.addCall(s, rec)
	return nil
}

// Flush writes every stream's pending lines, one write each, and returns
// the errors of those writes and of the flushes made since the last Flush
// to close a session. A stream whose write failed loses its pending
// lines; its chain goes on from its last written line.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	errs := []error{w.err}
	for len(w.dirty) > 0 {
		errs = append(errs, w.dirty[len(w.dirty)-1].flush(w)) // takes it off w.dirty
	}
	w.err = nil
	return errors.Join(errs...)
}

// eventsOf returns the open events stream of a session.
func (w *Writer) eventsOf(sessionID string) (*stream, error) {
	sf, err := w.session(sessionID)
	if err != nil {
		return nil, err
	}
	if err := sf.openEvents(w.maxSize); err != nil {
		return nil, err
	}
	return sf.events, nil
}

// callsOf returns the open tool calls stream of a session.
func (w *Writer) callsOf(sessionID string) (*stream, error) {
	sf, err := w.session(sessionID)
	if err != nil {
		return nil, err
	}
	if err := sf.openCalls(w.maxSize, !w.unique); err != nil {
		return nil, err
	}
	return sf.calls, nil
}

// add chains rec after s's pending lines.
func (w *Writer) add(s *stream, rec record) {
	if len(s.pend) == 0 {
		if s.pend == nil && len(w.spare) > 0 {
			s.pend = w.spare[len(w.spare)-1]
			w.spare = w.spare[:len(w.spare)-1]
		}
		if !s.dirty {
			s.dirty = true
			w.dirty = append(w.dirty, s)
		}
	}
	s.pend, s.tip = appendLine(s.pend, rec, s.tip)
}

// addCall adds a call's record unless the stream has it already, and
// reports whether it did.
func (w *Writer) addCall(s *stream, rec *ToolCall) bool {
	if s.written != nil {
		id := rec.ToolUseID
		if _, done := s.written[id]; done {
			return false
		}
		s.written[id] = struct{}{}
		s.pendIDs = append(s.pendIDs, id)
	}
	w.add(s, rec)
	return true
}

// WriteStored writes the records of stored events of any sessions, each
// session's in the order given. It returns how many lines it wrote and
// how many it could not, with the errors why.
func (w *Writer) WriteStored(events []store.Event) (written, failed int, err error) {
	var errs []error
	bySession := map[string][]Event{}
	var order []string
	for i := range events {
		r, err := EventOf(&events[i])
		if err != nil {
			failed++
			errs = append(errs, err)
			continue
		}
		if _, ok := bySession[r.SessionID]; !ok {
			order = append(order, r.SessionID)
		}
		bySession[r.SessionID] = append(bySession[r.SessionID], r)
	}
	for _, id := range order {
		recs := bySession[id]
		if err := w.WriteEvents(id, recs); err != nil {
			failed += len(recs)
			errs = append(errs, err)
			continue
		}
		written += len(recs)
	}
	return written, failed, errors.Join(errs...)
}

// WriteCalls writes call records of any sessions (WriteToolCalls). It
// returns how many lines it wrote and how many it could not, with the
// errors why.
func (w *Writer) WriteCalls(calls []ToolCall) (written, failed int, err error) {
	var errs []error
	bySession := map[string][]ToolCall{}
	var order []string
	for _, c := range calls {
		if _, ok := bySession[c.SessionID]; !ok {
			order = append(order, c.SessionID)
		}
		bySession[c.SessionID] = append(bySession[c.SessionID], c)
	}
	for _, id := range order {
		n, err := w.WriteToolCalls(id, bySession[id])
		if err != nil {
			failed += len(bySession[id])
			errs = append(errs, err)
			continue
		}
		written += n
	}
	return written, failed, errors.Join(errs...)
}

// Close writes the pending lines (Flush) and closes every open file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	errs := []error{w.flushLocked()}
	for id, sf := range w.open {
		errs = append(errs, sf.close(w))
		delete(w.open, id)
	}
	w.lru = nil
	return errors.Join(errs...)
}

// session returns the files of a session (closing those of the least
// recently written beyond maxOpen).
func (w *Writer) session(id string) (*sessionFiles, error) {
	dir := SessionDir(id)
	if i := slices.Index(w.lru, dir); i >= 0 {
		w.lru = append(slices.Delete(w.lru, i, i+1), dir)
		return w.open[dir], nil
	}
	for len(w.lru) >= w.maxOpen {
		old := w.lru[0]
		w.lru = w.lru[1:]
		if err := w.open[old].close(w); err != nil {
			w.err = errors.Join(w.err, err) // for the next Flush
		}
		delete(w.open, old)
	}
	path := filepath.Join(w.root, dir)
	switch err := os.Mkdir(path, 0o700); {
	case err == nil:
		// A new session has both files from the start, so that readers
		// find them whatever it did.
		for _, name := range []string{EventsFile, ToolCallsFile} {
			f, err := os.OpenFile(filepath.Join(path, name), os.O_WRONLY|os.O_CREATE, 0o600)
			if err != nil {
				return nil, fmt.Errorf("cannot create the audit trail of session %q: %w", id, err)
			}
			f.Close()
		}
	case !errors.Is(err, fs.ErrExist):
		return nil, fmt.Errorf("cannot create the audit directory of session %q: %w", id, err)
	}
	sf := &sessionFiles{dir: path}
	w.open[dir] = sf
	w.lru = append(w.lru, dir)
	return sf, nil
}

// openEvents opens the session's events stream if it is not open.
func (sf *sessionFiles) openEvents(maxSize int64) error {
	if sf.events != nil {
		return nil
	}
	s, err := openStream(sf.dir, EventsFile, maxSize)
	if err != nil {
		return err
	}
	sf.events = s
	return nil
}

// openCalls opens the session's tool calls stream if it is not open, and,
// with ids, reads the ids of the calls in its files: its rotated segments
// and its active file.
func (sf *sessionFiles) openCalls(maxSize int64, ids bool) error {
	if sf.calls != nil {
		return nil
	}
	s, err := openStream(sf.dir, ToolCallsFile, maxSize)
	if err != nil {
		return err
	}
	if !ids {
		sf.calls = s
		return nil
	}
	written := map[string]struct{}{}
	note := func(line []byte) {
		var r struct {
			ToolUseID string `json:"tool_use_id"`
		}
		if json.Unmarshal(line, &r) == nil {
			written[r.ToolUseID] = struct{}{}
		}
	}
	segs, err := Segments(sf.dir, ToolCallsFile)
	if err == nil {
		for _, seg := range segs[:len(segs)-1] { // the last is the active file
			// A segment removed meanwhile (by hand: the trail is
			// the user's) has no ids left to keep.
			if err = eachLineOf(seg, note); errors.Is(err, fs.ErrNotExist) {
				err = nil
			} else if err != nil {
				break
			}
		}
	}
	if err == nil {
		err = eachLine(io.NewSectionReader(s.f, 0, s.size), filepath.Join(s.dir, s.name), note)
	}
	if err != nil {
		s.close()
		return err
	}
	s.written = written
	sf.calls = s
	return nil
}

// close writes the session's pending lines and closes its files.
func (sf *sessionFiles) close(w *Writer) error {
	var errs []error
	for _, s := range []*stream{sf.events, sf.calls} {
		if s != nil {
			errs = append(errs, s.flush(w), s.close())
		}
	}
	return errors.Join(errs...)
}

// stream is one chained stream of a session directory: the active file
// and its rotated segments.
type stream struct {
	dir, name string // name: EventsFile or ToolCallsFile
	maxSize   int64
	f         *os.File
	size      int64
	at        link // the last line written

	// pend are lines chained after at, not written yet; tip is the last
	// of them (at when none). tip.hash may point into pend: flush sets it
	// to at before pend is used again.
	pend []byte
	tip  link

	// written are the tool_use_ids in a calls stream (nil for events, or
	// with WriterOptions.UniqueCalls); pendIDs those of pending lines.
	written map[string]struct{}
	pendIDs []string
	dirty   bool // in Writer.dirty
}

// openStream opens the active file of a stream for appending and finds
// where its chain stands: the last line of the active file, else of the
// newest rotated segment. A torn last line (the process died in a write)
// is cut off.
func openStream(dir, name string, maxSize int64) (*stream, error) {
	s := &stream{dir: dir, name: name, maxSize: maxSize}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", path, patherr.Strip(err, path))
	}
	s.f = f
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot open %s: %w", path, patherr.Strip(err, path))
	}
	s.size = fi.Size()
	last, end, err := lastLine(f, s.size)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot read the end of %s: %w", path, err)
	}
	if end < s.size {
		if err := f.Truncate(end); err != nil {
			f.Close()
			return nil, fmt.Errorf("cannot cut the torn last line of %s: %w", path, patherr.Strip(err, path))
		}
		s.size = end
	}
	if last == nil {
		segs, err := Segments(dir, name)
		if err != nil {
			f.Close()
			return nil, err
		}
		if len(segs) > 1 {
			prev, err := readLastLine(segs[len(segs)-2])
			if err != nil {
				f.Close()
				return nil, err
			}
			last = prev
		} else if rec, ok, err := readPruned(dir, name); err != nil {
			f.Close()
			return nil, err
		} else if ok {
			// Every segment was pruned: the chain goes on from the
			// last line pruned.
			s.at = link{line: rec.Line, hash: rec.Hash}
		}
	}
	if last != nil {
		h, err := readLine(last)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("cannot continue the chain of %s: its last line: %w", path, err)
		}
		s.at = link{line: h.Line, hash: h.Hash}
	}
	s.tip = s.at
	return s, nil
}

// maxSpare bounds the buffers a Writer keeps for pending lines between
// flushes: a producer's batch, not the largest burst of a collector.
const (
	maxSpare      = 4
	maxSpareBytes = 1 << 20
)

// flush writes the pending lines. When the write fails they are dropped
// (and their tool_use_ids forgotten) and the chain goes on from at.
func (s *stream) flush(w *Writer) error {
	if s.dirty {
		s.dirty = false
		if i := slices.Index(w.dirty, s); i >= 0 {
			w.dirty = slices.Delete(w.dirty, i, i+1)
		}
	}
	if len(s.pend) == 0 {
		return nil
	}
	err := s.write(s.pend, s.tip)
	if err != nil {
		for _, id := range s.pendIDs {
			delete(s.written, id) // not written after all
		}
	}
	clear(s.pendIDs)
	s.pendIDs = s.pendIDs[:0]
	s.tip = s.at
	if cap(s.pend) <= maxSpareBytes && len(w.spare) < maxSpare {
		w.spare = append(w.spare, s.pend[:0])
	}
	s.pend = nil
	return err
}

// write appends lines, which end the chain at at, rotating first when they
// would take the active file past maxSize (not an empty one: lines larger
// than maxSize go whole into a file of their own).
func (s *stream) write(lines []byte, at link) error {
	if len(lines) == 0 {
		return nil
	}
	if s.maxSize > 0 && s.size > 0 && s.size+int64(len(lines)) > s.maxSize {
		if err := s.rotate(); err != nil {
			return err
		}
	}
	n, err := s.f.Write(lines)
	if err != nil {
		if n > 0 {
			s.f.Truncate(s.size) // best effort: no half line stays
		}
		path := filepath.Join(s.dir, s.name)
		return fmt.Errorf("cannot write %s: %w", path, patherr.Strip(err, path))
	}
	s.size += int64(n)
	s.at = link{line: at.line, hash: strings.Clone(at.hash)} // at.hash is in the caller's buffer
	return nil
}

// rotate renames the active file to the next segment name — numbered after
// the newest segment, or the newest pruned (Prune deletes the oldest) — and
// opens a new active file.
func (s *stream) rotate() error {
	segs, err := Segments(s.dir, s.name)
	if err != nil {
		return err
	}
	n := 0
	if len(segs) > 1 { // segs ends with the active file
		n = segmentNumber(segs[len(segs)-2])
	}
	if rec, ok, err := readPruned(s.dir, s.name); err != nil {
		return fmt.Errorf("cannot rotate %s: %w", filepath.Join(s.dir, s.name), err)
	} else if ok {
		n = max(n, rec.Segment)
	}
	seg := filepath.Join(s.dir, segmentName(s.name, n+1))
	path := filepath.Join(s.dir, s.name)
	if err := os.Rename(path, seg); err != nil {
		return fmt.Errorf("cannot rotate %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("cannot rotate %s: %w", path, patherr.Strip(err, path))
	}
	s.f.Close()
	s.f, s.size = f, 0
	return nil
}

// eachLineOf calls fn with every complete line of the file at path.
func eachLineOf(path string, fn func(line []byte)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", path, patherr.Strip(err, path))
	}
	defer f.Close()
	return eachLine(f, path, fn)
}

// eachLine calls fn with every complete line read from in, the file path,
// however long: the files are the writer's own.
func eachLine(in io.Reader, path string, fn func(line []byte)) error {
	r := lines.NewReader(in, 4096, lines.Unbounded)
	for {
		line, f, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cannot read %s: %w", path, patherr.Strip(err, path))
		}
		if f&lines.Unterminated == 0 {
			fn(line)
		}
	}
}

func (s *stream) close() error { return s.f.Close() }

// segmentName is the name of the n-th rotated segment (from 1) of a stream.
func segmentName(name string, n int) string {
	base := strings.TrimSuffix(name, ".jsonl")
	return fmt.Sprintf("%s.%06d.jsonl", base, n)
}

// Segments returns the files of a stream in a session directory in chain
// order: the rotated segments, oldest first, then the active file when it
// exists.
func Segments(dir, name string) ([]string, error) {
	base := strings.TrimSuffix(name, ".jsonl")
	matches, err := filepath.Glob(filepath.Join(dir, base+".[0-9][0-9][0-9][0-9][0-9][0-9].jsonl"))
	if err != nil {
		return nil, err
	}
	slices.Sort(matches)
	active := filepath.Join(dir, name)
	if _, err := os.Stat(active); err == nil {
		matches = append(matches, active)
	}
	return matches, nil
}

// lastLine returns the last complete line of the first size bytes of f
// (without its newline; nil when there is none) and the offset just past
// it.
func lastLine(f *os.File, size int64) ([]byte, int64, error) {
	chunk := int64(64 << 10)
	var tail []byte // the bytes of f from off to size
	off := size
	end := int64(-1) // offset past the last newline, once found
	for {
		if end < 0 {
			if i := bytes.LastIndexByte(tail, '\n'); i >= 0 {
				end = off + int64(i) + 1
			}
		}
		if end >= 0 {
			nl := int(end - off - 1) // that newline's index in tail
			if j := bytes.LastIndexByte(tail[:nl], '\n'); j >= 0 {
				return slices.Clone(tail[j+1 : nl]), end, nil
			}
			if off == 0 {
				return slices.Clone(tail[:nl]), end, nil
			}
		} else if off == 0 {
			return nil, 0, nil
		}
		n := min(chunk, off)
		chunk *= 2 // a long line is read in a few reads, not many
		off -= n
		b := make([]byte, n, n+int64(len(tail)))
		if _, err := f.ReadAt(b, off); err != nil {
			return nil, 0, err
		}
		tail = append(b, tail...)
	}
}

func readLastLine(path string) ([]byte, error) {
	f, fi, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	last, _, err := lastLine(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("cannot read the end of %s: %w", path, err)
	}
	return last, nil
}
