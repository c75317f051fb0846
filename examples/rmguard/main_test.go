package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/cmdhook"
	"github.com/hookwatch/hookwatch/event"
)

func TestRecursiveForce(t *testing.T) {
	f := func(cmd string, want bool) {
		t.Helper()
		if got := recursiveForce(cmd); got != want {
			t.Fatalf("%q: %v, want %v", cmd, got, want)
		}
	}
	f("rm -rf build", true)
	f("rm -fr build", true)
	f("rm -r -f build", true)
	f("rm --recursive --force build", true)
	f("cd /tmp && /bin/rm -Rf x", true)
	f("ls; rm -rf /", true)
	f("rm -r build", false)
	f("rm -f a.txt", false)
	f("echo rm -rf", true) // words, not shell: erring on the strict side
	f("grep -rf pattern", false)
	f("go vet ./...", false)
}

// TestReplay answers every recorded payload as Claude Code would receive it
// (a recorded rm -rf denied, nothing else answered), and the recorded Bash
// calls rewritten to rm -rf.
func TestReplay(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/payloads/*.jsonl")
	var corpus, dangerous bytes.Buffer
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		corpus.Write(b)
		for _, line := range bytes.Split(b, []byte("\n")) {
			p, ok := bashCall(line)
			if !ok {
				continue
			}
			p["tool_input"] = map[string]any{"command": "rm -rf ./build"}
			out, _ := json.Marshal(p)
			dangerous.Write(append(out, '\n'))
		}
	}
	results, err := cmdhook.Replay(context.Background(), guard, &corpus)
	if err != nil || len(results) < 100 {
		t.Fatalf("%d results, %v", len(results), err)
	}
	denied := 0
	for _, r := range results {
		p, bash := bashCall(r.Payload)
		in, _ := p["tool_input"].(map[string]any)
		command, _ := in["command"].(string)
		wantDeny := bash && recursiveForce(command)
		if r.ExitCode != 0 || r.Err != nil || wantDeny != strings.Contains(string(r.Stdout), `"permissionDecision":"deny"`) ||
			!wantDeny && len(r.Stdout) != 0 {
			t.Fatalf("line %d (%s): %s, exit %d, %v", r.Line, r.Event, r.Stdout, r.ExitCode, r.Err)
		}
		if wantDeny {
			denied++
		}
	}
	if denied == 0 {
		t.Fatal("no recorded rm -rf denied")
	}
	results, err = cmdhook.Replay(context.Background(), guard, &dangerous)
	if err != nil || len(results) == 0 {
		t.Fatalf("%d results, %v", len(results), err)
	}
	for _, r := range results {
		if r.ExitCode != 0 || !strings.Contains(string(r.Stdout), `"permissionDecision":"deny"`) {
			t.Fatalf("line %d: %s, exit %d", r.Line, r.Stdout, r.ExitCode)
		}
	}
}

// bashCall is the payload of a recorded line (raw or wrapped, as Replay
// reads it) when it is a PreToolUse of Bash.
func bashCall(line []byte) (map[string]any, bool) {
	raw, kind, _, err := event.RecordedPayload(line)
	var p map[string]any
	if err != nil || kind != event.KindHook || json.Unmarshal(raw, &p) != nil {
		return nil, false
	}
	return p, p["hook_event_name"] == "PreToolUse" && p["tool_name"] == "Bash"
}
