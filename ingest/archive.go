package ingest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonstr"
	"github.com/hookwatch/hookwatch/internal/lines"
	"github.com/hookwatch/hookwatch/internal/regfile"
	"github.com/hookwatch/hookwatch/privacy"
	"github.com/hookwatch/hookwatch/redact"
)

// The compaction archive: on PreCompact the transcript about to be
// summarised is copied to <dir>/<session>/<agent>/<time>.jsonl (agent is
// "main" or the subagent's id), and on PostCompact the summary is written
// beside the newest copy of that agent as <time>.summary.json, so that
// nothing the summary dropped is lost. The copy is made where the
// transcript is — the hook's machine, or the collector's for an http hook —
// and only PreCompact and PostCompact pay for it.

// DefaultArchiveMaxBytes caps one archived transcript; past it the copy
// ends with ArchiveCutMarker.
const DefaultArchiveMaxBytes = 64 << 20

// ArchiveCutMarker is the last line of an archive cut at its size cap.
const ArchiveCutMarker = `{"type":"hookwatch_archive_cut","reason":"size cap reached: the rest of the transcript was not archived"}`

// MainAgent names the main agent's directory in the archive.
const MainAgent = "main"

// maxArchiveLine bounds the line buffer of the copy; a longer line is cut
// by the size cap's rule (a transcript line is a message: rarely over a few
// MiB).
const maxArchiveLine = 16 << 20

// Archive is one archived transcript of a session, as ListArchives returns.
type Archive struct {
	// Agent is "main" or the subagent's id.
	Agent string `json:"agent"`
	// Time is when the compaction began (PreCompact).
	Time time.Time `json:"time"`
	// Path is the archived copy; Bytes its size.
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
	// Cut reports that the copy stopped at the size cap.
	Cut bool `json:"cut,omitempty"`
	// SummaryPath is the PostCompact summary stored beside it, if any.
	SummaryPath string `json:"summary_path,omitempty"`
}

// archiveTimeLayout names an archive after its time; it sorts as text.
const archiveTimeLayout = "20060102T150405.000000000Z"

// archive stores what a PreCompact or PostCompact of p has to keep under
// the pipeline's ArchiveDir; any other event costs a type switch. Errors
// are the caller's to log: the event is delivered regardless.
func (pl *Pipeline) archive(p *event.Payload, at time.Time) error {
	e, ok := p.Event.(*event.CompactInput)
	if !ok || pl.ArchiveDir == "" {
		return nil
	}
	if pl.Privacy.Capture == privacy.CaptureNone {
		return nil // a transcript is tool output: none is kept
	}
	agent := MainAgent
	if p.AgentID != "" {
		agent = p.AgentID
	}
	if !archiveName(p.SessionID) || !archiveName(agent) {
		return fmt.Errorf("cannot archive the compaction: unsafe session %q or agent %q", p.SessionID, agent)
	}
	dir := filepath.Join(pl.ArchiveDir, p.SessionID, agent)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	if p.Name() == event.PostCompact {
		return pl.archiveSummary(dir, e, at)
	}
	src := compactedTranscript(p)
	if src == "" {
		return fmt.Errorf("cannot archive the compaction: transcript %q is not the client's layout", p.TranscriptPath)
	}
	max := pl.ArchiveMaxBytes
	if max <= 0 {
		max = DefaultArchiveMaxBytes
	}
	return copyRedacted(filepath.Join(dir, at.UTC().Format(archiveTimeLayout)+".jsonl"), src, max, pl.Privacy.Redact)
}

// compactedTranscript is the transcript a compaction of p summarises: the
// subagent's own (claudecode.SubagentTranscriptPath) when a subagent
// compacts, else the main agent's. Paths come from hostile payloads: only
// the client's layout is read, never a file the payload merely names.
func compactedTranscript(p *event.Payload) string {
	f, ok := claudecode.ParseTranscriptPath(p.TranscriptPath)
	if !ok || f.SessionID != p.SessionID {
		return ""
	}
	if p.AgentID != "" {
		return claudecode.SubagentTranscriptPath(p.TranscriptPath, p.SessionID, p.AgentID)
	}
	return p.TranscriptPath
}

// copyRedacted copies the JSONL file src to dst line by line, each line
// redacted (package redact) when red, stopping with ArchiveCutMarker before
// dst would exceed max bytes. dst is created 0600 and must not exist.
func copyRedacted(dst, src string, max int64, red bool) (err error) {
	in, _, err := regfile.Open(src) // a FIFO there must not hold the hook
	if err != nil {
		return fmt.Errorf("cannot open the transcript: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("cannot create the archive: %w", err)
	}
	defer func() {
		if cerr := out.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("cannot write the archive: %w", cerr)
		}
	}()
	w := bufio.NewWriterSize(out, 64<<10)
	r := lines.NewReader(in, 64<<10, maxArchiveLine)
	budget := max - int64(len(ArchiveCutMarker)+1)
	for {
		line, f, rerr := r.Next()
		if errors.Is(rerr, io.EOF) {
			return w.Flush()
		}
		if rerr != nil {
			return fmt.Errorf("cannot read the transcript: %w", rerr)
		}
		line = lines.TrimCR(line, f)
		if len(line) == 0 && f&lines.Long == 0 {
			continue
		}
		if f&lines.Long != 0 || int64(len(line)+1) > budget {
			w.WriteString(ArchiveCutMarker + "\n")
			return w.Flush()
		}
		if red {
			line, _ = redact.JSON(line)
		}
		budget -= int64(len(line) + 1)
		w.Write(line)
		w.WriteByte('\n')
	}
}

// archiveSummary writes the PostCompact summary beside the newest archive
// of dir, or after its own time when the PreCompact copy is missing.
func (pl *Pipeline) archiveSummary(dir string, e *event.CompactInput, at time.Time) error {
	base := at.UTC().Format(archiveTimeLayout)
	if names, _ := filepath.Glob(filepath.Join(dir, "*.jsonl")); len(names) > 0 {
		base = strings.TrimSuffix(filepath.Base(slices.Max(names)), ".jsonl")
	}
	summary := e.CompactSummary
	if pl.Privacy.Redact {
		summary, _ = redact.String(summary)
	}
	body := []byte(`{"time":"` + at.UTC().Format(time.RFC3339Nano) + `","trigger":`)
	body = jsonstr.AppendQuoted(body, e.Trigger)
	body = append(body, `,"compact_summary":`...)
	body = append(jsonstr.AppendQuoted(body, summary), "}\n"...)
	path := filepath.Join(dir, base+".summary.json")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		return fmt.Errorf("cannot write the compaction summary: %w", err)
	}
	return nil
}

// ListArchives returns the archived transcripts of session under dir,
// oldest first; none when there are none.
func ListArchives(dir, session string) ([]Archive, error) {
	if !archiveName(session) {
		return nil, nil
	}
	names, err := filepath.Glob(filepath.Join(dir, session, "*", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	var list []Archive
	for _, name := range names {
		st, err := os.Stat(name)
		if err != nil {
			continue
		}
		base := strings.TrimSuffix(filepath.Base(name), ".jsonl")
		t, err := time.Parse(archiveTimeLayout, base)
		if err != nil {
			continue
		}
		a := Archive{Agent: filepath.Base(filepath.Dir(name)), Time: t, Path: name, Bytes: st.Size(), Cut: endsCut(name, st.Size())}
		if summary := strings.TrimSuffix(name, ".jsonl") + ".summary.json"; fileExists(summary) {
			a.SummaryPath = summary
		}
		list = append(list, a)
	}
	slices.SortFunc(list, func(a, b Archive) int { return a.Time.Compare(b.Time) })
	return list, nil
}

// endsCut reports whether the archive name of size bytes ends with
// ArchiveCutMarker.
func endsCut(name string, size int64) bool {
	n := int64(len(ArchiveCutMarker) + 1)
	if size < n {
		return false
	}
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, size-n); err != nil {
		return false
	}
	return string(b) == ArchiveCutMarker+"\n"
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// archiveName reports whether s can name a directory of the archive: ids
// from hostile payloads must not walk out of it.
func archiveName(s string) bool {
	return s != "" && len(s) <= 128 && !strings.HasPrefix(s, ".") && !strings.ContainsAny(s, "/\\\x00")
}

// PruneArchives deletes, under the archive directory dir, the archive of
// every session that stored reports is no longer stored (retention deleted
// it) and whose files were all last written before before, so that an
// archive whose session's events are still on their way to the store is
// kept. A nil stored is a home with no store to ask (a forwarder's, whose
// collector is elsewhere): every session counts as not stored, and its
// archive goes once its files are all older than before. A file being
// written is as recent as its last write, which keeps its session. It
// returns how many sessions' archives it deleted and their bytes; an error
// of stored stops it, a file it cannot delete is skipped. Only stored is
// asked per session: a pass with nothing due costs a stat of each file.
func PruneArchives(dir string, before time.Time, stored func(session string) (bool, error)) (sessions int, bytes int64, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	for _, e := range entries {
		if !e.IsDir() || !archiveName(e.Name()) {
			continue
		}
		root := filepath.Join(dir, e.Name())
		size, newest := archiveTree(root)
		if !newest.Before(before) {
			continue
		}
		if stored != nil {
			ok, err := stored(e.Name())
			if err != nil {
				return sessions, bytes, err
			}
			if ok {
				continue
			}
		}
		if os.RemoveAll(root) == nil {
			sessions, bytes = sessions+1, bytes+size
		}
	}
	return sessions, bytes, nil
}

// archiveTree returns the bytes of the files under root and the latest
// time one of them was written; a tree it cannot read is dated now, which
// keeps it.
func archiveTree(root string) (size int64, newest time.Time) {
	err := filepath.WalkDir(root, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			size += info.Size()
			if info.ModTime().After(newest) {
				newest = info.ModTime()
			}
		}
		return nil
	})
	if err != nil {
		return 0, time.Now()
	}
	return size, newest
}
