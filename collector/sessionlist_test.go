package collector_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/postgres"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// TestSessionListBytes holds the session list, written by hand, to what
// encoding/json wrote of the views it lists (view's SessionView), byte for
// byte, page by page: on the sessions of every capture (Claude Code
// 2.1.197 and 2.1.332 with a throwaway id folded into its session, forks,
// compactions and subagents; a Codex session; the public captures; a
// fork's transcript capture), and on shapes the captures lack: a session
// still running whose prompt and tool hold what the two encoders escape
// differently ('<', '>', '&', U+2028, text beyond ASCII), a capture of a
// subagent's events alone, a tool whose name json.Marshal stored escaped
// and a model stored by an older derivation. The last two are what the
// hand-written path leaves to encoding/json; the test checks that every
// other session is written by hand.
func TestSessionListBytes(t *testing.T) {
	db := sqlite.MustOpenDB(t)
	testSessionListBytes(t, newServerOn(t, patient, db), db)
}

// TestSessionListBytesPostgres is TestSessionListBytes on PostgreSQL, which
// keeps the summaries as bytes too.
func TestSessionListBytesPostgres(t *testing.T) {
	db := postgres.MustOpenDB(t, pgtest.NewDatabase(t))
	testSessionListBytes(t, newServerOn(t, patient, db), db)
}

func testSessionListBytes(t *testing.T, s *testServer, db store.Store) {
	envs := corpusEnvelopes(t)
	envs = append(envs, forkCaptureEnvelopes(t)...)
	at := len(envs) + 10
	ev := func(sid string, kv ...any) event.Envelope {
		at++
		return synth(at, append([]any{"session_id", sid, "cwd", "/work/list & <co>"}, kv...)...)
	}
	const running, escaped, subOnly, older = "s-running", "s-escaped", "s-sub-only", "s-older"
	call := func(sid, tool, id string, kv ...any) []event.Envelope {
		in := map[string]any{"command": "echo '<a>' && true"}
		return []event.Envelope{
			ev(sid, append([]any{"hook_event_name", "PreToolUse", "tool_name", tool, "tool_use_id", id, "tool_input", in}, kv...)...),
			ev(sid, append([]any{"hook_event_name", "PostToolUse", "tool_name", tool, "tool_use_id", id, "tool_input", in, "tool_response", map[string]any{"stdout": "ok"}}, kv...)...),
		}
	}
	envs = append(envs,
		ev(running, "hook_event_name", "SessionStart", "source", "startup", "model", "claude-<x>"),
		ev(running, "hook_event_name", "UserPromptSubmit", "prompt", "fix <div> & \"quotes\"\u2028 ünïcode ✓ \\ back\tslash"))
	envs = append(envs, call(running, "Bash", "toolu_r1")...)
	envs = append(envs,
		ev(escaped, "hook_event_name", "SessionStart", "source", "startup"),
		ev(escaped, "hook_event_name", "UserPromptSubmit", "prompt", "plain"))
	envs = append(envs, call(escaped, "mcp__a<b>__c&d", "toolu_e1")...)
	envs = append(envs, ev(escaped, "hook_event_name", "SessionEnd", "reason", "other"))
	sub := []any{"agent_id", "a-1", "agent_type", "Explore", "transcript_path", "/home/u/.claude/projects/-work-sub/" + subOnly + ".jsonl"}
	envs = append(envs, call(subOnly, "Read", "toolu_s1", sub...)...)
	envs = append(envs,
		ev(older, "hook_event_name", "SessionStart", "source", "startup"),
		ev(older, "hook_event_name", "UserPromptSubmit", "prompt", "older"))
	for i := 0; i < len(envs); i += 200 {
		if code, body := s.do(t, http.MethodPost, "/v1/events", batch(t, envs[i:min(i+200, len(envs))])); code != http.StatusOK {
			t.Fatalf("POST /v1/events: %d %s", code, body)
		}
	}
	views := s.settle(t)

	// A model stored by an older derivation, as the list serves it until
	// the collector derives it again.
	ctx := context.Background()
	ms, err := db.SessionModels(ctx, []string{older})
	if err != nil {
		t.Fatal(err)
	}
	m := ms[older]
	m.Version = attribution.ModelVersion - 1
	if err := db.PutModel(ctx, store.ModelBatch{Sessions: []store.SessionModel{m}}); err != nil {
		t.Fatal(err)
	}

	shapes := map[string]bool{}
	for _, v := range views {
		switch {
		case v.AliasOf != "":
			shapes["alias"] = true
		case v.Lineage == attribution.LineageFork:
			shapes["fork"] = true
		case v.Runtime == event.RuntimeCodex:
			shapes["codex"] = true
		}
		shapes[v.Status] = true
	}
	for _, want := range []string{"alias", "fork", "codex", attribution.SessionRunning, attribution.SessionEnded} {
		if !shapes[want] {
			t.Errorf("no session of shape %s among the %d listed", want, len(views))
		}
	}

	// Small pages, so that pages hold every mix of the two paths.
	const limit = 3
	listed, byHand := 0, 0
	for cursor := ""; ; {
		code, got := s.do(t, http.MethodGet, "/v1/sessions?limit="+strconv.Itoa(limit)+"&cursor="+url.QueryEscape(cursor), nil)
		if code != http.StatusOK {
			t.Fatalf("GET /v1/sessions: %d %s", code, got)
		}
		want, n, err := s.SessionsPageByReflection(ctx, store.SessionFilter{Cursor: cursor, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("page at %q:\n%s\nencoding/json:\n%s", cursor, got, want)
		}
		var page struct {
			Sessions []struct {
				ID string `json:"id"`
			} `json:"sessions"`
			NextCursor string `json:"next_cursor"`
		}
		if err := json.Unmarshal(got, &page); err != nil {
			t.Fatal(err)
		}
		listed += len(page.Sessions)
		byHand += n
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	// What encoding/json writes: the older model, and the session whose
	// tool's name json.Marshal stored escaped.
	if listed != len(views) || byHand != listed-2 {
		t.Errorf("%d sessions listed (%d settled), %d written by hand, want all but 2", listed, len(views), byHand)
	}
}

// forkCaptureEnvelopes are the envelopes of the 2.1.197 fork capture.
func forkCaptureEnvelopes(t *testing.T) []event.Envelope {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "attribution", "testdata", "claude-fork-2.1.197", "envelopes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []event.Envelope
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e event.Envelope
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil || len(out) == 0 {
		t.Fatalf("the fork capture: %d envelopes, %v", len(out), err)
	}
	return out
}

// TestSessionListFields: the members of a SessionView are those the list
// writes by hand (appendListed), in its order; a field added to the view,
// or to the stored session it embeds, fails here until the list writes it.
func TestSessionListFields(t *testing.T) {
	var names []string
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Anonymous {
				walk(f.Type)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			names = append(names, name)
		}
	}
	walk(reflect.TypeFor[collector.SessionView]())
	want := []string{"id", "runtime", "cwd", "transcript_path", "host", "user", "first_event_at", "last_event_at", "event_count", "last_seq",
		"title", "model", "permission_mode", "source", "ended_at", "end_reason", "project", "project_name", "status", "effort", "resume",
		"parent_session_id", "lineage", "child_session_ids", "alias_session_ids", "alias_of", "phantom", "probe",
		"runs", "compactions", "counts", "usage", "turns", "shape", "tools", "derived_seq", "model_seq",
		"agent_id", "agent"} // the last two: a virtual session's, never listed
	if !slices.Equal(names, want) {
		t.Fatalf("SessionView's members:\n%v\nthe list writes:\n%v", names, want)
	}
}
