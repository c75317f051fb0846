package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/codex/rollout"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/internal/patherr"
	"github.com/hookwatch/hookwatch/internal/treewalk"
	"github.com/hookwatch/hookwatch/privacy"
)

func init() {
	register(command{
		name:    "import",
		summary: "import Claude Code transcripts (what no hook recorded, the tokens of every agent), or Codex rollouts with --codex",
		run:     runImport,
	})
}

const importSynopsis = `import [--codex] [--dry-run] [--verbose] [--no-start] [--since TIME] [PATH…]

Reads Claude Code's transcripts — a main transcript <session>.jsonl, its
subagents' <session>/subagents/agent-<id>.jsonl, or directories holding them
(default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects) — and sends
what they record to the collector the hooks send to ($HOOKWATCH_URL, else
the URL 'hookwatch install --url' kept), through the same privacy
rules as every hook event: the user's prompts, every tool call and its
outcome, the subagents, and the tokens of every API response, priced per
agent, per turn and per session (hookwatch serve --prices FILE replaces the
built-in price table). What the hooks already captured (the same tool_use_id,
prompt id or subagent) is not sent again; a call or a subagent they saw only
in part is completed.

Importing is resumable and idempotent: the offset reached in each file is
kept in $HOOKWATCH_HOME/import-state.json, a second run reads only what was
appended since, and a record imported twice is stored once. A line still
being written is left for the next run. hookwatch serve does the same as the
transcripts grow (serve --watch-transcripts, on by default), sharing these
offsets: import is for what it did not see. The two never read at once: an
import waits for the collector's look to end (it says so), and the
collector reads the transcripts again once the import has.

The collector stores what it is sent at once and works out the calls, agents
and lineage from it in rounds after: once it has sent, import waits (up to
30 s, drawing how many sessions are left on a terminal) until the collector
has, so that the dashboard shows the sessions whole; past that it says the
collector is still at it, and succeeds.

With --codex it imports Codex rollout files instead (default: every rollout
under $CODEX_HOME/sessions): the tool calls hooks missed, their outcomes
(exit codes, interruptions, refused patches), and the prompts and ends of
sessions no hook saw. It is resumable as well: each rollout is read on from
the offset import-state.json keeps for it, the same offsets hookwatch serve
keeps as it follows the rollouts (serve --codex-rollouts), so that what
either read the other does not read again; a rollout read to its end is not
read again until it grows, one that shrank or was replaced is read again
from its start, and the summary says how many had nothing new.

Exit status: 0 imported; 1 an error; 2 a usage error; 130 stopped by Ctrl-C
(143 by SIGTERM): stderr says what was imported before it.

Flags:`

// importExamples ends import --help.
const importExamples = `
Examples:
  hookwatch import                      # every transcript under ~/.claude/projects
  hookwatch import --dry-run ~/.claude/projects/-home-ann-src-api
  hookwatch import --since 2w           # the sessions of the last two weeks
  hookwatch import --dry-run --verbose  # every session it would import, and its project
  hookwatch import --codex              # every Codex rollout
`

// importFlags are the values of import's flags.
type importFlags struct {
	codex, dryRun, verbose, noStart *bool
	since                           *string
}

// importFlagSet defines import's flags: the one definition runImport
// parses and the docs' command lines are checked against.
func importFlagSet(stdout, stderr io.Writer) (*flag.FlagSet, importFlags) {
	fs := newFlagSet("import", importSynopsis, stdout, stderr)
	usageTrailer(fs, importExamples)
	return fs, importFlags{
		codex:   fs.Bool("codex", false, "import Codex rollout files: the PATHs (files or directories), default every rollout under $CODEX_HOME/sessions"),
		dryRun:  fs.Bool("dry-run", false, "read and count what would be imported; send and keep nothing"),
		verbose: fs.Bool("verbose", false, fmt.Sprintf("list every session of the transcripts read, with its project and records (a dry run lists the first %d without it, and sums them all up by project)", dryRunListed)),
		noStart: fs.Bool("no-start", false, "do not start a collector when none answers"),
		since:   fs.String("since", "", "import only the sessions active since TIME (a file of theirs written since): RFC 3339 (2026-11-21T15:00:00Z), a date (2026-11-21) or an age back from now (7d, 2w, 24h)"),
	}
}

// runImport is `hookwatch import`. Stopped by a signal, it returns an
// interruptedError saying what it imported: an import cut short must not
// pass for a whole one.
func runImport(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	defer func() {
		var ie interruptedError
		if err != nil && ctx.Err() != nil && !errors.As(err, &ie) {
			err = interruptedError{"nothing imported"}
		}
	}()
	fs, f := importFlagSet(stdout, stderr)
	isCodex, dryRun, verbose, noStart, sinceFlag := f.codex, f.dryRun, f.verbose, f.noStart, f.since
	// Flags may follow the paths (import DIR --dry-run), as the shell's
	// history makes it easy to add one at the end.
	paths, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	var since time.Time
	if *sinceFlag != "" {
		if since, err = parseSince(*sinceFlag, time.Now()); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	if *isCodex && *verbose {
		return fmt.Errorf("%w: --verbose lists the sessions of Claude Code's transcripts; import --codex lists none (hookwatch sessions --codex --all lists Codex's)", errUsage)
	}
	if *isCodex {
		return runImportCodex(ctx, paths, since, *dryRun, *noStart, stdout, stderr)
	}
	if len(paths) == 0 {
		projects, err := claudecode.ProjectsDir(os.Getenv)
		if err != nil {
			return err
		}
		if _, err := os.Stat(projects); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no Claude Code transcripts to import: %s does not exist (Claude Code has not run as this user, or keeps its files elsewhere: set CLAUDE_CONFIG_DIR, or name the directory)", projects)
		}
		paths = []string{projects}
	}
	files, err := importer.Find(paths)
	if err != nil {
		return err
	}
	left := 0 // sessions --since leaves out
	if !since.IsZero() {
		files, left = importer.ActiveSince(files, since)
	}
	priv, err := privacy.OptionsFromEnv(os.Getenv)
	if err != nil {
		return fmt.Errorf("cannot read the privacy settings: %w", err)
	}
	home, err := importHome(*dryRun || len(files) == 0)
	if err != nil {
		return err
	}
	opt := importer.Options{
		Pipeline: &ingest.Pipeline{Origin: ingest.LocalOrigin(version), Privacy: priv},
		DryRun:   *dryRun,
		// A dry run reads from the offsets kept too, and keeps none.
		StatePath: filepath.Join(home, importer.StateFile),
		Holder:    "hookwatch import",
	}
	// With nothing to read, nothing is sent: no collector is started for
	// it, nor its absence made the error rather than the paths'.
	base, token, up, err := importCollector(ctx, *dryRun || len(files) == 0, *noStart, stderr)
	if err != nil {
		return err
	}
	client, err := collectorClient()
	if err != nil {
		return err
	}
	if up {
		opt.Known = storedOf(client, base, token)
	}
	had := 0 // the delivered envelopes the collector had already
	if !*dryRun {
		opt.Deliver = func(ctx context.Context, envs []event.Envelope) error {
			dups, err := postBatch(ctx, client, base, token, envs, "the imported records")
			had += dups
			return err
		}
	}
	if isTerminal(stderr) {
		opt.Progress = func(p importer.Progress) { drawProgress(stderr, p) }
	}
	sum, took, err := importWhenFree(ctx, files, opt, stderr)
	if opt.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil && ctx.Err() != nil {
		// sum counts the files whose every record was delivered; the
		// offsets reached are kept, and a file cut short is read again
		// from its last kept offset, its records already sent stored once.
		what := "import incomplete"
		if *dryRun {
			what = "dry run incomplete"
		}
		return interruptedError{fmt.Sprintf("%s: %s of %s (%s) read from %d of %s before the stop; hookwatch import again goes on from there",
			what, counted(sum.Total(), "record"), counted(len(sum.Sessions), "session"), megabytes(sum.Bytes), sum.Files, counted(len(files), "file"))}
	}
	if err != nil {
		return err
	}
	verb := "imported"
	if *dryRun {
		verb = "would import"
	}
	fmt.Fprintf(stdout, "%s %s of %s from %s (%s read in %s)", verb, counted(sum.Total(), "record"), counted(len(sum.Sessions), "session"), counted(sum.Files, "file"), megabytes(sum.Bytes), seconds(took))
	names := make([]string, 0, len(sum.Envelopes))
	for n := range sum.Envelopes {
		names = append(names, n)
	}
	slices.Sort(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %d", n, sum.Envelopes[n]))
	}
	if len(parts) > 0 {
		fmt.Fprintf(stdout, ": %s", strings.Join(parts, ", "))
	}
	fmt.Fprintln(stdout)
	if *dryRun || *verbose {
		listSessions(stdout, sum, files, *verbose)
	}
	// Why it sent less than the transcripts hold, or nothing at all: a
	// person importing again, or after the hooks recorded the sessions,
	// would otherwise take the small count for a loss.
	if sum.Stored > 0 {
		not := "were not"
		switch {
		case *dryRun:
			not = "would not be"
		case sum.Stored == 1:
			not = "was not"
		}
		fmt.Fprintf(stdout, "%s the collector already had (from the hooks, an earlier import or hookwatch serve following the transcripts) %s sent again\n", counted(sum.Stored, "event"), not)
	}
	if had > 0 {
		fmt.Fprintf(stdout, "%d of the records sent the collector had already (from an earlier import or hookwatch serve following the transcripts): stored once\n", had)
	}
	if sum.Files > 0 && sum.Bytes == 0 {
		fmt.Fprintf(stdout, "nothing new: every file was read to its end before (by an earlier import, or by hookwatch serve as it follows the transcripts; the offsets are in %s)\n", opt.StatePath)
	}
	if left > 0 {
		fmt.Fprintf(stdout, "%s not active since %s left out (--since)\n", counted(left, "session"), since.Local().Format(time.DateTime))
	}
	if !*dryRun && sum.Total() > had {
		// The link below is to be followed now: a session shown before the
		// collector modelled what was sent has events without their calls.
		waitModelled(ctx, base, token, sum.Sessions, stdout, stderr)
	}
	switch {
	case *dryRun:
	case len(sum.Sessions) == 1:
		fmt.Fprintf(stdout, "the dashboard: %s/#/s/%s\n", base, url.PathEscape(sum.Sessions[0]))
	case len(sum.Sessions) > 1:
		fmt.Fprintf(stdout, "the dashboard: %s/\n", base)
	}
	if len(files) == 0 && left == 0 {
		fmt.Fprintf(stderr, "hookwatch import: no Claude Code transcript (<session id>.jsonl in a project directory) in %s\n", strings.Join(paths, ", "))
	}
	unreadable := sum.Unreadable
	if sum.Records == 0 {
		unreadable = 0 // said below: not transcripts at all, rather
	}
	sayLost(stderr, "transcript line", sum.Long, claudecode.MaxTranscriptLine, unreadable)
	if sum.Records == 0 && sum.Skipped > 0 {
		fmt.Fprintf(stderr, "hookwatch import: none of the %s read was a transcript record: are these Claude Code's transcripts?%s\n", counted(sum.Skipped, "line"), codexHintOf(files))
	}
	return nil
}

// importWaitEvery is how often an import that finds the transcripts
// being read by another run (a look of the collector that follows them,
// another import) tries again.
const importWaitEvery = 250 * time.Millisecond

// importWhenFree runs the import once no other run reads the transcripts
// from the same offsets (importer.BusyError): the collector's looks are
// short, and after another import this one reads only what it left. It
// returns the time the import itself took, the wait left out.
func importWhenFree(ctx context.Context, files []claudecode.TranscriptFile, opt importer.Options, stderr io.Writer) (sum importer.Summary, took time.Duration, err error) {
	err = whenFree(ctx, stderr, "the transcripts", func() error {
		started := time.Now()
		sum, err = importer.Run(ctx, files, opt)
		took = time.Since(started)
		return err
	})
	return sum, took, err
}

// whenFree calls try until it returns other than an *importer.BusyError:
// another run holds the import state, whose offsets of what (the
// transcripts, the rollouts) it reads; said once on stderr.
func whenFree(ctx context.Context, stderr io.Writer, what string, try func() error) error {
	waiting := false
	for {
		err := try()
		var busy *importer.BusyError
		if !errors.As(err, &busy) {
			return err
		}
		if !waiting {
			waiting = true
			fmt.Fprintf(stderr, "hookwatch import: waiting for %s, which is reading %s; this import goes on from where it stops\n", cmp.Or(busy.Holder, "another import"), what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(importWaitEvery):
		}
	}
}

// importModelWait bounds how long import waits, after delivering, for the
// collector to model what it sent. A variable for the tests.
var importModelWait = 30 * time.Second

// importModelPoll is the pause between two passes over the sessions whose
// model is still behind.
const importModelPoll = 100 * time.Millisecond

// waitModelled waits, at most importModelWait, until the collector's model
// of each of sessions reflects every event it stores of it (derived_seq >=
// last_seq on GET /v1/sessions/{id}, which itself waits a moment for events
// being applied): the collector stores a batch first and models it in
// rounds after, so a session opened before shows its events without (all)
// its calls and agents. A session the collector does not know is not
// waited for. On a terminal stderr it draws how many sessions are left.
// When the bound passes, ctx ends or the collector cannot be read, it
// stops waiting and says so in one line: the import itself is done, and
// the model catches up on its own.
func waitModelled(ctx context.Context, base, token string, sessions []string, stdout, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(ctx, importModelWait)
	defer cancel()
	progress := isTerminal(stderr)
	draw := func(left int) {
		if progress {
			fmt.Fprintf(stderr, "\r\033[Kthe collector is modelling what was imported: %s to go", counted(left, "session"))
		}
	}
	behind := sessions
	var err error
	for len(behind) > 0 && err == nil && ctx.Err() == nil {
		draw(len(behind))
		var still []string
		for i, id := range behind {
			var done bool
			if done, err = modelled(ctx, base, token, id); err != nil {
				still = append(still, behind[i:]...)
				break
			}
			if !done {
				still = append(still, id)
			} else if left := len(still) + len(behind) - i - 1; left > 0 {
				draw(left) // months of sessions take a while to read through
			}
		}
		if behind = still; len(behind) > 0 && err == nil {
			select {
			case <-ctx.Done():
			case <-time.After(importModelPoll):
			}
		}
	}
	if progress {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if len(behind) == 0 {
		return
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "hookwatch import: cannot tell whether the collector has modelled the import: %v\n", err)
		return
	}
	fmt.Fprintf(stdout, "the collector is still modelling %s; the dashboard fills in as it does\n", counted(len(behind), "session"))
}

// modelled reports whether the collector's model of session id reflects
// every event it stores of it (true as well for a session it does not
// know).
func modelled(ctx context.Context, base, token, id string) (bool, error) {
	body, err := apiGet(ctx, base, token, base+"/v1/sessions/"+url.PathEscape(id))
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	var v collector.SessionView
	if err := json.Unmarshal(body, &v); err != nil {
		return false, fmt.Errorf("cannot read session %s from %s: %w", id, base, err)
	}
	return v.DerivedSeq >= v.LastSeq, nil
}

// dryRunListed is how many sessions a dry run lists before it sums them
// up by project: months of history are thousands of sessions.
const dryRunListed = 50

// listSessions lists the sessions sum made records of, each with its
// records and its project (the directory of its transcripts, as in
// ~/.claude/projects); past dryRunListed, unless all, only the first
// ones, then every session summed up by project, the projects with the
// most records first.
func listSessions(w io.Writer, sum importer.Summary, files []claudecode.TranscriptFile, all bool) {
	project := map[string]string{}
	for _, f := range files {
		project[f.SessionID] = filepath.Base(filepath.Dir(f.MainPath))
	}
	for i, s := range sum.Sessions {
		if i == dryRunListed && !all {
			break
		}
		fmt.Fprintf(w, "  session %s: %s in %s\n", s, counted(sum.SessionEvents[s], "record"), project[s])
	}
	if all || len(sum.Sessions) <= dryRunListed {
		return
	}
	type total struct {
		name              string
		sessions, records int
	}
	by := map[string]*total{}
	var projects []*total
	for _, s := range sum.Sessions {
		p := by[project[s]]
		if p == nil {
			p = &total{name: project[s]}
			by[p.name] = p
			projects = append(projects, p)
		}
		p.sessions++
		p.records += sum.SessionEvents[s]
	}
	slices.SortFunc(projects, func(a, b *total) int {
		return cmp.Or(b.records-a.records, strings.Compare(a.name, b.name))
	})
	fmt.Fprintf(w, "  … %s; all %d by project (hookwatch import --dry-run --verbose lists every session):\n",
		counted(len(sum.Sessions)-dryRunListed, "more session"), len(sum.Sessions))
	for _, p := range projects {
		fmt.Fprintf(w, "  project %s: %s, %s\n", p.name, counted(p.sessions, "session"), counted(p.records, "record"))
	}
}

// sayLost says on stderr how many lines of what (a "transcript line", a
// "rollout line") import passed over: long ones, above max bytes, and
// unreadable ones. They are said, not counted with the record types
// import has no use for: a prompt or a call in them is missing from the
// import.
func sayLost(stderr io.Writer, what string, long, max, unreadable int) {
	if long > 0 {
		fmt.Fprintf(stderr, "hookwatch import: passed over %s longer than %d MB (a huge tool result or pasted file): what they record is not imported\n",
			counted(long, what), max>>20)
	}
	if unreadable > 0 {
		fmt.Fprintf(stderr, "hookwatch import: passed over %s not JSON or not of a record's shape (torn by a crash, or edited): what they record is not imported\n",
			counted(unreadable, what))
	}
}

// codexHintOf is what import says of files none of which held a
// transcript record when one of them is named as Codex names a rollout:
// which command reads those.
func codexHintOf(files []claudecode.TranscriptFile) string {
	for _, f := range files {
		if codex.IsRollout(f.Path) {
			return " " + filepath.Base(f.Path) + " is named as a Codex rollout: hookwatch import --codex reads those"
		}
	}
	return ""
}

// isTerminal reports whether stream (a reader or a writer) is a
// terminal: where import and export draw a progress bar (elsewhere, a
// pipe or a log, they are quiet until their summary), and where a person
// rather than a client feeds the statusline.
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && f != nil && isTerminalFD(f.Fd())
}

// drawProgress redraws the progress line: files, bytes, rate and ETA.
func drawProgress(w io.Writer, p importer.Progress) {
	el := time.Since(p.Started).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(p.BytesDone) / el
	}
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(p.Bytes-p.BytesDone)/rate) * time.Second).Round(time.Second).String()
	}
	width := 30
	done := width
	if p.Bytes > 0 {
		done = int(float64(width) * float64(p.BytesDone) / float64(p.Bytes))
	}
	done = min(max(done, 0), width)
	fmt.Fprintf(w, "\r\033[K[%s%s] %d/%d files  %s/%s  %s/s  ETA %s",
		strings.Repeat("#", done), strings.Repeat(".", width-done), p.FilesDone, p.Files,
		megabytes(p.BytesDone), megabytes(p.Bytes), megabytes(int64(rate)), eta)
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// seconds says how long d took, to a tenth of a second.
func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// importCollector returns the collector import sends to and its token, and
// whether it answers. Unless dryRun, which sends nothing, it starts one in
// the background when none answers, as a hook would, or with noStart (or
// the hooks' autostart off) fails saying how to start one.
func importCollector(ctx context.Context, dryRun, noStart bool, stderr io.Writer) (base, token string, up bool, err error) {
	if base, token, err = collectorURL(); err != nil {
		return "", "", false, err
	}
	if healthy(ctx, base, 2*time.Second) {
		return base, token, true, nil
	}
	if dryRun {
		return base, token, false, nil
	}
	if err := errHomeCollectorElsewhere(base); err != nil {
		return "", "", false, err
	}
	if cfg, _ := hook.ConfigFromEnv(os.Getenv); noStart || !cfg.Autostart {
		return "", "", false, fmt.Errorf("no collector answers at %s: %s", base, startHint(base))
	}
	if err := startCollector(ctx, hook.Home(os.Getenv), base, stderr); err != nil {
		return "", "", false, err
	}
	fmt.Fprintf(stderr, "No collector answered at %s: started one in the background (stop it with: %s stop).\n", base, selfName())
	return base, token, true, nil
}

// importHome is the data directory whose import state an import reads
// and keeps, refused as serve refuses it when it cannot be created
// (makeHome), rather than with the state's open error. An import that
// keeps nothing (a dry run, or one with nothing to read) creates nothing:
// it checks only that the home could be made (checkHome).
func importHome(keepsNothing bool) (string, error) {
	home := hook.Home(os.Getenv)
	check := makeHome
	if keepsNothing {
		check = checkHome
	}
	if err := check(home); err != nil {
		return "", err
	}
	return home, nil
}

// importBatch is how many envelopes one POST of Codex rollout events
// carries.
const importBatch = 500

// runImportCodex imports Codex rollout files: the paths, default every
// rollout under $CODEX_HOME/sessions; with since not zero, only those
// written since (a rollout is one session's). Each is read on from the
// offset the import state keeps for it (importer.RolloutState: the
// collector following the rollouts keeps the same), and, unless dryRun,
// the offset of what the collector acknowledged is kept, under the
// state's lock, held from before the offsets are read until they are
// saved, as a Claude Code import holds it.
func runImportCodex(ctx context.Context, paths []string, since time.Time, dryRun, noStart bool, stdout, stderr io.Writer) (err error) {
	files, err := codexRollouts(paths)
	if err != nil {
		return err
	}
	left := 0 // rollouts --since leaves out
	if !since.IsZero() {
		files, left = importer.FilesSince(files, since)
	}
	home, err := importHome(dryRun || len(files) == 0)
	if err != nil {
		return err
	}
	base, token, _, err := importCollector(ctx, dryRun || len(files) == 0, noStart, stderr)
	if err != nil {
		return err
	}
	statePath := filepath.Join(home, importer.StateFile)
	var state *importer.RolloutState
	if len(files) > 0 {
		// A dry run reads from the offsets kept too, and keeps none.
		err := whenFree(ctx, stderr, "Codex's rollouts", func() (err error) {
			state, err = importer.HoldRollouts(statePath, "hookwatch import", dryRun)
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				return interruptedError{"nothing imported"}
			}
			return err
		}
		defer func() {
			// What was delivered before an error or a stop is kept.
			if serr := state.Release(); err == nil && serr != nil {
				err = serr
			}
		}()
	}
	// The hook's origin, so that imported calls join the sessions the
	// hooks recorded (lineage groups by host and user).
	origin := ingest.LocalOrigin(version)
	client, err := collectorClient()
	if err != nil {
		return err
	}
	calls, session, usage, read, had := 0, 0, 0, 0, 0
	unchanged, again := 0, 0  // rollouts read to their end before; read again whole
	var lost rollout.Stats    // the lines of the rollouts read that were passed over
	sent := map[string]bool{} // the sessions of the events delivered
	interrupted := func() error {
		if dryRun {
			return interruptedError{fmt.Sprintf("dry run incomplete: %d of %s read (%s) before the stop",
				read+unchanged, counted(len(files), "rollout file"), counted(calls+session+usage, "event"))}
		}
		return interruptedError{fmt.Sprintf("import incomplete: %d of %s imported (%s) before the stop; hookwatch import --codex again goes on from there",
			read+unchanged, counted(len(files), "rollout file"), counted(calls+session+usage, "event"))}
	}
	for _, f := range files {
		if ctx.Err() != nil {
			return interrupted()
		}
		off := state.Offset(f)
		if info, err := os.Stat(f); err == nil && off > 0 && info.Size() == off {
			// Read to its end before: a file of months of sessions is
			// not read again for nothing.
			unchanged++
			continue
		}
		envs, reached, err := rollout.ReadOn(f, origin.Host, origin.User, off)
		if err != nil {
			fmt.Fprintf(stderr, "hookwatch import: skipping %s: %v\n", f, patherr.Strip(err, f))
			continue
		}
		for i := 0; i < len(envs) && !dryRun; i += importBatch {
			dups, err := postBatch(ctx, client, base, token, envs[i:min(i+importBatch, len(envs))], "the imported events")
			if err != nil {
				if ctx.Err() != nil {
					return interrupted()
				}
				return err
			}
			had += dups
		}
		if err := state.Set(f, reached.Offset); err != nil {
			return err
		}
		if reached.Offset == off && !reached.FromStart {
			unchanged++ // what it gained is a line still being written
			continue
		}
		read++
		if reached.FromStart {
			again++
		}
		lost.Long += reached.Lost.Long
		lost.Unreadable += reached.Lost.Unreadable
		for _, e := range envs {
			p, _ := event.Decode(e.Payload)
			if p != nil && !dryRun && p.SessionID != "" {
				sent[p.SessionID] = true
			}
			switch {
			case rollout.IsUsage(e):
				usage++
			case p != nil && p.Tool() != nil:
				calls++
			default: // a prompt, a run's end, a fork's start
				session++
			}
		}
	}
	verb := "Imported"
	if dryRun {
		verb = "Would import"
	}
	from := counted(read, "rollout file")
	if skipped := len(files) - read - unchanged; skipped > 0 {
		from += fmt.Sprintf(" (%d skipped, said above)", skipped)
	}
	fmt.Fprintf(stdout, "%s %s, %s and %s from %s into %s (events already there are ignored).\n", verb,
		counted(calls, "tool event"), counted(session, "session event"), counted(usage, "token usage record"),
		from, base)
	// Said, or a run again reads as importing everything again.
	switch total := calls + session + usage; {
	case had > 0 && had == total:
		fmt.Fprintf(stdout, "Nothing new: the collector had all %s already.\n", counted(total, "event"))
	case had > 0:
		fmt.Fprintf(stdout, "%d of them the collector had already (from the hooks' rollout reading or an earlier import); %d are new.\n", had, total-had)
	}
	switch {
	case unchanged > 0 && unchanged == len(files):
		each := "each was"
		if unchanged == 1 {
			each = "it was"
		}
		fmt.Fprintf(stdout, "Nothing new in %s: %s read to its end before (by an earlier import, or by hookwatch serve as it follows the rollouts; the offsets are in %s).\n", counted(unchanged, "rollout file"), each, statePath)
	case unchanged > 0:
		fmt.Fprintf(stdout, "%s had nothing new since last read to the end (by an earlier import, or by hookwatch serve as it follows the rollouts; the offsets are in %s).\n", counted(unchanged, "rollout file"), statePath)
	}
	if again > 0 {
		fmt.Fprintf(stdout, "%s shorter than when last read, or replaced, read again from the start.\n", counted(again, "rollout file"))
	}
	if left > 0 {
		fmt.Fprintf(stdout, "%s not written since %s left out (--since).\n", counted(left, "rollout file"), since.Local().Format(time.DateTime))
	}
	if len(sent) > 0 && had < calls+session+usage {
		waitModelled(ctx, base, token, slices.Sorted(maps.Keys(sent)), stdout, stderr)
	}
	sayLost(stderr, "rollout line", lost.Long, rollout.MaxLine, lost.Unreadable)
	if len(files) == 0 && left == 0 {
		// A directory of other files (Claude Code's transcripts, a wrong
		// one) or an empty one: said, as for transcripts.
		where := strings.Join(paths, ", ")
		if len(paths) == 0 {
			where, _ = codex.SessionsDir(os.Getenv)
		}
		hint := ""
		if len(paths) > 0 {
			if ts, err := importer.Find(paths); err == nil && len(ts) > 0 {
				hint = ": it holds Claude Code's transcripts, which hookwatch import without --codex reads"
			}
		}
		fmt.Fprintf(stderr, "hookwatch import: no Codex rollout (rollout-<time>-<id>.jsonl) in %s%s\n", where, hint)
	}
	return nil
}

// errNoCodexSessions is codexRollouts' error when, given no paths,
// codex.SessionsDir does not exist: Codex has not run as this user.
var errNoCodexSessions = errors.New("no Codex rollouts")

// codexRollouts returns the rollout files of paths, each a file or a
// directory searched below, sorted; no paths is every rollout under
// codex.SessionsDir, and when that does not exist the error, an
// errNoCodexSessions, says where it looked.
func codexRollouts(paths []string) ([]string, error) {
	if len(paths) == 0 {
		dir, err := codex.SessionsDir(os.Getenv)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s does not exist (Codex has not run as this user, or keeps its files elsewhere: set %s)", errNoCodexSessions, dir, codex.HomeEnv)
		}
		paths = []string{dir}
	}
	var out []string
	for _, p := range paths {
		// A directory is walked through its directories that are
		// symlinks (treewalk): p itself (~/.codex kept elsewhere and
		// linked) or one below it (a month moved to another disk). The
		// rollouts keep their paths through the links.
		err := treewalk.Walk(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil && path == p {
				return patherr.Strip(err, p) // the message names p
			}
			if err != nil {
				return err
			}
			if !d.IsDir() && (path == p || codex.IsRollout(path)) {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", p, err)
		}
	}
	sort.Strings(out)
	return out, nil
}

// storedOf returns the importer's Known, read from the collector's API:
// the session's tool calls and whether they ended, its agents and whether
// they stopped, and the prompt ids of its prompts. A session the collector
// does not have is known empty.
func storedOf(client *http.Client, base, token string) func(ctx context.Context, id string) (*importer.Known, error) {
	return func(ctx context.Context, id string) (*importer.Known, error) {
		k := &importer.Known{Calls: map[string]bool{}, Prompts: map[string]bool{}, Agents: map[string]bool{}}
		sess := base + "/v1/sessions/" + url.PathEscape(id)
		var calls struct {
			ToolCalls []struct {
				ToolUseID string `json:"tool_use_id"`
				Status    string `json:"status"`
			} `json:"tool_calls"`
			NextCursor string `json:"next_cursor"`
		}
		found, err := apiPages(ctx, client, base, token, sess+"/tool-calls?limit=1000", &calls, &calls.NextCursor, func() {
			for _, c := range calls.ToolCalls {
				k.Calls[c.ToolUseID] = c.Status != attribution.StatusPending
			}
		})
		if err != nil || !found {
			return k, err
		}
		var agents struct {
			Agents []struct {
				AgentID   string     `json:"agent_id"`
				StoppedAt *time.Time `json:"stopped_at"`
			} `json:"agents"`
			NextCursor string `json:"next_cursor"`
		}
		if _, err := apiPages(ctx, client, base, token, sess+"/agents?limit=1000", &agents, &agents.NextCursor, func() {
			for _, a := range agents.Agents {
				k.Agents[a.AgentID] = a.StoppedAt != nil
			}
		}); err != nil {
			return k, err
		}
		var prompts struct {
			Events []struct {
				PromptID string `json:"prompt_id"`
			} `json:"events"`
			NextCursor string `json:"next_cursor"`
		}
		_, err = apiPages(ctx, client, base, token, sess+"/events?event="+event.UserPromptSubmit+"&limit=1000", &prompts, &prompts.NextCursor, func() {
			for _, e := range prompts.Events {
				if e.PromptID != "" {
					k.Prompts[e.PromptID] = true
				}
			}
		})
		return k, err
	}
}

// apiPages GETs every page of a listing of the API into page (whose
// next_cursor is *next), calling each after each page; found is false when
// the API answers 404. base is the collector's, to name it in errors.
func apiPages(ctx context.Context, client *http.Client, base, token, u string, page any, next *string, each func()) (found bool, err error) {
	cursor := ""
	for {
		*next = ""
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+"&cursor="+url.QueryEscape(cursor), nil)
		if err != nil {
			return false, err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil && ctx.Err() != nil {
			return false, fmt.Errorf("cannot read %s: %w", u, err)
		} else if err != nil {
			return false, unreachable(base, err)
		}
		switch resp.StatusCode {
		case http.StatusNotFound:
			resp.Body.Close()
			return false, nil
		case http.StatusUnauthorized:
			// Its words tell a revoked token from a wrong one
			// (hook.RefusedToken).
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
			return false, errTokenRefused(base, body)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return false, fmt.Errorf("cannot read %s: HTTP %d", u, resp.StatusCode)
		}
		err = json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(page)
		resp.Body.Close()
		if err != nil {
			return false, fmt.Errorf("cannot read %s: %w", u, err)
		}
		each()
		if *next == "" || *next == cursor {
			return true, nil
		}
		cursor = *next
	}
}
