package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hookwatch/hookwatch/export/otlp"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// exportOTLP sends the traces of stored sessions to the receiver c: the
// sessions ids, or with none every session active since since (most
// recently active first). It prints one line per session.
func exportOTLP(ctx context.Context, st store.Store, ids []string, since time.Time, c *otlp.Client, stdout io.Writer) error {
	if len(ids) == 0 {
		var err error
		if ids, err = sessionsSince(ctx, st, since); err != nil {
			return err
		}
	}
	url, err := c.URL()
	if err != nil {
		return err
	}
	total := 0
	for _, id := range ids {
		n, err := otlp.ExportSession(ctx, st, id, c.Send, 0)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no session %s in the database (or no model of it yet: let `hookwatch serve` run on it once)", id)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "session %s: %d spans (trace %x)\n", id, n, otlp.TraceID(id))
		total += n
	}
	fmt.Fprintf(stdout, "%d sessions, %d spans sent to %s\n", len(ids), total, url)
	return nil
}

// sessionsSince lists the sessions whose latest event is at or after since.
func sessionsSince(ctx context.Context, st store.Store, since time.Time) ([]string, error) {
	var ids []string
	f := store.SessionFilter{Limit: store.MaxLimit}
	for {
		page, err := st.Sessions(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("cannot list the sessions: %w", err)
		}
		for _, s := range page.Sessions {
			if s.LastEventAt.Before(since) {
				return ids, nil // most recently active first: the rest are older
			}
			ids = append(ids, s.ID)
		}
		if f.Cursor = page.Next; f.Cursor == "" {
			return ids, nil
		}
	}
}

// openExportDB opens the database export reads: --db, else HOOKWATCH_DB,
// else the one in the data directory.
func openExportDB(path string) (*sqlite.DB, error) {
	if path == "" {
		path = os.Getenv("HOOKWATCH_DB")
	}
	if path == "" {
		home, err := serveHome()
		if err != nil {
			return nil, err
		}
		path = filepath.Join(home, "hookwatch.db")
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("cannot open the database: %w", err)
	}
	db, err := sqlite.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open the database: %w", err)
	}
	return db, nil
}
