package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/audit"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/store"
)

func init() {
	register(command{
		name:    "export",
		summary: "write past sessions out: the JSONL audit trail, or OTLP traces with --format otlp",
		run:     runExport,
	})
}

// An export reads the store directly (read while a collector writes: SQLite
// in WAL mode serves readers beside its writer, PostgreSQL anyway), not the
// collector's API:
// it works with no collector running, needs no token, and pages through
// the events and the model's rows without an HTTP round trip per page.
// What it writes is the model as stored; when a session's model is behind
// its events (no collector has applied the latest ones yet) it says so.

// exportFormat is one output format of `hookwatch export`.
type exportFormat struct {
	// help is the format's line in --help.
	help string
	// export writes the sessions named by ids.
	export func(ctx context.Context, st store.Store, ids []string, o exportOptions) error
}

// exportOptions are what every format gets from the command line.
type exportOptions struct {
	// Out is the output directory.
	Out    string
	Stdout io.Writer
	Stderr io.Writer
	// Progress is shown on a terminal, a no-op otherwise.
	Progress *progress
	// OTLP is the receiver of --format otlp (--otlp-endpoint, --otlp-header).
	OTLP *otlpFlags
	// Done is what the format completed, told when a signal stops it.
	Done *exportDone
}

// exportDone is what an export completed, for the line that says so when a
// signal stops it: the sessions written (or sent) whole, and their events
// (or spans). A format sets unit and where, and cut when it stops inside
// a session.
type exportDone struct {
	sessions int
	items    int64
	unit     string // "event", "span"
	where    string // "written under DIR", "sent to URL"
	cut      string // what became of the session in progress, "" for none
}

// exportFormats are the formats by name; a new format is one entry.
var exportFormats = map[string]exportFormat{
	"jsonl": {help: "the audit trail: <out>/<session>/events.jsonl and tool_calls.jsonl, hash-chained (docs/audit.md)", export: exportJSONL},
	"otlp":  {help: "a trace per session, GenAI spans, sent to --otlp-endpoint (docs/otlp.md)", export: exportOTLPFormat},
}

// exportExamples ends export --help.
const exportExamples = `
Examples:
  hookwatch export --since 24h --out audit && hookwatch audit verify audit
  jq -c 'select(.status == "error")' audit/*/tool_calls.jsonl
  hookwatch export --format otlp --since 7d --otlp-endpoint http://127.0.0.1:4318
  HOOKWATCH_OTLP_HEADERS='Authorization=Bearer%20TOKEN' \
    hookwatch export --format otlp --session ID --otlp-endpoint https://otlp.example.com
`

// exportFlags are the values of export's flags.
type exportFlags struct {
	session, since, format, out, db *string
	traces                          *otlpFlags
}

// exportFormatNames are the names of exportFormats, sorted.
func exportFormatNames() []string {
	names := make([]string, 0, len(exportFormats))
	for n := range exportFormats {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// exportFlagSet defines export's flags: the one definition runExport
// parses and the docs' command lines are checked against.
func exportFlagSet(stdout, stderr io.Writer) (*flag.FlagSet, exportFlags) {
	names := exportFormatNames()
	var formats strings.Builder
	for _, n := range names {
		fmt.Fprintf(&formats, "\n  %-6s %s", n, exportFormats[n].help)
	}
	fs := newFlagSet("export", "export (--session ID | --since TIME) [--format "+strings.Join(names, "|")+"] [--out DIR] [--db PATH|URL] [--otlp-endpoint URL [--otlp-header k=v]… [--otlp-ca-file FILE]]\n\n"+
		"Reads the database directly; a collector may be running.\n"+
		"Exit status: 0 every session exported; 1 an error; 2 a usage error; 130 stopped by\n"+
		"Ctrl-C (143 by SIGTERM): stderr says how many sessions were exported whole before it.\nFormats:"+formats.String(), stdout, stderr)
	f := exportFlags{}
	f.session = fs.String("session", "", "the session to export: its id, or the start of it (8 characters at least) as sessions diff takes it")
	f.since = fs.String("since", "", "export every session active since TIME: RFC 3339 (2026-11-21T15:00:00Z), a date (2026-11-21) or an age back from now (7d, 2w, 24h)")
	f.format = fs.String("format", "jsonl", "output format: "+strings.Join(names, ", "))
	f.out = fs.String("out", ".", "output directory of --format jsonl")
	f.db = dbFlagVar(fs)
	f.traces = addOTLPFlags(fs)
	usageTrailer(fs, exportExamples)
	return fs, f
}

// runExport is `hookwatch export`. Stopped by a signal, it returns an
// interruptedError saying how many sessions it completed: an export cut
// short must not pass for a whole one.
func runExport(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	done := &exportDone{}
	total := -1 // sessions to export, once known
	defer func() {
		if err == nil || ctx.Err() == nil {
			return
		}
		if total < 0 {
			err = interruptedError{"nothing exported"}
			return
		}
		msg := fmt.Sprintf("export incomplete: %d of %s %s", done.sessions, counted(total, "session"), done.where)
		if done.unit != "" {
			msg += fmt.Sprintf(" (%s)", counted(int(done.items), done.unit))
		}
		msg += " before the stop"
		if done.cut != "" {
			msg += "; " + done.cut
		}
		err = interruptedError{msg}
	}()
	fs, ef := exportFlagSet(stdout, stderr)
	session, since, format, out, dbFlag, traces := ef.session, ef.since, ef.format, ef.out, ef.db, ef.traces
	names := exportFormatNames()
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	f, ok := exportFormats[*format]

	if !ok {
		return fmt.Errorf("%w: unknown format %q (want %s)", errUsage, *format, strings.Join(names, ", "))
	}
	// A flag of the other format would be ignored: the traces meant for a
	// receiver written to files in the working directory instead, or
	// files asked for that are never written.
	for _, name := range []string{"otlp-endpoint", "otlp-header", "otlp-ca-file"} {
		if *format != "otlp" && flagSet(fs, name) {
			return fmt.Errorf("%w: --%s goes with --format otlp (the format is %s, which writes files under --out)", errUsage, name, *format)
		}
	}
	if *format == "otlp" && flagSet(fs, "out") {
		return fmt.Errorf("%w: --out goes with --format jsonl: --format otlp sends the traces to --otlp-endpoint and writes no file", errUsage)
	}
	if *session != "" && *since != "" {
		return fmt.Errorf("%w: --session and --since go one at a time: one session, or every session active since a time", errUsage)
	}
	if *session == "" && *since == "" {
		return fmt.Errorf("%w: give --session ID or --since TIME", errUsage)
	}
	var from time.Time
	if *since != "" {
		var err error
		if from, err = parseSince(*since, time.Now()); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	db, dbName, err := openExistingStore(ctx, *dbFlag, hook.Home(os.Getenv))
	if errors.Is(err, errNoDatabase) {
		return fmt.Errorf("cannot export: %w", err)
	}
	if err != nil {
		return err
	}
	defer db.Close()

	ids := []string{*session}
	if *session != "" {
		_, err := db.Session(ctx, *session)
		if errors.Is(err, store.ErrNotFound) && isPrefix(*session) {
			// The start of an id, as sessions diff and the listings
			// print one.
			if ids[0], err = sessionByPrefix(ctx, db, *session); err != nil {
				return err
			}
			_, err = db.Session(ctx, ids[0])
		}
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("cannot export: no session %q in %s", *session, dbName)
		} else if err != nil {
			return fmt.Errorf("cannot export: %w", err)
		}
	} else if ids, err = sessionsSince(ctx, db, from); err != nil {
		return fmt.Errorf("cannot export: %w", err)
	} else if len(ids) == 0 {
		fmt.Fprintf(stderr, "hookwatch export: no session active since %s\n", from.Format(time.RFC3339))
		return nil
	}
	events := int64(0)
	for _, id := range ids {
		if s, err := db.Session(ctx, id); err == nil {
			events += s.EventCount
		}
	}
	p := newProgress(stderr, events)
	defer p.done()
	total = len(ids)
	return f.export(ctx, db, ids, exportOptions{Out: *out, Stdout: stdout, Stderr: stderr, Progress: p, OTLP: traces, Done: done})
}

// parseSince reads --since: an RFC 3339 time, a date (midnight UTC), or an
// age back from now as prune's --older-than reads it (parseAge: 7d, 2w,
// 36h).
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, err := parseAge(s); err == nil {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q is neither an RFC 3339 time, a date (YYYY-MM-DD) nor an age such as 7d or 24h", s)
}

// sessionsSince lists the sessions whose last event is at or after from,
// oldest first.
func sessionsSince(ctx context.Context, st store.Store, from time.Time) ([]string, error) {
	var ids []string
	f := store.SessionFilter{Limit: store.MaxLimit}
	for {
		page, err := st.Sessions(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, s := range page.Sessions {
			if s.LastEventAt.Before(from) {
				slices.Reverse(ids)
				return ids, nil
			}
			ids = append(ids, s.ID)
		}
		if page.Next == "" {
			slices.Reverse(ids)
			return ids, nil
		}
		f.Cursor = page.Next
	}
}

// sessionByPrefix is the session of st whose id starts with prefix, as
// pickPrefixed picks it.
func sessionByPrefix(ctx context.Context, st store.Store, prefix string) (string, error) {
	all, err := sessionsSince(ctx, st, time.Time{})
	if err != nil {
		return "", fmt.Errorf("cannot export: %w", err)
	}
	return pickPrefixed("sessions", prefix, prefixed(all, prefix))
}

// exportJSONL writes each session's audit trail into its directory under
// o.Out. A session whose directory already holds one is left out, and
// named on o.Stderr; the others are written, and the error then says how
// many were left out.
func exportJSONL(ctx context.Context, st store.Store, ids []string, o exportOptions) error {
	o.Done.unit, o.Done.where = "event", "written under "+o.Out
	var todo []string
	for _, id := range ids {
		dir := filepath.Join(o.Out, audit.SessionDir(id))
		if !holdsTrail(dir) {
			todo = append(todo, id)
			continue
		}
		if len(ids) == 1 {
			return fmt.Errorf("cannot export session %s: %s already holds an audit trail; choose another --out", id, dir)
		}
		fmt.Fprintf(o.Stderr, "hookwatch export: session %s not exported: %s already holds an audit trail\n", id, dir)
		if s, err := st.Session(ctx, id); err == nil {
			o.Progress.skip(s.EventCount) // the bar fills with what is written
		}
	}
	if err := writeJSONL(ctx, st, todo, o); err != nil {
		return err
	}
	switch left := len(ids) - len(todo); {
	case left == 0:
		return nil
	case len(todo) == 0:
		return fmt.Errorf("no session exported: the directories of all %d already hold an audit trail; choose another --out", left)
	default:
		return fmt.Errorf("%d of %d sessions not exported, their directories already holding an audit trail (the other %d were); choose another --out for them",
			left, len(ids), len(todo))
	}
}

// holdsTrail reports whether the session directory dir holds an audit
// trail, of events or of tool calls.
func holdsTrail(dir string) bool {
	for _, name := range []string{audit.EventsFile, audit.ToolCallsFile} {
		if segs, _ := audit.Segments(dir, name); len(segs) > 0 {
			return true
		}
	}
	return false
}

// writeJSONL writes the audit trails of the sessions ids under o.Out,
// where their directories hold none. A session whose export fails (a full
// disk, an interrupt) leaves no trail: what was written of it is removed.
func writeJSONL(ctx context.Context, st store.Store, ids []string, o exportOptions) error {
	if len(ids) == 0 {
		return nil
	}
	w, err := audit.NewWriter(o.Out, audit.WriterOptions{MaxFileBytes: -1})
	if err != nil {
		return err
	}
	defer w.Close()
	for _, id := range ids {
		base := o.Progress.events
		dir := filepath.Join(o.Out, audit.SessionDir(id))
		_, statErr := os.Stat(dir)
		stats, err := audit.ExportSession(ctx, st, w, id, func(n int) { o.Progress.set(id, base+int64(n)) })
		if err != nil {
			// A trail cut short verifies as a whole one (no chain shows
			// lines missing at its end), and would stop the next export
			// into o.Out: none is left behind.
			o.Progress.clear()
			w.Close()
			if rmErr := removeTrail(dir, statErr != nil); rmErr != nil {
				o.Done.cut = fmt.Sprintf("what was written of session %s stays in %s, cut short: remove it (%v)", id, dir, rmErr)
				return fmt.Errorf("session %s not exported: %w (and what was written of it stays in %s: %v)", id, err, dir, rmErr)
			}
			o.Done.cut = fmt.Sprintf("session %s was in progress: nothing of it kept", id)
			return fmt.Errorf("session %s not exported, nothing of it kept: %w", id, err)
		}
		o.Progress.clear()
		if stats.ModelBehind {
			fmt.Fprintf(o.Stderr, "hookwatch export: the model of session %s is behind its events (no collector has applied the latest); its tool calls are the model's as stored\n", id)
		}
		fmt.Fprintf(o.Stdout, "%s: %d events, %d tool calls\n", filepath.Join(o.Out, audit.SessionDir(id)), stats.Events, stats.ToolCalls)
		o.Done.sessions++
		o.Done.items += int64(stats.Events)
	}
	return w.Close()
}

// removeTrail removes the audit trail in the session directory dir, and
// dir itself when made, empty, for it.
func removeTrail(dir string, made bool) error {
	var errs []error
	for _, name := range []string{audit.EventsFile, audit.ToolCallsFile} {
		segs, err := audit.Segments(dir, name)
		errs = append(errs, err)
		for _, seg := range segs {
			errs = append(errs, os.Remove(seg))
		}
	}
	if made {
		os.Remove(dir) // kept when something else was put in it meanwhile
	}
	return errors.Join(errs...)
}

// progress draws a one-line progress bar on a terminal; on anything else
// (a file, a pipe) it draws nothing.
type progress struct {
	w      io.Writer // nil: not a terminal
	total  int64
	events int64
	last   time.Time
	drawn  bool
}

func newProgress(w io.Writer, total int64) *progress {
	if !isTerminal(w) {
		return &progress{}
	}
	return &progress{w: w, total: total}
}

// set records events written so far, redrawing at most ten times a
// second.
func (p *progress) set(session string, events int64) {
	p.events = events
	if p.w == nil || p.total < 1000 || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	frac := min(float64(events)/float64(p.total), 1)
	const width = 30
	bar := strings.Repeat("#", int(frac*width)) + strings.Repeat(" ", width-int(frac*width))
	if len(session) > 12 {
		session = session[:12] + "…"
	}
	fmt.Fprintf(p.w, "\r[%s] %3.0f%% %d/%d events (%s)\x1b[K", bar, frac*100, events, p.total, session)
	p.drawn = true
}

// skip takes events left out from the total; p may be nil.
func (p *progress) skip(events int64) {
	if p != nil {
		p.total -= events
	}
}

// clear erases the bar before a line is printed.
func (p *progress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

func (p *progress) done() { p.clear() }
