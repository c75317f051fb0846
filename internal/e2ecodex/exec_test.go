package e2ecodex

import (
	"strings"
	"testing"

	fo "github.com/hookwatch/hookwatch/internal/fakeopenai"
)

const notesPatch = "*** Begin Patch\n*** Add File: notes.md\n+# Notes\n+secret-diff-body-line\n*** End Patch\n"

// TestExec: a shell command, an apply_patch, a command exiting 3, then a
// resume; every hook Codex ran is stored once, and the tool calls are what
// the model asked for, with the exit code the hooks do not carry.
func TestExec(t *testing.T) {
	c := startCollector(t)
	e := c.newEnv(t, ModelClassic, fo.Script{
		"Create the files": {
			{fo.Text("I'll create a file."), fo.Exec("echo hello > hi.txt && ls")},
			{fo.Patch(notesPatch)},
			{fo.Exec("echo bad; exit 3")},
			{fo.Text("Done, one command failed.")},
		},
		"Show the file": {
			{fo.Exec("cat hi.txt")},
			{fo.Text("It says hello.")},
		},
	})
	first := e.Exec("Create the files please")
	if first.Err != nil {
		t.Fatalf("codex exec: %v\n%s", first.Err, first.Stderr)
	}
	second := e.Resume("Show the file")
	if second.Err != nil {
		t.Fatalf("codex exec resume: %v\n%s", second.Err, second.Stderr)
	}
	rollouts := e.Rollouts()
	if len(rollouts) != 1 {
		t.Fatalf("rollouts %v", rollouts)
	}
	id := sessionOf(rollouts[0])

	want, total := fired(e, id)
	if want["PreToolUse"] != 4 || want["PostToolUse"] != 4 || want["SessionStart"] != 2 {
		t.Fatalf("codex ran hooks %v\n%s", want, first.Stderr)
	}
	evs := c.waitEvents(t, id, total)
	sameCounts(t, "stored events", countEvents(evs), want)
	seen := map[string]bool{}
	for _, ev := range evs {
		if seen[ev.Envelope.ID] {
			t.Errorf("envelope %s stored twice", ev.Envelope.ID)
		}
		seen[ev.Envelope.ID] = true
		if ev.Envelope.Runtime != "codex" {
			t.Errorf("%s runtime %q", ev.Event, ev.Envelope.Runtime)
		}
	}

	s := c.session(t, id)
	if s.Runtime != "codex" || s.Model != ModelClassic || len(s.Runs) != 2 || s.Runs[0].Source != "startup" || s.Runs[1].Source != "resume" {
		t.Errorf("session %+v", s)
	}
	calls := c.toolCalls(t, id)
	if len(calls) != 4 {
		t.Fatalf("%d tool calls: %v", len(calls), calls)
	}
	for i, want := range []struct {
		tool, status string
		exit         int
	}{{"Bash", "ok", 0}, {"apply_patch", "ok", -1}, {"Bash", "error", 3}, {"Bash", "ok", 0}} {
		got := calls[i]
		if got.ToolName != want.tool || got.Status != want.status || got.AgentID != "" || got.Depth != 0 {
			t.Errorf("call %d: %v, want %s %s", i, got, want.tool, want.status)
		}
		if got.EndedAt == nil || got.DurationMS == nil || *got.DurationMS < 0 || got.EndedAt.Before(got.StartedAt) {
			t.Errorf("call %d: no duration: %v", i, got)
		}
		if want.exit >= 0 && (got.ExitCode == nil || *got.ExitCode != want.exit) {
			t.Errorf("call %d: exit code %v, want %d", i, got, want.exit)
		}
	}
	patch := calls[1]
	if len(patch.Files) != 1 || patch.Files[0] != (apiFile{"add", "notes.md"}) {
		t.Errorf("apply_patch files %+v", patch.Files)
	}
	if strings.Contains(string(patch.Input), "secret-diff-body-line") {
		t.Errorf("apply_patch diff body stored: %s", patch.Input)
	}
	for _, ev := range evs {
		if strings.Contains(string(ev.Envelope.Payload), "secret-diff-body-line") {
			t.Errorf("%s stored the diff body: %s", ev.Event, ev.Envelope.Payload)
		}
	}
}
