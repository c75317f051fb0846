package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/store"
)

func init() {
	register(command{
		name:    "prune",
		summary: "delete the sessions whose latest event is older than a given age",
		run:     runPrune,
	})
}

// pruneBatch is the number of sessions one transaction of prune deletes:
// a collector running on the same database waits for one batch at most.
const pruneBatch = 100

const pruneSynopsis = `prune --older-than AGE [--dry-run] [--db PATH|URL]

Deletes from the database, directly, the sessions whose latest event is
older than AGE, with everything recorded of them (their compaction
archive in $HOOKWATCH_HOME/archive too), and says how many it deleted; a session still active is kept whole. It is what
'hookwatch serve --retain AGE' does in the background, once; a collector
may be running on the same database (it waits for one batch of 100
sessions at most). --dry-run says how many it would delete, and deletes
nothing.

Flags:`

// pruneExamples ends prune --help.
const pruneExamples = `
Examples:
  hookwatch prune --older-than 90d --dry-run
  hookwatch prune --older-than 90d
  hookwatch prune --older-than 2w   # HOOKWATCH_DB exported as postgres://…: a team server's database, its password kept out of ps
`

// pruneFlags are the values of prune's flags.
type pruneFlags struct {
	age    *duration
	dryRun *bool
	db     *string
}

// pruneFlagSet defines prune's flags: the one definition runPrune parses
// and the docs' command lines are checked against.
func pruneFlagSet(stdout, stderr io.Writer) (*flag.FlagSet, pruneFlags) {
	fs := newFlagSet("prune", pruneSynopsis, stdout, stderr)
	f := pruneFlags{age: new(duration)}
	fs.Var(f.age, "older-than", "delete the sessions whose latest event is older than this (90d, 36h, 2w; at least 1h: m is minutes)")
	f.dryRun = fs.Bool("dry-run", false, "say how many sessions and events would be deleted, and delete nothing")
	f.db = dbFlagVar(fs)
	usageTrailer(fs, pruneExamples)
	return fs, f
}

// runPrune is `hookwatch prune --older-than AGE`: the background retention
// of `serve --retain`, once, by hand.
func runPrune(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, f := pruneFlagSet(stdout, stderr)
	dryRun, dbFlag := f.dryRun, f.db
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	age := *f.age
	if age <= 0 {
		return fmt.Errorf("%w: prune needs --older-than AGE (90d, 36h, 2w)", errUsage)
	}
	if err := age.retention("older-than", "every session"); err != nil {
		return err
	}
	home := hook.Home(os.Getenv)
	db, name, err := openExistingStore(ctx, *dbFlag, home)
	if errors.Is(err, errNoDatabase) {
		return fmt.Errorf("cannot prune: %w", err)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	r, ok := db.(store.Retention)
	if !ok {
		return fmt.Errorf("the database %s cannot prune", name)
	}
	before := time.Now().Add(-time.Duration(age))
	if *dryRun {
		sessions, events, err := r.Prunable(ctx, before)
		if err != nil {
			return fmt.Errorf("cannot count what %s holds: %w", name, err)
		}
		fmt.Fprintf(stdout, "hookwatch prune: would delete %s and %s older than %s from %s (dry run: nothing deleted)\n",
			counted(sessions, "session"), counted(events, "event"), before.UTC().Format(time.RFC3339), name)
		return nil
	}
	var sessions, events int
	for {
		n, e, err := r.PruneSessions(ctx, before, pruneBatch)
		if err != nil {
			return fmt.Errorf("cannot prune %s (%d sessions, %d events deleted so far): %w", name, sessions, events, err)
		}
		sessions, events = sessions+n, events+e
		if n == 0 && e == 0 {
			break
		}
	}
	fmt.Fprintf(stdout, "hookwatch prune: deleted %s and %s older than %s from %s",
		counted(sessions, "session"), counted(events, "event"), before.UTC().Format(time.RFC3339), name)
	// The compaction archive of this machine's hooks holds a copy of the
	// deleted sessions' transcripts: it goes with them.
	dir := filepath.Join(home, "archive")
	archived, bytes, err := ingest.PruneArchives(dir, before, func(id string) (bool, error) {
		_, err := db.Session(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	})
	if archived > 0 {
		fmt.Fprintf(stdout, ", and the compaction archive of %s in %s (%d bytes)", counted(archived, "session"), dir, bytes)
	}
	fmt.Fprintln(stdout)
	if err != nil {
		return fmt.Errorf("cannot prune the compaction archive %s: %w", dir, err)
	}
	return nil
}

// duration is a flag value: a Go duration, or a number of days (d) or
// weeks (w).
type duration time.Duration

var _ flag.Value = (*duration)(nil)

func (d *duration) String() string { return time.Duration(*d).String() }

func (d *duration) Set(s string) error {
	v, err := parseAge(s)
	*d = duration(v)
	return err
}

// minRetention is the least age prune, serve --retain and --audit-retain take: what is
// more recent may be a session running now, and an age under an hour is
// far more often "1m" written for a month, which is a minute, than meant.
const minRetention = time.Hour

// retention checks d as the age of what --flag deletes, named by what
// ("every session", "the audit trail's files") in its error: minRetention
// or more. The error is a *flagRefusal of flag.
func (d duration) retention(flag, what string) error {
	if time.Duration(d) >= minRetention {
		return nil
	}
	return refuse(flag, fmt.Sprintf("--%s %v deletes %s older than %v: refused under %v (a month is 30d; m is minutes)", flag, time.Duration(d), what, time.Duration(d), minRetention))
}

// parseAge reads "90d", "2w", "36h", "90m"…: positive.
func parseAge(s string) (time.Duration, error) {
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if n := len(s); n > 1 && unit[s[n-1]] != 0 {
		v, err := strconv.ParseFloat(s[:n-1], 64)
		if err != nil || v <= 0 || v*float64(unit[s[n-1]]) > math.MaxInt64 {
			return 0, fmt.Errorf("%q: not a positive number of days or weeks", s)
		}
		return time.Duration(v * float64(unit[s[n-1]])), nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q: not a positive duration (90d, 2w, 36h)", s)
	}
	return v, nil
}

// byteSize is a flag value: a number of bytes with an optional unit (KB,
// MB, GB, TB: powers of 1000; KiB, MiB, GiB, TiB: of 1024).
type byteSize int64

var _ flag.Value = (*byteSize)(nil)

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(s string) error {
	v, err := parseSize(s)
	*b = byteSize(v)
	return err
}

func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mul    float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	num, mul := strings.TrimSpace(s), 1.0
	for _, u := range units {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mul = strings.TrimSpace(n), u.mul
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 || v*mul > math.MaxInt64 {
		return 0, errors.New("not a positive size (500MB, 10GB, 1GiB)")
	}
	return int64(v * mul), nil
}
