package collector

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/ingest"
)

// Defaults of TranscriptOptions.
const (
	// DefaultTranscriptInterval is how often the collector looks for what
	// Claude Code appended to its transcripts: a look stats each
	// transcript file of the projects directory.
	DefaultTranscriptInterval = 2 * time.Second
	// DefaultTranscriptSince is how far back, from the collector's start,
	// a transcript must have been written to be read at all: older
	// sessions are `hookwatch import`'s, unless they go on.
	DefaultTranscriptSince = 24 * time.Hour
)

// TranscriptOptions makes the collector follow Claude Code's transcripts
// on this machine as they grow (FollowTranscripts), for what only they
// carry: the token usage of every API response, per agent and turn, and
// the prompts, calls and subagents no hook reported (hooks not installed
// yet, or a hook that failed). The records are read by `hookwatch
// import`'s reader (package importer) into envelopes of kind
// event.KindTranscript; the session model merges them with the hooks'
// events (a call by tool_use_id, a prompt by prompt id, a subagent by
// agent id), so that what both report is counted once, whichever arrives
// first.
type TranscriptOptions struct {
	// Dir is Claude Code's projects directory
	// ($CLAUDE_CONFIG_DIR/projects); "" follows nothing. It need not
	// exist yet.
	Dir string
	// StatePath is the import state file (hookwatch import's,
	// $HOOKWATCH_HOME/import-state.json): the offset reached in each
	// transcript, so that neither a restarted collector nor a later
	// import reads a record again. Start sets it to the one in its Home;
	// "" follows nothing.
	StatePath string
	// Host and User are the envelopes' origin: the hooks' on this
	// machine (ingest.LocalOrigin), so that the records join their
	// sessions.
	Host, User string
	// Interval is the wait between two looks (default
	// DefaultTranscriptInterval).
	Interval time.Duration
	// Since is how far back a transcript must have been written, from the
	// first look, to be read (default DefaultTranscriptSince), unless
	// StatePath keeps an offset for it short of its end: the collector
	// was following it when it stopped, and the session went on.
	Since time.Duration
}

// FollowTranscripts follows the transcripts under o.Dir until ctx ends (a
// follower): at each look, each main or subagent transcript that grew is
// imported from the offset the state file keeps for it, and what it gained
// is stored; a transcript the state file says was read part way is read
// on at the first look, however long ago it was written. A line still
// being written waits for the next look; a line above
// claudecode.MaxTranscriptLine is passed over, as is one not
// readable as a record: both are counted on /metrics, and the transcript
// named in a warning with the count of its read. A record read twice (a
// state file lost, or written by a concurrent import) is stored once: an
// envelope's id is derived from the record.
func (s *Server) FollowTranscripts(ctx context.Context, o TranscriptOptions) {
	if o.Dir == "" || o.StatePath == "" {
		return
	}
	if o.Interval <= 0 {
		o.Interval = DefaultTranscriptInterval
	}
	if o.Since <= 0 {
		o.Since = DefaultTranscriptSince
	}
	dir := filepath.Clean(o.Dir)
	pl := &ingest.Pipeline{Origin: s.pipeline.Origin, Privacy: s.pipeline.Privacy}
	pl.Origin.Host, pl.Origin.User = o.Host, o.User
	const what = "a Claude Code transcript"
	busy := false // an import holds the state: said once until it ends
	// The offsets kept when the collector last ran: a transcript it had
	// read part of and that grew while it was down (an http hook's events
	// are lost then, and only the transcript has them) is read on, however
	// long ago it was written.
	offsets, err := importer.Offsets(o.StatePath)
	// failing is why the last look could not import, as last said: a cause
	// that stays (an import state that cannot be read) is warned of once,
	// not at every look, and its end is said.
	failing := ""
	if err != nil {
		failing = err.Error()
		s.log.Warn("cannot read the import state: Claude Code's transcripts are not imported until it can be; each is then read on from where it was", "err", err)
	}
	f := &follower{
		dir: dir, interval: o.Interval, since: time.Now().Add(-o.Since),
		unread: func(path string, size int64) bool {
			off, ok := offsets[path]
			return ok && off != size
		},
		warn: s.log.Warn, what: "Claude Code's transcripts",
		match: func(path string) bool { _, ok := transcriptOf(dir, path); return ok },
		// One import of the files a look found grown: the state file is
		// read and written once per look, not once per file.
		read: func(ctx context.Context, files []grownFile) []string {
			tfs := make([]claudecode.TranscriptFile, 0, len(files))
			for _, g := range files {
				tf, _ := transcriptOf(dir, g.path)
				tfs = append(tfs, tf)
			}
			importer.SortFiles(tfs)
			var failed []string
			s.importState.Lock() // a look of the rollouts is short
			_, err := importer.Run(ctx, tfs, importer.Options{
				Pipeline: pl, StatePath: o.StatePath, Holder: "hookwatch serve",
				Deliver: func(ctx context.Context, envs []event.Envelope) error {
					return s.storeFollowed(ctx, what, dir, envs)
				},
				FileLost: func(path string, long, unreadable int) {
					s.followedLost(lostSourceTranscript, what, path, long, unreadable)
				},
				FileError: func(path string, err error) {
					s.log.Warn("cannot import "+what, "path", path, "err", err)
					failed = append(failed, path)
				},
			})
			s.importState.Unlock()
			var held *importer.BusyError
			if errors.As(err, &held) {
				// hookwatch import reads these files from the same
				// offsets: they are read again after it, from where it
				// left them.
				if !busy {
					s.log.Info("Claude Code's transcripts are being read by an import: followed again once it ends", "holder", held.Holder)
				}
				busy = true
			} else {
				busy = false
			}
			if err == nil && failing != "" {
				s.log.Info("Claude Code's transcripts are imported again", "dir", dir)
				failing = ""
			}
			if err != nil {
				// The offsets of the files not imported whole were not
				// kept: the next look reads again what this one read of
				// them, which stores nothing twice (and nothing of the
				// files whose offset was kept), nor counts a lost line
				// twice (FileLost tells of a file's once its offset is
				// saved).
				if ctx.Err() == nil && !busy && err.Error() != failing {
					s.log.Warn("cannot import Claude Code's transcripts: tried again at each look that finds one grown, and said again if the cause changes", "dir", dir, "err", err)
					failing = err.Error()
				}
				failed = failed[:0]
				for _, g := range files {
					failed = append(failed, g.path)
				}
			}
			return failed
		},
	}
	f.run(ctx)
}

// transcriptOf places a file under the projects directory dir in the
// client's layout: a main transcript dir/<project>/<session>.jsonl, or a
// subagent's below dir/<project>/<session>/subagents/. Other JSONL files
// of a session's directory are not transcripts.
func transcriptOf(dir, path string) (claudecode.TranscriptFile, bool) {
	tf, ok := claudecode.ParseTranscriptPath(path)
	if !ok || (tf.AgentID == "" && filepath.Dir(filepath.Dir(path)) != dir) {
		return claudecode.TranscriptFile{}, false
	}
	return tf, true
}
