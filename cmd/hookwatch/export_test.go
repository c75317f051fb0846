package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// exportDB fills a SQLite file through a real collector with the 2.1.197
// capture (a session with two subagents and a failure), waits for its
// model, and returns the file's path.
func exportDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := collector.New(collector.Config{Store: db, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	t0 := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	var envs []event.Envelope
	for _, p := range corpus.Load(t) {
		if strings.HasPrefix(p.Label, "claude-code-2.1.197.jsonl:") {
			at := t0.Add(time.Duration(len(envs)) * 250 * time.Millisecond)
			envs = append(envs, event.Envelope{ID: event.NewID(at), Runtime: p.Runtime, Kind: event.KindHook, ReceivedAt: at, Payload: p.JSON})
		}
	}
	body, err := json.Marshal(map[string]any{"envelopes": envs})
	if err != nil {
		t.Fatal(err)
	}
	res, err := hs.Client().Post(hs.URL+"/v1/events", "application/json", bytes.NewReader(body))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("POST: %v %v", res, err)
	}
	res.Body.Close()
	// A read of the session waits for its model.
	if r, err := hs.Client().Get(hs.URL + "/v1/sessions/" + mainSession + "/tool-calls"); err != nil {
		t.Fatal(err)
	} else {
		r.Body.Close()
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return path
}

const mainSession = "0e2e0b5d-7136-4322-8086-c38ed16b10ad"

func TestExportAndVerify(t *testing.T) {
	t.Setenv("HOOKWATCH_HOME", t.TempDir())
	t.Setenv("HOOKWATCH_DB", exportDB(t))
	out := t.TempDir()
	runOK := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, nil, &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		if stderr.Len() > 0 {
			t.Fatalf("%v wrote to stderr (no progress bar off a terminal): %q", args, stderr.String())
		}
		return stdout.String()
	}
	got := runOK("export", "--session", mainSession, "--out", out)
	if want := filepath.Join(out, mainSession) + ": 52 events, 12 tool calls\n"; got != want {
		t.Fatalf("export printed %q, want %q", got, want)
	}
	got = runOK("audit", "verify", out)
	if strings.Count(got, "OK ") != 2 || !strings.Contains(got, "52 lines") || !strings.Contains(got, "12 lines") {
		t.Fatalf("verify printed %q", got)
	}

	// --since takes every session of the capture.
	all := t.TempDir()
	got = runOK("export", "--since", "2026-11-21", "--out", all, "--format", "jsonl")
	if strings.Count(got, "\n") != 3 {
		t.Fatalf("export --since printed %q", got)
	}

	// --since into a directory holding one of its sessions already: the
	// others are exported, the one left out is named, the error counts both.
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"export", "--since", "2026-11-21", "--out", out}, nil, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "1 of 3 sessions not exported") || !strings.Contains(err.Error(), "the other 2 were") || exitCode(err, io.Discard) != 1 {
		t.Fatalf("export --since over an exported session: %v", err)
	}
	if strings.Count(stdout.String(), "\n") != 2 || strings.Contains(stdout.String(), mainSession) {
		t.Fatalf("export --since over an exported session printed %q, want the two others", stdout.String())
	}
	if !strings.Contains(stderr.String(), "session "+mainSession+" not exported: ") {
		t.Fatalf("export --since over an exported session did not name it on stderr: %q", stderr.String())
	}
	got = runOK("audit", "verify", out)
	// Two of the sessions made no tool call: their tool_calls.jsonl is
	// empty, told as such, and no failure beside their events.
	if strings.Count(got, "OK ") != 4 || strings.Count(got, "EMPTY ") != 2 {
		t.Fatalf("verify after the partial export printed %q, want every stream of the three sessions OK, but two without a line EMPTY", got)
	}
	err = run(context.Background(), []string{"export", "--since", "2026-11-21", "--out", out}, nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "no session exported: the directories of all 3 already hold an audit trail") {
		t.Fatalf("export --since over every exported session: %v", err)
	}

	// A removed line fails verification with exit status 1.
	path := filepath.Join(out, mainSession, "tool_calls.jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ls := bytes.SplitAfter(b, []byte("\n"))
	if err := os.WriteFile(path, bytes.Join(append(ls[:3:3], ls[4:]...), nil), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	err = run(context.Background(), []string{"audit", "verify", path}, nil, &stdout, &bytes.Buffer{})
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(stdout.String(), "FAIL "+path+":4: removed:") {
		t.Fatalf("verify of a trail without its line 4: %v, %q", err, stdout.String())
	}

	// Errors a user can act on.
	f := func(wantErr string, args ...string) {
		t.Helper()
		err := run(context.Background(), args, nil, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("%v: %v, want an error with %q", args, err, wantErr)
		}
	}
	f("already holds an audit trail", "export", "--session", mainSession, "--out", out)
	f(`no session "nope"`, "export", "--session", "nope", "--out", t.TempDir())
	f("give --session ID or --since TIME", "export", "--out", t.TempDir())
	f(`unknown format "xml"`, "export", "--session", mainSession, "--format", "xml")
	f("neither an RFC 3339 time", "export", "--since", "yesterday")
	f("no database at", "export", "--session", mainSession, "--db", filepath.Join(t.TempDir(), "none.db"))
	// Without --db: HOOKWATCH_DB, else the home's, as openStore reads them.
	missing := filepath.Join(t.TempDir(), "gone.db")
	t.Setenv("HOOKWATCH_DB", missing)
	f("no database at "+missing, "export", "--session", mainSession)
	home := t.TempDir()
	t.Setenv("HOOKWATCH_DB", "")
	t.Setenv("HOOKWATCH_HOME", home)
	f("no database at "+filepath.Join(home, "hookwatch.db"), "export", "--session", mainSession)
	f("want audit verify", "audit", "check", out)

	// A path that cannot be verified (missing, holding no trail) is told
	// on stderr, and the trails of the other paths are verified all the
	// same: the verdict is exit status 1.
	gone, empty := filepath.Join(t.TempDir(), "gone"), t.TempDir()
	stdout.Reset()
	stderr.Reset()
	err = run(context.Background(), []string{"audit", "verify", gone, all, empty}, nil, &stdout, &stderr)
	if !errors.As(err, &ee) || ee.code != 1 || exitCode(err, io.Discard) != 1 {
		t.Fatalf("verify of a missing path, a trail and an empty directory: %v, want exit status 1", err)
	}
	if strings.Count(stdout.String(), "OK ") != 4 || strings.Count(stdout.String(), "EMPTY ") != 2 {
		t.Fatalf("verify after a missing path printed %q, want every stream of the three sessions after it OK", stdout.String())
	}
	wantErr := "hookwatch: cannot verify " + gone + ": no such file or directory\n" +
		"hookwatch: cannot verify " + empty + ": no events.jsonl or tool_calls.jsonl in it or in its subdirectories\n"
	if stderr.String() != wantErr {
		t.Fatalf("verify of paths it cannot verify said %q, want %q", stderr.String(), wantErr)
	}

	// An empty stream proves nothing: an empty file alone, or a session
	// whose streams are all empty, is no pass; an empty stream beside one
	// that verified lines (a session without tool calls) is.
	emptyFile := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(emptyFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	err = run(context.Background(), []string{"audit", "verify", emptyFile}, nil, &stdout, &stderr)
	if exitCode(err, io.Discard) != 1 || stdout.String() != "EMPTY "+emptyFile+": no lines to verify\n" ||
		!strings.Contains(stderr.String(), "nothing verified in "+emptyFile) {
		t.Fatalf("verify of an empty file: %v, stdout %q, stderr %q; want EMPTY and exit status 1", err, stdout.String(), stderr.String())
	}
	session := filepath.Join(all, mainSession)
	if err := os.WriteFile(filepath.Join(session, "tool_calls.jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"audit", "verify", session}, nil, &stdout, &bytes.Buffer{}); err != nil ||
		!strings.Contains(stdout.String(), "OK   "+filepath.Join(session, "events.jsonl")+": 52 lines") ||
		!strings.Contains(stdout.String(), "EMPTY "+filepath.Join(session, "tool_calls.jsonl")+": no lines to verify") {
		t.Fatalf("verify of a session with no tool call: %v, %q; want events OK, tool calls EMPTY, exit status 0", err, stdout.String())
	}
	if err := os.WriteFile(filepath.Join(session, "events.jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"audit", "verify", session}, nil, &bytes.Buffer{}, &bytes.Buffer{}); exitCode(err, io.Discard) != 1 {
		t.Fatalf("verify of a session whose streams are both empty: %v, want exit status 1", err)
	}
}

// TestExportFailureKeepsNothing: an export that cannot write its trail (a
// file size limit, as a full disk) says so and leaves nothing of the
// session behind, so that the same export, run again once there is room,
// writes it whole into the same --out.
func TestExportFailureKeepsNothing(t *testing.T) {
	db := exportDB(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "trail")
	// 40 KiB (POSIX counts 512-byte blocks): room for the database's
	// shared memory file (32 KiB), not for the session's events (55 KiB).
	cmd := exec.Command("/bin/sh", "-c", `ulimit -f 80 && exec "$0" "$@"`, self, "export", "--session", mainSession, "--out", out, "--db", db)
	cmd.Env = append(os.Environ(), "HOOKWATCH_TEST_MAIN=1", "HOOKWATCH_HOME="+t.TempDir())
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("export beyond the file size limit: %v, want exit status 1\n%s", err, b)
	}
	if !strings.Contains(string(b), "session "+mainSession+" not exported, nothing of it kept: ") || !strings.Contains(string(b), "file too large") {
		t.Fatalf("export beyond the file size limit said %q", b)
	}
	if _, err := os.Stat(filepath.Join(out, mainSession)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("export beyond the file size limit left its session directory: %v", err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"export", "--session", mainSession, "--out", out, "--db", db}, nil, &stdout, &stderr); err != nil {
		t.Fatalf("export again, without the limit: %v\n%s", err, stderr.String())
	}
	if want := filepath.Join(out, mainSession) + ": 52 events, 12 tool calls\n"; stdout.String() != want {
		t.Fatalf("export again printed %q, want %q", stdout.String(), want)
	}
}

// TestParseSince: --since takes a time, a date, or an age as prune's
// --older-than does (days and weeks included).
func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2026-11-21T15:00:00Z": time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC),
		"2026-11-21":           time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC),
		"24h":                  now.Add(-24 * time.Hour),
		"7d":                   now.Add(-7 * 24 * time.Hour),
		"2w":                   now.Add(-14 * 24 * time.Hour),
		"1.5d":                 now.Add(-36 * time.Hour),
	} {
		if got, err := parseSince(in, now); err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "yesterday", "-3d", "0d", "0s", "d", "7x"} {
		if got, err := parseSince(in, now); err == nil || !strings.Contains(err.Error(), "an age such as 7d or 24h") {
			t.Errorf("parseSince(%q) = %v, %v; want an error", in, got, err)
		}
	}
}

// TestProgressSkip: the bar of an export that leaves sessions out fills
// with what it writes: their events leave the total.
func TestProgressSkip(t *testing.T) {
	var b strings.Builder
	p := &progress{w: &b, total: 3000}
	p.skip(1000)
	p.set("s2", 2000)
	if !strings.Contains(b.String(), "100% 2000/2000 events") {
		t.Errorf("the bar after 2000 of the 2000 events left to write: %q", b.String())
	}
	var none *progress
	none.skip(5) // no bar: nothing to take from
}

// TestExportSessionPrefix: --session takes the start of an id, at least
// the 8 characters that sessions diff and the listings print, as sessions
// diff takes it; a shorter one is no session.
func TestExportSessionPrefix(t *testing.T) {
	t.Setenv("HOOKWATCH_HOME", t.TempDir())
	t.Setenv("HOOKWATCH_DB", exportDB(t))
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"export", "--session", mainSession[:8], "--out", out}, nil, &stdout, &stderr); err != nil {
		t.Fatalf("export --session %s: %v\n%s", mainSession[:8], err, stderr.String())
	}
	if want := filepath.Join(out, mainSession) + ": 52 events, 12 tool calls\n"; stdout.String() != want {
		t.Fatalf("export --session %s printed %q, want %q", mainSession[:8], stdout.String(), want)
	}
	err := run(context.Background(), []string{"export", "--session", mainSession[:7], "--out", t.TempDir()}, nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `no session "`+mainSession[:7]+`"`) {
		t.Fatalf("export --session %s: %v, want no such session", mainSession[:7], err)
	}
}
