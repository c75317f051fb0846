// Package importer reads Claude Code's transcripts into the envelopes
// hookwatch stores (hookwatch import): what the transcripts record that no
// hook reports — the token usage of every API response — and, for the
// stretches of a session no hook saw, its prompts and tool calls.
//
// A transcript line becomes a hook-shaped payload (event.TranscriptUsage,
// or the hook event the client would have fired; a fork's first record of
// its own also its SessionStart(fork), naming the session it was forked
// from as the hook does: Envelope.ForkOf) and goes through the
// same ingest pipeline as every hook payload: the subagent's sidecar is
// read, the privacy rules redact it, and it is wrapped in an envelope of
// kind event.KindTranscript. Its id is derived from the record, so that
// importing a record again makes the same envelope and the store keeps it
// once; the session model (package attribution) derives agents, tool calls
// and usage from those envelopes as from any other.
//
// The transcripts are read through package claudecode, their one reader.
// Import is resumable: the offset reached in each file is kept in a state
// file, and a second run reads only what was appended since.
package importer

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/internal/atomicfile"
	"github.com/hookwatch/hookwatch/internal/lockfile"
	"github.com/hookwatch/hookwatch/internal/patherr"
	"github.com/hookwatch/hookwatch/internal/regfile"
	"github.com/hookwatch/hookwatch/internal/treewalk"
)

// Options configure an import.
type Options struct {
	// Pipeline stamps the origin (host and user: lineage groups sessions
	// by them, so they must be those the hooks stamp) and applies the
	// privacy rules. Its Deliver is not used.
	Pipeline *ingest.Pipeline
	// Deliver takes each batch of envelopes; the batch's offsets are kept
	// only once it returns nil. Nil with DryRun. It is called on Run's
	// goroutine, one batch at a time, while workers make the next
	// batches: a session's batches in its files' order, the sessions one
	// after the other. The batch is Deliver's to keep.
	Deliver func(ctx context.Context, envs []event.Envelope) error
	// StatePath is the file that keeps each transcript's offset; "" reads
	// every file from its start and keeps nothing. A Run that delivers
	// holds StatePath's lock (StatePath + ".lock") from before it reads
	// the offsets until it has saved them: another such Run on the same
	// state, the collector following the transcripts or a second import,
	// would read the same records from the same offsets. It gets a
	// *BusyError instead of reading.
	StatePath string
	// Holder names this Run in the lock, for a Run that finds it held
	// (BusyError): "hookwatch import", "hookwatch serve".
	Holder string
	// DryRun reads (from the offsets StatePath keeps) and converts, but
	// delivers nothing and keeps no offset.
	DryRun bool
	// BatchSize is the most envelopes per Deliver call; 0 means 500.
	BatchSize int
	// Progress, when set, is called once each file is delivered, on Run's
	// goroutine.
	Progress func(Progress)
	// Known returns what is already stored of a session (captured by
	// hooks, or imported before), so that it is not sent twice; nil
	// knows nothing. It is asked once per session.
	Known func(ctx context.Context, sessionID string) (*Known, error)
	// FileError, when set, is told of a file that cannot be read (gone,
	// unreadable) on Run's goroutine, and Run goes on with the other
	// files; that file's offset is not kept, so that the next Run reads it
	// again. Nil ends the Run at such a file. A failed delivery ends the
	// Run either way.
	FileError func(path string, err error)
	// FileLost, when set, is told of the lines of a file this Run passed
	// over for what they held (Summary.Long and Unreadable, that file's),
	// on Run's goroutine; a file that lost none is not told of. Where
	// offsets are kept (StatePath, not DryRun) it is told once the
	// file's offset past them is saved, and not when the save fails: the
	// next Run reads those lines again, from the offsets kept before, and
	// tells of them then, so that each is told of once. Otherwise it is
	// told once the file is delivered.
	FileLost func(path string, long, unreadable int)
}

// Known is what the store already holds of one session, by the ids the
// hooks and the transcripts share: a record that matches is not imported
// again, and one the hooks saw only in part (a call without an outcome,
// an agent that never stopped) is completed.
type Known struct {
	// Calls maps a tool_use_id to whether the call has an outcome.
	Calls map[string]bool
	// Prompts are the prompt ids of the user's prompts.
	Prompts map[string]bool
	// Agents maps a subagent's id to whether it stopped.
	Agents map[string]bool
}

func newKnown() *Known {
	return &Known{Calls: map[string]bool{}, Prompts: map[string]bool{}, Agents: map[string]bool{}}
}

// Progress is how far an import has come.
type Progress struct {
	Files, FilesDone int
	// Bytes is what is left to read in all files at the start; BytesDone
	// what has been read.
	Bytes, BytesDone int64
	Started          time.Time
}

// Summary is what an import read and made.
type Summary struct {
	Files int `json:"files"`
	// Bytes are the bytes read (from each file's kept offset on).
	Bytes int64 `json:"bytes"`
	// Records are the transcript lines decoded; Skipped the lines passed
	// over (other record types, lines that are not JSON).
	Records int `json:"records"`
	Skipped int `json:"skipped"`
	// Long and Unreadable are the skipped lines that held what is lost:
	// above claudecode.MaxTranscriptLine, or not readable as a record
	// (claudecode.TranscriptStats).
	Long       int `json:"long,omitempty"`
	Unreadable int `json:"unreadable,omitempty"`
	// Stored counts the hook events the records stand for that Known
	// said were stored already (the hooks', an earlier import's): not
	// made again.
	Stored int `json:"stored"`
	// Envelopes counts the envelopes made (delivered unless DryRun), by
	// event name; Sessions are the sessions they belong to, sorted, and
	// SessionEvents counts them by session (all its files').
	Envelopes     map[string]int `json:"envelopes"`
	Sessions      []string       `json:"sessions"`
	SessionEvents map[string]int `json:"session_events"`
}

// Total returns the number of envelopes made.
func (s *Summary) Total() int {
	n := 0
	for _, c := range s.Envelopes {
		n += c
	}
	return n
}

// Find returns the transcript files under the given paths, each a file or
// a directory walked for *.jsonl files in the client's layout (see
// claudecode.ParseTranscriptPath), main transcripts before their
// subagents', in path order. A file named that is not in that layout is an
// error. The files' paths are absolute, whatever the paths given: they key
// the offsets kept (shared with the collector's follower, which names
// files by their absolute paths) and are the transcript_path of the
// envelopes made.
func Find(paths []string) ([]claudecode.TranscriptFile, error) {
	var out []claudecode.TranscriptFile
	seen := map[string]bool{}
	add := func(p string) {
		if f, ok := claudecode.ParseTranscriptPath(p); ok && !seen[f.Path] {
			seen[f.Path] = true
			out = append(out, f)
		}
	}
	for _, given := range paths {
		info, err := os.Stat(given)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", given, patherr.Strip(err, given))
		}
		root, err := filepath.Abs(given)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", given, err)
		}
		if !info.IsDir() {
			if _, ok := claudecode.ParseTranscriptPath(root); !ok {
				return nil, fmt.Errorf("%s is not a Claude Code transcript: <session id>.jsonl, or <session id>/subagents/agent-<id>.jsonl, in a project directory", given)
			}
			add(root)
			continue
		}
		// Walked through the directories that are symlinks, the root
		// (~/.claude kept in a dotfiles repository) or a project kept
		// elsewhere; the files keep their paths through the links, the
		// ones the client writes and its hooks carry.
		err = treewalk.Walk(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // an unreadable directory is passed over
			}
			if d.Type().IsRegular() && strings.HasSuffix(p, ".jsonl") {
				add(p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("cannot walk %s: %w", given, err)
		}
	}
	SortFiles(out)
	return out, nil
}

// ActiveSince returns the files of the sessions active at or after since:
// those one of whose files (its main transcript, a subagent's) was
// written then or later, every file of such a session kept, in files'
// order; and how many sessions it left out. A file that cannot be
// stat'ed is kept, for the import to say why it cannot read it.
func ActiveSince(files []claudecode.TranscriptFile, since time.Time) (kept []claudecode.TranscriptFile, left int) {
	active := map[string]bool{}
	for _, f := range files {
		if _, seen := active[f.SessionID]; !seen {
			active[f.SessionID] = false
		}
		if WrittenSince(f.Path, since) {
			active[f.SessionID] = true
		}
	}
	for _, f := range files {
		if active[f.SessionID] {
			kept = append(kept, f)
		}
	}
	for _, a := range active {
		if !a {
			left++
		}
	}
	return kept, left
}

// FilesSince returns the files written at or after since (WrittenSince),
// in files' order, and how many it left out: for files each of which is a
// session of its own (Codex rollouts), where ActiveSince is for a
// session's several transcripts.
func FilesSince(files []string, since time.Time) (kept []string, left int) {
	for _, f := range files {
		if WrittenSince(f, since) {
			kept = append(kept, f)
		} else {
			left++
		}
	}
	return kept, left
}

// WrittenSince reports whether the file at path was written at or after
// since (its modification time): what --since means by active. A file that
// cannot be stat'ed counts as written, to be kept for the import to say why
// it cannot read it.
func WrittenSince(path string, since time.Time) bool {
	info, err := os.Stat(path)
	return err != nil || !info.ModTime().Before(since)
}

// SortFiles puts transcript files in the order Find returns them: by
// session (its main transcript's path), a main transcript before its
// subagents', in path order.
func SortFiles(files []claudecode.TranscriptFile) {
	sort.SliceStable(files, func(i, j int) bool {
		a, b := files[i], files[j]
		if a.MainPath != b.MainPath {
			return a.MainPath < b.MainPath
		}
		if (a.AgentID == "") != (b.AgentID == "") {
			return a.AgentID == ""
		}
		return a.Path < b.Path
	})
}

// saveEvery is how often Run saves the state file while it imports.
const saveEvery = time.Second

// fileState is what the state file keeps of one transcript.
type fileState struct {
	// Offset is the end of the last line imported.
	Offset int64 `json:"offset"`
	// Prompt is the prompt id in force at Offset: assistant records carry
	// none, they belong to the latest user record's.
	Prompt string `json:"prompt,omitempty"`
	// Open maps the tool_use_id of a call whose result is not read yet
	// to its tool name, which the result record lacks.
	Open map[string]string `json:"open,omitempty"`
	// PastCopies says a message record of the file's own was read: the
	// copies of its parent's records a fork's transcript starts with (the
	// client writes them one by one, so a file followed as it grows can
	// be read in the middle of them) are all behind Offset.
	PastCopies bool `json:"past_copies,omitempty"`
	// Sent is the response whose usage was sent at the end of the read
	// that reached Offset: its later records, read on from Offset, are
	// not sent again when they repeat what was sent (sentUsage).
	Sent *sentUsage `json:"sent,omitempty"`
}

// sentUsage is the usage of a response (a message id) as sent at the end
// of a read. The client writes a response as one record per content
// block, each repeating the response's usage; a read that ends between
// two of them (a transcript followed as it grows) sends the usage of the
// last record it read, since no later read may come (the file's last
// response stays last). The records read on from there are sent again
// only when their figures differ from these (grown): the session model
// keeps the largest figure of each kind of a response, however many
// records show it, so the totals are those of the whole file, and the
// store keeps a response's usage once per figure read rather than once
// per read that ended inside it.
type sentUsage struct {
	MessageID string      `json:"message_id"`
	Usage     event.Usage `json:"usage"`
}

// state is the state file: offsets by transcript path, and by Codex
// rollout path those the collector following the rollouts reached.
type state struct {
	Files map[string]fileState `json:"files"`
	// Rollouts are how far the collector following the rollouts and
	// hookwatch import --codex (RolloutState) read and stored each one,
	// one set for both: a rollout's reader state is rebuilt from the file
	// itself (rollout.ResumeTail).
	Rollouts map[string]int64 `json:"rollouts,omitempty"`
	// Pruned is when the entries of files gone were last dropped (prune).
	Pruned time.Time `json:"pruned,omitzero"`
}

// pruneEvery is how often a save drops the entries of the files that are
// gone: Claude Code deletes its transcripts after cleanupPeriodDays (30 by
// default), and a state that kept every file ever read would grow without
// bound, read whole by every look of the collector's followers.
const pruneEvery = 24 * time.Hour

// prune drops the entries of files that no longer exist, once per
// pruneEvery: a stat of every file the state names. A file gone for a
// moment (renamed back later) is read again from its start, and what it
// holds stored once (the envelopes' ids).
func (st *state) prune(now time.Time) {
	if now.Sub(st.Pruned) < pruneEvery {
		return
	}
	gone := func(path string) bool {
		_, err := os.Lstat(path)
		return errors.Is(err, fs.ErrNotExist)
	}
	for p := range st.Files {
		if gone(p) {
			delete(st.Files, p)
		}
	}
	for p := range st.Rollouts {
		if gone(p) {
			delete(st.Rollouts, p)
		}
	}
	st.Pruned = now
}

// StateFile is the import state's name in the home: the offsets an import,
// and the collector following the transcripts and rollouts, read to.
const StateFile = "import-state.json"

func loadState(path string) (*state, error) {
	st := &state{Files: map[string]fileState{}}
	if path == "" {
		return st, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read import state: %w", err)
	}
	if err := json.Unmarshal(b, st); err != nil {
		// Nothing is lost without it: a record read again is stored once.
		return nil, fmt.Errorf("cannot parse import state %s: %w; remove it to read the transcripts again from their start (what was imported is not stored twice)", path, err)
	}
	if st.Files == nil {
		st.Files = map[string]fileState{}
	}
	return st, nil
}

// Offsets returns the offset the state file at path keeps for each
// transcript, by path: how far an import, or the collector following the
// transcripts, read it. None when the file does not exist. It takes no
// lock: the state is replaced whole (a rename), so it reads one saved
// state or the next.
func Offsets(path string) (map[string]int64, error) {
	st, err := loadState(path)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(st.Files))
	for p, fs := range st.Files {
		out[p] = fs.Offset
	}
	return out, nil
}

// RolloutOffsets returns the offset the state file at path keeps for each
// Codex rollout, by path: how far the collector following the rollouts
// read it and stored what it held. None when the file does not exist.
// Like Offsets, it takes no lock.
func RolloutOffsets(path string) (map[string]int64, error) {
	st, err := loadState(path)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(st.Rollouts))
	for p, off := range st.Rollouts {
		out[p] = off
	}
	return out, nil
}

// RolloutState is the rollout offsets of the state file, read once and
// held by a reader of rollouts for as long as it reads them (hookwatch
// import --codex, and each look of the collector following the rollouts):
// one set of offsets for both, so that what one read the other does not
// read again.
type RolloutState struct {
	path  string
	lock  *lockfile.Lock // nil: read only
	st    *state
	saved time.Time
	dirty bool
}

// HoldRollouts reads the rollout offsets the state file at path keeps.
// Unless readOnly, it first takes the state's lock, naming holder, and
// holds it until Release, as a Run does: no other Run or RolloutState
// reads and moves the offsets meanwhile; one holding
// it already makes HoldRollouts return a *BusyError. A readOnly state (a
// dry run) takes no lock and keeps nothing.
func HoldRollouts(path, holder string, readOnly bool) (*RolloutState, error) {
	h := &RolloutState{path: path, saved: time.Now()}
	if !readOnly && path != "" {
		lock, err := lockState(path, holder)
		if err != nil {
			return nil, err
		}
		h.lock = lock
	}
	st, err := loadState(path)
	if err != nil {
		if h.lock != nil {
			h.lock.Release()
		}
		return nil, err
	}
	if st.Rollouts == nil {
		st.Rollouts = map[string]int64{}
	}
	h.st = st
	return h, nil
}

// Offset returns the offset kept for the rollout at path: how far its
// records were read and stored (0 when none is kept). It is where a Tail
// of the rollout reached, to be checked against the file as it is now
// (rollout.ReadOn): it may have shrunk or been replaced since.
func (h *RolloutState) Offset(path string) int64 { return h.st.Rollouts[path] }

// Set records off as the rollout at path's offset: call it once what was
// read up to off is stored. Set saves the state when it was last saved
// saveEvery ago or more, so that an import cut short by a crash reads
// little again; a readOnly state keeps nothing.
func (h *RolloutState) Set(path string, off int64) error {
	if h.lock == nil {
		return nil
	}
	h.st.Rollouts[path] = off
	h.dirty = true
	if time.Since(h.saved) >= saveEvery {
		return h.save()
	}
	return nil
}

func (h *RolloutState) save() error {
	h.saved, h.dirty = time.Now(), false
	return h.st.save(h.path)
}

// Release saves the offsets Set since the last save and releases the
// lock; the error is the save's. Once released the state is not to be
// used.
func (h *RolloutState) Release() error {
	if h.lock == nil {
		return nil
	}
	var err error
	if h.dirty {
		err = h.save()
	}
	if rerr := h.lock.Release(); err == nil && rerr != nil {
		err = fmt.Errorf("cannot unlock the import state: %w", rerr)
	}
	h.lock = nil
	return err
}

// save writes the state file atomically (a rename), 0600: the paths name
// the user's projects; it drops the entries of files gone (prune).
func (st *state) save(path string) error {
	if path == "" {
		return nil
	}
	st.prune(time.Now())
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("cannot save import state: %w", err)
	}
	// Two imports into one home at once cannot rename each other's
	// temporary file away (atomicfile.Write): the last one's state wins,
	// and what the other read is read again and deduplicated by id.
	if err := atomicfile.Write(path, b, atomicfile.Options{}); err != nil {
		return fmt.Errorf("cannot save import state: %w", err)
	}
	return nil
}

// Run imports the transcript files. A file shorter than its kept offset
// (rewritten since) is read again from its start. The offsets reached are
// saved at most every saveEvery, and when Run returns.
func Run(ctx context.Context, files []claudecode.TranscriptFile, opt Options) (sum Summary, err error) {
	sum = Summary{Envelopes: map[string]int{}, SessionEvents: map[string]int{}}
	if opt.StatePath != "" && !opt.DryRun {
		lock, err := lockState(opt.StatePath, opt.Holder)
		if err != nil {
			return sum, err
		}
		defer lock.Release()
	}
	st, err := loadState(opt.StatePath)
	if err != nil {
		return sum, err
	}
	prog := Progress{Files: len(files), Started: time.Now()}
	sizes := make([]int64, len(files))
	for i, f := range files {
		if info, err := os.Stat(f.Path); err == nil {
			sizes[i] = info.Size()
			if off := st.Files[f.Path].Offset; off <= sizes[i] {
				prog.Bytes += sizes[i] - off
			} else {
				prog.Bytes += sizes[i]
			}
		}
	}
	batch := max(opt.BatchSize, 0)
	if batch == 0 {
		batch = 500
	}
	kept := make([]fileState, len(files)) // read before the deliveries write st
	for i, f := range files {
		kept[i] = st.Files[f.Path]
	}
	// The files of a session are converted in order, by one worker; the
	// sessions are converted by as many workers as there are CPUs, and
	// their batches delivered on this goroutine, a session after the
	// other, while the next are made, so that the import's work and the
	// collector's overlap. A file's offset is kept (and the summary and
	// the progress counted) here once the file's last batch is delivered:
	// st, sum and prog are not the workers'. The
	// state holds every file's offset: written after each file, a tree of
	// thousands of files would write it thousands of times (quadratic), so
	// it is saved at most every saveEvery and at the end. What is read
	// after the last save is read again by a run that follows a crash,
	// and deduplicated by the envelopes' ids.
	saved, dirty := time.Now(), false
	// lost are the FileLost reports of the files delivered since the
	// last save, told once their offsets are saved.
	type lostLines struct {
		path             string
		long, unreadable int
	}
	var lost []lostLines
	keeps := opt.StatePath != "" && !opt.DryRun
	save := func() error {
		saved, dirty = time.Now(), false
		pending := lost
		lost = nil
		if err := st.save(opt.StatePath); err != nil {
			return err
		}
		for _, l := range pending {
			opt.FileLost(l.path, l.long, l.unreadable)
		}
		return nil
	}
	sessions := map[string]bool{}
	d := newDeliverer(ctx, opt)
	defer func() {
		// The files imported before an error or a cancellation are kept.
		if dirty {
			if serr := save(); err == nil {
				err = serr
			}
		}
		for s := range sessions {
			sum.Sessions = append(sum.Sessions, s)
		}
		slices.Sort(sum.Sessions)
	}()
	convert := func(j *job) error {
		k, stored := newKnown(), newKnown()
		if opt.Known != nil {
			var err error
			if k, err = opt.Known(ctx, files[j.files[0]].SessionID); err != nil {
				return fmt.Errorf("cannot read what is stored of session %s: %w", files[j.files[0]].SessionID, err)
			}
			// k grows with what this run makes; stored stays what the
			// store held, to count what is not sent again for it.
			stored = &Known{Calls: maps.Clone(k.Calls), Prompts: maps.Clone(k.Prompts), Agents: maps.Clone(k.Agents)}
		}
		for _, i := range j.files {
			if err := ctx.Err(); err != nil {
				return err
			}
			f := files[i]
			fs := kept[i]
			if fs.Offset > sizes[i] {
				fs = fileState{}
			}
			var fsum Summary // this file's, counted once it is delivered
			c := &converter{file: f, prompt: fs.Prompt, open: fs.Open, started: fs.Offset > 0, pastCopies: fs.PastCopies, sent: fs.Sent, known: k, stored: stored, pl: opt.Pipeline, counts: map[string]int{}}
			if f.AgentID == "" && !fs.PastCopies {
				c.fork, c.copied = forkCopies(f)
			}
			if f.AgentID != "" {
				c.meta = ingest.ReadSubagentMeta(&event.Payload{Common: event.Common{TranscriptPath: f.MainPath, SessionID: f.SessionID, AgentID: f.AgentID}})
			}
			n, read, err := c.readFrom(fs.Offset, func(envs []event.Envelope) error {
				return d.send(j, delivery{envs: envs, path: f.Path})
			}, batch, &fsum)
			if err != nil {
				if errors.Is(err, errDelivery) {
					return err
				}
				err = fmt.Errorf("cannot import %s: %w", f.Path, err)
				if opt.FileError == nil || ctx.Err() != nil {
					return err
				}
				path := f.Path
				if err := d.send(j, delivery{path: path, after: func() error { opt.FileError(path, err); return nil }}); err != nil {
					return err
				}
				continue
			}
			done := fileState{Offset: n, Prompt: c.prompt, Open: c.open, PastCopies: c.pastCopies, Sent: c.sent}
			err = d.send(j, delivery{path: f.Path, after: func() error {
				sum.Files++
				sum.Bytes += read
				sum.Records += fsum.Records
				sum.Skipped += fsum.Skipped
				sum.Long += fsum.Long
				sum.Unreadable += fsum.Unreadable
				if opt.FileLost != nil && fsum.Long+fsum.Unreadable > 0 {
					if keeps {
						lost = append(lost, lostLines{f.Path, fsum.Long, fsum.Unreadable})
					} else {
						opt.FileLost(f.Path, fsum.Long, fsum.Unreadable)
					}
				}
				sum.Stored += c.storedSkips
				for name, n := range c.counts {
					sum.Envelopes[name] += n
					sum.SessionEvents[f.SessionID] += n
				}
				for _, s := range c.sessions {
					sessions[s] = true
				}
				prog.FilesDone++
				prog.BytesDone += read
				if !opt.DryRun {
					st.Files[f.Path] = done
					dirty = true
					if time.Since(saved) >= saveEvery {
						if err := save(); err != nil {
							return err
						}
					}
				}
				if opt.Progress != nil {
					opt.Progress(prog)
				}
				return nil
			}})
			if err != nil {
				return err
			}
		}
		return nil
	}
	err = d.run(ctx, sessionJobs(files), convert)
	return sum, err
}

// sessionJobs groups files by session, each session's in Find's order (its
// main transcript, then its subagents'), the sessions in the order of their
// first file.
func sessionJobs(files []claudecode.TranscriptFile) []*job {
	var jobs []*job
	bySession := map[string]*job{}
	for i, f := range files {
		j := bySession[f.SessionID]
		if j == nil {
			j = &job{}
			bySession[f.SessionID] = j
			jobs = append(jobs, j)
		}
		j.files = append(j.files, i)
	}
	return jobs
}

// errDelivery stands for the delivery's error, which Run returns instead.
var errDelivery = errors.New("a delivery failed")

// ErrBusy is in Run's error when another Run holds the state file's lock.
var ErrBusy = errors.New("another run is reading the transcripts")

// BusyError is Run's error when another Run delivering from the same
// state file is under way: Holder is what it wrote in the lock (its
// Options.Holder and process id), "" when that could not be read.
type BusyError struct{ Holder string }

func (e *BusyError) Error() string {
	if e.Holder == "" {
		return ErrBusy.Error()
	}
	return ErrBusy.Error() + ": " + e.Holder
}

func (e *BusyError) Unwrap() error { return ErrBusy }

// lockState takes the lock of the state file at path, naming holder and
// this process in it.
func lockState(path, holder string) (*lockfile.Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("cannot lock the import state: %w", err)
	}
	l, err := lockfile.Take(path+".lock", fmt.Appendf(nil, "%s (pid %d)", cmp.Or(holder, "an import"), os.Getpid()))
	var held *lockfile.HeldError
	switch {
	case errors.As(err, &held):
		return nil, &BusyError{Holder: strings.TrimSpace(string(held.Desc))}
	case err != nil:
		return nil, fmt.Errorf("cannot lock the import state: %w", err)
	}
	return l, nil
}

// delivery is one batch to deliver (none: only after), and what to do once
// it is delivered.
type delivery struct {
	envs  []event.Envelope
	path  string // the file the batch is made of
	after func() error
}

// job is the files of one session (indices in Run's files), converted in
// order by one worker.
type job struct {
	files []int
	out   chan delivery // closed when the job ends
	err   error         // why it ended early, read once out is closed
}

// deliverer converts jobs on workers and runs Options.Deliver and each
// delivery's after on a goroutine of its own, in the jobs' order.
type deliverer struct {
	opt    Options
	ctx    context.Context
	failed chan struct{} // closed when err is set
	err    error
}

func newDeliverer(ctx context.Context, opt Options) *deliverer {
	return &deliverer{ctx: ctx, opt: opt, failed: make(chan struct{})}
}

// send queues it from j's worker; it fails with errDelivery once a
// delivery has failed.
func (d *deliverer) send(j *job, it delivery) error {
	select {
	case j.out <- it:
		return nil
	case <-d.failed:
		return errDelivery
	}
}

func (d *deliverer) fail(err error) {
	if d.err == nil {
		d.err = err
		close(d.failed)
	}
}

// run converts the jobs with convert, as many at once as there are CPUs,
// delivers what they make in their order, and returns the first error.
// At most one job per worker and a few batches of each are held.
func (d *deliverer) run(ctx context.Context, jobs []*job, convert func(*job) error) error {
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	work := make(chan *job)
	ordered := make(chan *job, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				j.err = convert(j)
				close(j.out)
			}
		}()
	}
	go func() {
		defer close(work)
		defer close(ordered)
		for _, j := range jobs {
			j.out = make(chan delivery, 2)
			select {
			case ordered <- j:
			case <-d.failed:
				return
			}
			work <- j
		}
	}()
	for j := range ordered {
		for it := range j.out {
			if d.err != nil {
				continue // drained: the worker stops at failed
			}
			var err error
			if len(it.envs) > 0 && !d.opt.DryRun && d.opt.Deliver != nil {
				if err = d.opt.Deliver(ctx, it.envs); err != nil {
					err = fmt.Errorf("cannot import %s: %w", it.path, err)
				}
			}
			if err == nil && it.after != nil {
				err = it.after()
			}
			if err != nil {
				d.fail(err)
			}
		}
		if j.err != nil && !errors.Is(j.err, errDelivery) {
			d.fail(j.err)
		}
	}
	wg.Wait()
	return d.err
}

// converter turns the records of one transcript file into envelopes.
type converter struct {
	file  claudecode.TranscriptFile
	pl    *ingest.Pipeline
	meta  *event.SubagentMeta // a subagent's sidecar
	known *Known
	// stored is what Known said the store held before this run;
	// storedSkips counts the hook events not made because of it.
	stored      *Known
	storedSkips int
	skipped     map[string]bool   // what storedSkips counts, by key: once each
	prompt      string            // the prompt id in force
	open        map[string]string // calls without a result: tool name by id
	started     bool              // the file was read before: its agent started
	copied      map[string]bool   // uuids of a fork's records copied from its parent
	fork        claudecode.Fork   // what a fork's transcript proves of its fork
	// pastCopies: a record of the file's own was read (fileState.PastCopies).
	pastCopies bool
	pending    []event.Envelope
	sessions   []string
	counts     map[string]int // envelopes made, by event name
	// usage is the latest record of the response being read, sent when
	// the next response starts or the read ends; usagePrompt the prompt
	// id in force at it.
	usage       *claudecode.TranscriptRecord
	usagePrompt string
	// sent is the response whose usage a read that ended inside it sent
	// (fileState.Sent), until another response's is sent.
	sent *sentUsage
}

// readFrom reads the file from offset, handing envelopes to deliver in
// batches; it returns the offset reached and the bytes read.
func (c *converter) readFrom(offset int64, deliver func([]event.Envelope) error, batch int, sum *Summary) (int64, int64, error) {
	f, _, err := regfile.Open(c.file.Path)
	if err != nil {
		return offset, 0, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return offset, 0, err
	}
	flush := func() error {
		if len(c.pending) == 0 {
			return nil
		}
		if err := deliver(c.pending); err != nil {
			return err
		}
		c.pending = nil // the batch is the deliverer's now
		return nil
	}
	// Offsets are kept per file, after its last batch: a failed delivery
	// leaves the whole file to read again, which the envelope ids make
	// harmless.
	n, tst, err := claudecode.ReadTranscript(f, func(rec *claudecode.TranscriptRecord) error {
		envs, err := c.convert(rec)
		if err != nil {
			return err
		}
		c.pending = append(c.pending, envs...)
		if len(c.pending) >= batch {
			return flush()
		}
		return nil
	})
	sum.Records += tst.Records
	sum.Skipped += tst.Skipped
	sum.Long += tst.Long
	sum.Unreadable += tst.Unreadable
	if err != nil {
		return offset, n, err
	}
	if c.usage != nil {
		rec := c.usage
		envs, err := c.usageEnvelope()
		if err != nil {
			return offset, n, err
		}
		c.pending = append(c.pending, envs...)
		if rec.Message.ID != "" {
			c.sent = &sentUsage{MessageID: rec.Message.ID, Usage: *rec.Message.Usage}
		}
	}
	if err := flush(); err != nil {
		return offset, n, err
	}
	return offset + n, n, nil
}

// convert returns the envelopes one record makes: the hook events the
// client fired for it, less what the store already has (Known), and its
// usage.
func (c *converter) convert(rec *claudecode.TranscriptRecord) ([]event.Envelope, error) {
	var out []event.Envelope
	if rec.UUID != "" && !c.pastCopies {
		if c.copied[rec.UUID] {
			return nil, nil // the parent's record, imported with the parent
		}
		c.pastCopies = true
		if c.fork.Parent != "" {
			env, err := c.forkStart(rec)
			if err != nil {
				return nil, err
			}
			out = append(out, env)
		}
	}
	if rec.Type == "user" && rec.PromptID != "" {
		c.prompt = rec.PromptID
	}
	emit := func(p map[string]any, key string) error {
		env, err := c.wrap(p, rec, key)
		if err == nil {
			out = append(out, env)
			c.counts[p["hook_event_name"].(string)]++
		}
		return err
	}
	if c.file.AgentID != "" && !c.started {
		c.started = true
		if _, ok := c.known.Agents[c.file.AgentID]; !ok {
			c.known.Agents[c.file.AgentID] = false
			if err := emit(c.common(rec, event.SubagentStart), "start"); err != nil {
				return nil, err
			}
		} else if _, ok := c.stored.Agents[c.file.AgentID]; ok {
			c.storedSkips++
		}
	}
	text, isPrompt := rec.Prompt()
	isPrompt = isPrompt && c.file.AgentID == "" && rec.PromptID != "" && !clientText(text)
	if isPrompt && c.stored.Prompts[rec.PromptID] && !c.counted("prompt:"+rec.PromptID) {
		c.storedSkips++
	}
	if isPrompt && !c.known.Prompts[rec.PromptID] {
		c.known.Prompts[rec.PromptID] = true
		p := c.common(rec, event.UserPromptSubmit)
		p["prompt"] = text
		if rec.PermissionMode != "" {
			p["permission_mode"] = rec.PermissionMode
		}
		if err := emit(p, "prompt:"+rec.PromptID); err != nil {
			return nil, err
		}
	}
	blocks := rec.Blocks()
	// A turn ends with the model's answer, or with the record the client
	// wrote for a request that failed (its stop_reason is no end_turn).
	final := rec.Type == "assistant" && (rec.Message.StopReason == "end_turn" || rec.APIError())
	for _, b := range blocks {
		switch {
		case rec.Type == "assistant" && b.Type == "tool_use" && b.ID != "":
			final = false
			if c.open == nil {
				c.open = map[string]string{}
			}
			c.open[b.ID] = b.Name
			if _, ok := c.known.Calls[b.ID]; ok {
				if _, ok := c.stored.Calls[b.ID]; ok && !c.counted("pre:"+b.ID) {
					c.storedSkips++
				}
				continue
			}
			c.known.Calls[b.ID] = false
			p := c.common(rec, event.PreToolUse)
			p["tool_name"], p["tool_input"], p["tool_use_id"] = b.Name, json.RawMessage(orNull(b.Input)), b.ID
			if err := emit(p, "pre:"+b.ID); err != nil {
				return nil, err
			}
		case rec.Type == "user" && b.Type == "tool_result" && b.ToolUseID != "":
			name, ok := c.open[b.ToolUseID]
			delete(c.open, b.ToolUseID)
			if done := c.known.Calls[b.ToolUseID]; done || !ok {
				if ok && c.stored.Calls[b.ToolUseID] && !c.counted("post:"+b.ToolUseID) {
					c.storedSkips++
				}
				continue // stored with its outcome, or its call is not in this file
			}
			c.known.Calls[b.ToolUseID] = true
			var p map[string]any
			if b.IsError {
				p = c.common(rec, event.PostToolUseFailure)
				p["error"] = resultText(b.Content)
			} else {
				p = c.common(rec, event.PostToolUse)
				resp := rec.ToolUseResult
				if len(blocks) > 1 || len(resp) == 0 {
					resp = b.Content // one record, several results: the result's own text
				}
				p["tool_response"] = captured(orNull(resp), c.pl.Privacy)
			}
			p["tool_name"], p["tool_use_id"] = name, b.ToolUseID
			if err := emit(p, "post:"+b.ToolUseID); err != nil {
				return nil, err
			}
		}
	}
	if final && c.file.AgentID != "" && c.stored.Agents[c.file.AgentID] && !c.counted("stop") {
		c.storedSkips++
	}
	if final && c.file.AgentID != "" && !c.known.Agents[c.file.AgentID] {
		// The subagent's last answer: it stops here. One the client wrote
		// for a model request that failed is the StopFailure its hook got
		// (the client sends no SubagentStop then), of the record's error.
		c.known.Agents[c.file.AgentID] = true
		var p map[string]any
		if rec.APIError() {
			p = c.common(rec, event.StopFailure)
			p["error"] = cmp.Or(rec.ErrorKind(), event.UnknownFailure)
		} else {
			p = c.common(rec, event.SubagentStop)
			p["agent_transcript_path"] = c.file.Path
			p["stop_hook_active"] = false
		}
		p["last_assistant_message"] = blocksText(blocks)
		if err := emit(p, "stop:"+rec.UUID); err != nil {
			return nil, err
		}
	}
	if rec.Type == "assistant" && rec.Message.Usage != nil && !rec.Synthetic() {
		// A record the client wrote itself (an API error) is no response:
		// its usage of zeros is no request's, and its model none.
		// The records of one response follow each other, each repeating
		// its usage as it grows: only the last of them a read reaches is
		// sent, and not again by a later read when it repeats what an
		// earlier read ending inside the response sent (sentUsage).
		if c.usage != nil && (c.usage.Message.ID != rec.Message.ID || rec.Message.ID == "") {
			envs, err := c.usageEnvelope()
			if err != nil {
				return nil, err
			}
			out = append(out, envs...)
		}
		c.usage, c.usagePrompt = rec, c.prompt
	}
	if len(out) > 0 && !slices.Contains(c.sessions, c.file.SessionID) {
		c.sessions = append(c.sessions, c.file.SessionID)
	}
	return out, nil
}

// counted reports whether key (the hook event a record stands for) is
// counted in storedSkips already, and marks it counted: a record the
// client wrote twice is one event the store held.
func (c *converter) counted(key string) bool {
	if c.skipped[key] {
		return true
	}
	if c.skipped == nil {
		c.skipped = map[string]bool{}
	}
	c.skipped[key] = true
	return false
}

// forkCopies returns, for a forked session's main transcript, its fork
// (claudecode.ReadFork) and the uuids of the records it copied from its
// parent: they are the parent's prompts, calls and responses, not the
// fork's. The zero Fork and nil for a transcript that is not a fork's.
func forkCopies(f claudecode.TranscriptFile) (claudecode.Fork, map[string]bool) {
	fork := claudecode.ReadFork(f.Path, f.SessionID)
	if fork.Parent == "" {
		return fork, nil
	}
	pf, _, err := regfile.Open(claudecode.SessionTranscript(f.Path, fork.Parent))
	if err != nil {
		return fork, nil
	}
	defer pf.Close()
	uuids := map[string]bool{}
	claudecode.ReadTranscript(pf, func(rec *claudecode.TranscriptRecord) error {
		if rec.UUID != "" {
			uuids[rec.UUID] = true
		}
		return nil
	})
	return fork, uuids
}

// forkStart makes, for a fork's transcript, the SessionStart its hook
// sends (source fork), at the time the fork started, with the session it
// was forked from as the hook reads it from the same transcript
// (Envelope.ForkOf, claudecode.ReadFork): what links a fork no hook saw
// to its parent, as its hook's links it. rec is the fork's first record
// of its own, which follows the copies of its parent's: the fork's cwd.
func (c *converter) forkStart(rec *claudecode.TranscriptRecord) (event.Envelope, error) {
	p := c.common(rec, event.SessionStart)
	delete(p, "prompt_id") // the hook's carries none
	p["source"] = "fork"
	env, err := c.wrapAt(p, c.fork.Started, "fork")
	if err != nil {
		return env, err
	}
	env.ForkOf = c.fork.Parent
	c.counts[event.SessionStart]++
	return env, nil
}

// usageEnvelope makes the TranscriptUsage envelope of the held usage
// record, and forgets it: none when the record repeats the usage an
// earlier read sent of its response (c.sent).
func (c *converter) usageEnvelope() ([]event.Envelope, error) {
	rec := c.usage
	if s := c.sent; s != nil && s.MessageID == rec.Message.ID && s.Usage == *rec.Message.Usage {
		c.usage = nil
		return nil, nil
	}
	c.sent = nil
	prompt := c.prompt
	c.prompt = c.usagePrompt
	p := c.common(rec, event.TranscriptUsage)
	c.prompt = prompt
	p["model"] = rec.Message.Model
	p["uuid"] = rec.UUID
	p["message_id"] = rec.Message.ID
	p["request_id"] = rec.RequestID
	p["usage"] = rec.Message.Usage
	c.usage = nil
	env, err := c.wrap(p, rec, "usage:"+rec.UUID)
	if err != nil {
		return nil, err
	}
	c.counts[event.TranscriptUsage]++
	return []event.Envelope{env}, nil
}

// clientText reports whether a user record's text is the client's own (a
// slash command's echo, a local command's output), for which no
// UserPromptSubmit fires.
func clientText(s string) bool {
	return strings.HasPrefix(s, "<command-") || strings.HasPrefix(s, "<local-command-")
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// resultText returns a tool result's content as text: the string, or the
// text blocks joined.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bs []claudecode.TranscriptBlock
	json.Unmarshal(raw, &bs)
	return blocksText(bs)
}

// blocksText joins the text blocks.
func blocksText(bs []claudecode.TranscriptBlock) string {
	var parts []string
	for _, b := range bs {
		if b.Type == "text" && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// common returns the fields every payload made from rec carries, as the
// hooks would send them: the session, the agent, the main transcript path
// (hook events of subagents carry the parent's too), cwd and prompt id.
func (c *converter) common(rec *claudecode.TranscriptRecord, name string) map[string]any {
	p := map[string]any{
		"hook_event_name": name,
		"session_id":      c.file.SessionID,
		"transcript_path": c.file.MainPath,
		"cwd":             rec.CWD,
	}
	if c.file.AgentID != "" {
		p["agent_id"] = c.file.AgentID
		if c.meta != nil {
			p["agent_type"] = c.meta.AgentType
		}
	}
	if c.prompt != "" {
		p["prompt_id"] = c.prompt
	}
	return p
}

// wrap makes the envelope of payload p, made from rec: through the
// pipeline (sidecar, privacy), at the record's time, with an id derived
// from the session, the agent and key.
func (c *converter) wrap(p map[string]any, rec *claudecode.TranscriptRecord, key string) (event.Envelope, error) {
	return c.wrapAt(p, rec.Time(), key)
}

// wrapAt is wrap for a payload made at time at (zero: none known).
func (c *converter) wrapAt(p map[string]any, at time.Time, key string) (event.Envelope, error) {
	data, err := marshalPayload(p)
	if err != nil {
		return event.Envelope{}, err
	}
	if at.IsZero() {
		at = time.Unix(0, 0)
	}
	out, err := c.pl.RunRecorded(context.Background(), data, RecordID(at, c.file.SessionID+"\x00"+c.file.AgentID+"\x00"+key), at.UTC(), c.meta)
	if err != nil {
		return event.Envelope{}, err
	}
	return *out.Envelope, nil
}

// RecordID returns the envelope id of an imported record: shaped like the
// hooks' UUIDv7 ids (the time's milliseconds first, so that ids sort by
// time), with the rest taken from a hash of key, so that the same record
// always gets the same id. The version nibble is 8 (RFC 9562's custom
// layout), which tells an imported record's id from a hook's.
func RecordID(at time.Time, key string) string {
	h := sha256.Sum256([]byte(key))
	var u [16]byte
	ms := uint64(at.UnixMilli())
	for i := range 6 {
		u[i] = byte(ms >> (40 - 8*i))
	}
	copy(u[6:], h[:10])
	u[6] = 0x80 | u[6]&0x0f
	u[8] = 0x80 | u[8]&0x3f
	return event.UUIDString(u)
}
