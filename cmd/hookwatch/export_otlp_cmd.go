package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// A minimal `hookwatch export` that knows only --format otlp, for as long
// as no other file registers the export command (the JSONL audit trail's):
// files initialise in name order, so that one, export.go, comes first and
// this one then stays out of its way.
func init() {
	if _, ok := commands["export"]; ok {
		return
	}
	register(command{
		name:    "export",
		summary: "send past sessions to an OTLP receiver as traces",
		run:     runExportOTLPOnly,
	})
}

// runExportOTLPOnly is `hookwatch export --format otlp`.
func runExportOTLPOnly(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", "export --format otlp (--session ID | --since TIME) --otlp-endpoint URL [--otlp-header k=v] [--db PATH]", stderr)
	session := fs.String("session", "", "the session to export")
	since := fs.String("since", "", "export every session active since TIME: RFC 3339 (2026-11-21T15:00:00Z) or a duration back from now (24h)")
	format := fs.String("format", "otlp", "output format: otlp")
	dbFlag := fs.String("db", "", "SQLite database path (env HOOKWATCH_DB; default $HOOKWATCH_HOME/hookwatch.db)")
	traces := addOTLPFlags(fs)
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	if *format != "otlp" {
		return fmt.Errorf("%w: unknown format %q (want otlp)", errUsage, *format)
	}
	if (*session == "") == (*since == "") {
		return fmt.Errorf("%w: give --session ID or --since TIME", errUsage)
	}
	c, err := traces.client()
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if c == nil {
		return fmt.Errorf("%w: give --otlp-endpoint URL (or HOOKWATCH_OTLP_ENDPOINT)", errUsage)
	}
	path := *dbFlag
	if path == "" {
		path = os.Getenv("HOOKWATCH_DB")
	}
	if path == "" {
		home, err := serveHome()
		if err != nil {
			return err
		}
		path = filepath.Join(home, "hookwatch.db")
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("cannot export: no database at %s (set --db or HOOKWATCH_DB): %w", path, err)
	}
	db, err := sqlite.Open(path)
	if err != nil {
		return fmt.Errorf("cannot open the database: %w", err)
	}
	defer db.Close()
	ids := []string{*session}
	if *session == "" {
		from, err := time.Parse(time.RFC3339Nano, *since)
		if err != nil {
			d, derr := time.ParseDuration(*since)
			if derr != nil || d <= 0 {
				return fmt.Errorf("%w: --since %q is neither an RFC 3339 time nor a duration such as 24h", errUsage, *since)
			}
			from = time.Now().Add(-d)
		}
		if ids, err = activeSince(ctx, db, from); err != nil {
			return err
		}
	} else if _, err := db.Session(ctx, *session); errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("cannot export: no session %q in %s", *session, path)
	} else if err != nil {
		return fmt.Errorf("cannot export: %w", err)
	}
	return exportOTLP(ctx, db, ids, c, stdout)
}

// activeSince lists the sessions whose latest event is at or after from.
func activeSince(ctx context.Context, st store.Store, from time.Time) ([]string, error) {
	var ids []string
	f := store.SessionFilter{Limit: store.MaxLimit}
	for {
		page, err := st.Sessions(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("cannot list the sessions: %w", err)
		}
		for _, s := range page.Sessions {
			if s.LastEventAt.Before(from) {
				return ids, nil // most recently active first: the rest are older
			}
			ids = append(ids, s.ID)
		}
		if f.Cursor = page.Next; f.Cursor == "" {
			return ids, nil
		}
	}
}
