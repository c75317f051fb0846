package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/postgres"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
)

func TestParseAge(t *testing.T) {
	f := func(in string, want time.Duration) {
		t.Helper()
		got, err := parseAge(in)
		if want < 0 {
			if err == nil {
				t.Errorf("parseAge(%q) = %v, want an error", in, got)
			}
			return
		}
		if err != nil || got != want {
			t.Errorf("parseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	f("90d", 90*24*time.Hour)
	f("2w", 14*24*time.Hour)
	f("1.5d", 36*time.Hour)
	f("36h", 36*time.Hour)
	f("90m", 90*time.Minute)
	f("0d", -1)
	f("-3d", -1)
	f("d", -1)
	f("1y", -1)
	f("", -1)
	f("1e300d", -1)
}

func TestParseSize(t *testing.T) {
	f := func(in string, want int64) {
		t.Helper()
		got, err := parseSize(in)
		if want < 0 {
			if err == nil {
				t.Errorf("parseSize(%q) = %v, want an error", in, got)
			}
			return
		}
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	f("10GB", 10e9)
	f("1GiB", 1<<30)
	f("500 MB", 500e6)
	f("4096", 4096)
	f("12B", 12)
	f("0", -1)
	f("-1GB", -1)
	f("GB", -1)
	f("10XB", -1)
}

// TestPruneRefusesRecentAges: an age under an hour, "1m" written for a
// month most often, deletes nothing, in prune and in serve --retain alike.
func TestPruneRefusesRecentAges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hw.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.MustEvent(t, storetest.Envelope(event.RuntimeClaudeCode, time.Now().Add(-10*time.Minute),
		storetest.P("session_id", "ten-minutes-old", "hook_event_name", "Stop")))
	if _, err := db.Insert(context.Background(), []store.Event{st}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, args := range [][]string{
		{"prune", "--older-than", "1m", "--db", path},
		{"prune", "--older-than", "59m", "--db", path},
		{"serve", "--retain", "5m", "--db", path, "--addr", "127.0.0.1:0"},
	} {
		err := run(context.Background(), args, nil, io.Discard, io.Discard)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "a month is 30d") {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	db, err = sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Session(context.Background(), "ten-minutes-old"); err != nil {
		t.Errorf("the session is gone: %v", err)
	}
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"prune", "--older-than", "1h", "--db", path}, nil, &stdout, io.Discard); err != nil || !strings.Contains(stdout.String(), "deleted 0 sessions") {
		t.Errorf("prune --older-than 1h: %v, %q", err, stdout.String())
	}
}

// TestPrune runs `hookwatch prune` on both backends: the old session goes,
// whole, the recent one stays.
func TestPrune(t *testing.T) {
	t.Setenv("HOOKWATCH_HOME", filepath.Join(t.TempDir(), "home"))
	t.Setenv("HOOKWATCH_DB", "")
	f := func(t *testing.T, dsn string, open func() store.Store) {
		st := open()
		old := storetest.MustEvent(t, storetest.Envelope(event.RuntimeClaudeCode, time.Now().Add(-100*24*time.Hour),
			storetest.P("session_id", "old", "hook_event_name", "Stop")))
		recent := storetest.MustEvent(t, storetest.Envelope(event.RuntimeClaudeCode, time.Now(),
			storetest.P("session_id", "recent", "hook_event_name", "Stop")))
		if _, err := st.Insert(context.Background(), []store.Event{old, recent}); err != nil {
			t.Fatal(err)
		}
		st.Close()
		var stdout bytes.Buffer
		// A dry run says what the prune below deletes, and deletes nothing.
		for range 2 {
			stdout.Reset()
			if err := run(context.Background(), []string{"prune", "--older-than", "90d", "--dry-run", "--db", dsn}, nil, &stdout, io.Discard); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stdout.String(), "would delete 1 session and 1 event older than") || !strings.Contains(stdout.String(), "nothing deleted") {
				t.Errorf("prune --dry-run printed %q", stdout.String())
			}
		}
		stdout.Reset()
		if err := run(context.Background(), []string{"prune", "--older-than", "90d", "--db", dsn}, nil, &stdout, io.Discard); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stdout.String(), "deleted 1 session and 1 event older than") {
			t.Errorf("prune printed %q", stdout.String())
		}
		st = open()
		defer st.Close()
		if _, err := st.Session(context.Background(), "old"); err == nil {
			t.Error("the old session is still there")
		}
		if _, err := st.Session(context.Background(), "recent"); err != nil {
			t.Errorf("the recent session is gone: %v", err)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "hw.db")
		f(t, path, func() store.Store {
			db, err := sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			return db
		})
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		f(t, url, func() store.Store { return postgres.MustOpenDB(t, url) })
	})
	if err := run(context.Background(), []string{"prune"}, nil, io.Discard, io.Discard); err == nil {
		t.Error("prune without --older-than succeeded")
	}
	// A database that is not there is not made, and nothing is said
	// deleted from it.
	missing := filepath.Join(t.TempDir(), "gone.db")
	err := run(context.Background(), []string{"prune", "--older-than", "90d", "--db", missing}, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "cannot prune: no database at "+missing) {
		t.Errorf("prune of a missing database: %v", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("prune made %s: %v", missing, err)
	}
	// Nor is an empty file (touched, or cut to nothing) made one.
	empty := filepath.Join(t.TempDir(), "empty.db")
	os.WriteFile(empty, nil, 0o600)
	err = run(context.Background(), []string{"prune", "--older-than", "90d", "--db", empty}, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "cannot prune: no database at "+empty) {
		t.Errorf("prune of an empty file: %v", err)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("prune changed the empty file %s: %v", empty, err)
	}
}

// TestPruneArchives: prune deletes the compaction archive of the sessions
// it deleted, under the home's archive directory, and keeps the others'.
func TestPruneArchives(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("HOOKWATCH_HOME", home)
	t.Setenv("HOOKWATCH_DB", "")
	path := filepath.Join(home, "hookwatch.db")
	os.MkdirAll(home, 0o700)
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-100 * 24 * time.Hour)
	old := storetest.MustEvent(t, storetest.Envelope(event.RuntimeClaudeCode, long, storetest.P("session_id", "old", "hook_event_name", "Stop")))
	recent := storetest.MustEvent(t, storetest.Envelope(event.RuntimeClaudeCode, time.Now(), storetest.P("session_id", "recent", "hook_event_name", "Stop")))
	if _, err := st.Insert(context.Background(), []store.Event{old, recent}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	archive := func(session string) string {
		d := filepath.Join(home, "archive", session, "main")
		os.MkdirAll(d, 0o700)
		name := filepath.Join(d, long.UTC().Format("20060102T150405.000000000Z")+".jsonl")
		if err := os.WriteFile(name, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(name, long, long)
		return filepath.Join(home, "archive", session)
	}
	oldDir, recentDir := archive("old"), archive("recent")
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"prune", "--older-than", "90d"}, nil, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(oldDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the archive of the deleted session is still there: %v", err)
	}
	if _, err := os.Stat(recentDir); err != nil {
		t.Errorf("the archive of the kept session is gone: %v", err)
	}
	if !strings.Contains(stdout.String(), "and the compaction archive of 1 session") {
		t.Errorf("prune printed %q", stdout.String())
	}
}

// TestServeAuditRetainRefused: --audit-retain under an hour, or without an
// audit directory to prune, is a usage error, before anything starts; so
// is --retain or prune --older-than under an hour.
func TestServeAuditRetainRefused(t *testing.T) {
	t.Setenv("HOOKWATCH_HOME", filepath.Join(t.TempDir(), "home"))
	path := filepath.Join(t.TempDir(), "hw.db")
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--audit-dir", dir, "--audit-retain", "5m", "--db", path, "--addr", "127.0.0.1:0"}, "--audit-retain 5m0s deletes the audit trail's files older than 5m0s: refused under 1h0m0s (a month is 30d"},
		// What each flag deletes is what its error names.
		{[]string{"serve", "--retain", "5m", "--db", path, "--addr", "127.0.0.1:0"}, "--retain 5m0s deletes every session older than 5m0s"},
		{[]string{"prune", "--older-than", "5m", "--db", path}, "--older-than 5m0s deletes every session older than 5m0s"},
		{[]string{"serve", "--audit-retain", "90d", "--db", path, "--addr", "127.0.0.1:0"}, "--audit-dir"},
	} {
		err := run(context.Background(), tc.args, nil, io.Discard, io.Discard)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}
