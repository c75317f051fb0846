package e2ecodex

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	fo "github.com/hookwatch/hookwatch/internal/fakeopenai"
)

// TestRolloutTail: `hookwatch serve` following Codex's rollouts as Codex
// writes them stores each rollout record's calls once, next to the hooks'
// events, and the session model counts each call once with the outcome
// the hooks lack (an exit code, a patch Codex refused, for which its
// PostToolUse fires as for a success); with no hook installed, the
// rollout alone gives the calls, the prompt, the model and the end; a
// later look at unchanged files stores nothing more.
func TestRolloutTail(t *testing.T) {
	e := New(t, ModelClassic, fo.Script{
		"Run two commands": {{fo.Exec("echo hi")}, {fo.Exec("echo bad; exit 3")},
			{fo.Patch("*** Begin Patch\n*** Update File: missing.md\n@@\n-old\n+new\n*** End Patch\n")}, {fo.Text("Two failed.")}},
		"Unwatched": {{fo.Exec("echo unseen")}, {fo.Text("Done.")}},
	})
	c := startCollector(t, "HOOKWATCH_CODEX_ROLLOUTS="+filepath.Join(e.CodexHome, "sessions"))
	e.Vars = c.vars
	e.RegisterHooks(c.hook)

	start := time.Now()
	if run := e.Exec("Run two commands"); run.Err != nil {
		t.Fatalf("codex exec: %v\n%s", run.Err, run.Stderr)
	}
	id := sessionOf(e.Rollouts()[0])
	want, total := fired(e, id)
	// The calls' PreToolUse and PostToolUse (PostToolUseFailure), the
	// prompt and exec's end, the 4 responses' usage.
	const rolloutN = 6 + 2 + 4
	evs := c.waitEvents(t, id, total+rolloutN)
	t.Logf("hook and rollout events stored %v after codex exec began; hooks fired %v", time.Since(start).Round(time.Millisecond), want)
	sameCounts(t, "stored hook events", countEvents(evs), want)
	if tools, session, usage := rolloutEvents(evs); tools != 6 || session != 2 || usage != 4 || len(evs) != total+rolloutN {
		t.Errorf("%d events stored, %d tool events, %d session events and %d usage records from the rollout; want %d hook events, 6, 2 and 4",
			len(evs), tools, session, usage, total)
	}
	// The rollout's records are no events of the session, for the store
	// and the model alike.
	if s := c.session(t, id); s.EventCount != int64(total) || s.Counts["events"] != total {
		t.Errorf("session counts %d events (model %d), want the %d hook events", s.EventCount, s.Counts["events"], total)
	}
	// What both reported, the events list shows once: each of the
	// rollout's records of a call's start or success, of the prompt and
	// of exec's end is a copy of the hook's event (its failures are not:
	// Codex's PostToolUse fired for them as for a success).
	for _, e := range evs {
		switch {
		case e.Envelope.Kind != "rollout" || e.Event == "TranscriptUsage" || e.Event == "PostToolUseFailure":
		case !e.Copy:
			t.Errorf("the rollout's %s is not marked a copy", e.Event)
		}
		if e.Envelope.Kind == "hook" && (e.Event == "SessionEnd" || e.Event == "UserPromptSubmit") && !slices.Equal(e.AlsoReadFrom, []string{"rollout"}) {
			t.Errorf("the hook's %s is also read from %v, want the rollout", e.Event, e.AlsoReadFrom)
		}
	}
	calls := c.toolCalls(t, id)
	if len(calls) != 3 {
		t.Fatalf("calls %v", calls)
	}
	for i, want := range []struct {
		status string
		exit   int
	}{{"ok", 0}, {"error", 3}} {
		if c := calls[i]; c.Status != want.status || c.ExitCode == nil || *c.ExitCode != want.exit || c.DurationMS == nil {
			t.Errorf("call %d: %v, want %s exit %d", i, c, want.status, want.exit)
		}
	}
	if p := calls[2]; p.ToolName != "apply_patch" || p.Status != "error" || !strings.HasPrefix(p.Error, "apply_patch verification failed") {
		t.Errorf("refused patch %v", p)
	}
	if s := c.session(t, id); s.Counts["failures"] != 2 {
		t.Errorf("session counts %v, want 2 failures", s.Counts)
	}

	// No hooks at all: the rollout is all there is.
	id2 := execUnwatched(t, e, "Unwatched", id)
	const unwatchedN = 2 + 2 + 2 // the call, the prompt and exec's end, 2 responses' usage
	c.waitEvents(t, id2, unwatchedN)
	calls = c.toolCalls(t, id2)
	if len(calls) != 1 || calls[0].ToolName != "Bash" || calls[0].Status != "ok" || calls[0].ExitCode == nil || *calls[0].ExitCode != 0 {
		t.Errorf("unwatched session's calls %v", calls)
	}
	checkUnwatched(t, c.session(t, id2), "Unwatched")

	// Nothing is stored twice by the looks that follow.
	time.Sleep(2500 * time.Millisecond)
	if n := len(c.events(t, id)); n != total+rolloutN {
		t.Errorf("%d events after more looks, want %d", n, total+rolloutN)
	}
	if n := len(c.events(t, id2)); n != unwatchedN {
		t.Errorf("unwatched session: %d events after more looks, want %d", n, unwatchedN)
	}
}

// TestRolloutWebSearch: a web search the model runs fires no hook; the
// collector following the rollout shows it as a call of its own.
func TestRolloutWebSearch(t *testing.T) {
	e := New(t, ModelClassic, fo.Script{"Look it up": {{fo.Search("hookwatch codex"), fo.Text("Found it.")}}})
	c := startCollector(t, "HOOKWATCH_CODEX_ROLLOUTS="+filepath.Join(e.CodexHome, "sessions"))
	e.Vars = c.vars
	e.RegisterHooks(c.hook)
	if run := e.Exec("Look it up"); run.Err != nil {
		t.Fatalf("codex exec: %v\n%s", run.Err, run.Stderr)
	}
	id := sessionOf(e.Rollouts()[0])
	want, total := fired(e, id)
	if want["PreToolUse"] != 0 {
		t.Fatalf("codex ran hooks %v", want)
	}
	evs := c.waitEvents(t, id, total+2+1) // the search's PreToolUse and PostToolUse, the response's usage
	sameCounts(t, "stored hook events", countEvents(evs), want)
	calls := c.toolCalls(t, id)
	if len(calls) != 1 || calls[0].ToolName != "web_search" || calls[0].Status != "ok" || !strings.Contains(string(calls[0].Input), "hookwatch codex") {
		t.Errorf("calls %v", calls)
	}
}
