package ingest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/privacy"
	"github.com/hookwatch/hookwatch/stale"
)

// realRead returns a real PostToolUse of a Read (Claude Code 2.1.332), as
// a map to edit.
func realRead(t testing.TB) map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "payloads", "claude-code-2.1.332.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["hook_event_name"] == "PostToolUse" && m["tool_name"] == "Read" {
			return m
		}
	}
	t.Fatal("no PostToolUse of a Read in the corpus")
	return nil
}

// TestRecordFiles: a PostToolUse of a file tool carries the state of its
// file as the hook found it (absolute or relative to cwd); other tools,
// files that cannot be read, paths holding a secret and a pipeline that
// records nothing carry none; the state survives the envelope's encoding.
func TestRecordFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want, err := stale.Take(file)
	if err != nil {
		t.Fatal(err)
	}
	run := func(record bool, edit func(m map[string]any)) []event.FileState {
		t.Helper()
		m := realRead(t)
		m["cwd"] = dir
		m["tool_input"] = map[string]any{"file_path": file}
		edit(m)
		data, _ := json.Marshal(m)
		pl := ingest.Pipeline{Privacy: privacy.DefaultOptions(), RecordFiles: record}
		out, err := pl.Run(context.Background(), data)
		if err != nil {
			t.Fatal(err)
		}
		var back event.Envelope
		if err := json.Unmarshal(out.Envelope.AppendJSON(nil), &back); err != nil {
			t.Fatal(err)
		}
		return back.Files
	}
	one := func(name string, got []event.FileState) {
		t.Helper()
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s: recorded %+v, want %+v", name, got, want)
		}
	}
	none := func(name string, got []event.FileState) {
		t.Helper()
		if len(got) != 0 {
			t.Errorf("%s: recorded %+v, want none", name, got)
		}
	}
	one("Read", run(true, func(map[string]any) {}))
	one("relative path", run(true, func(m map[string]any) { m["tool_input"] = map[string]any{"file_path": "notes.txt"} }))
	for _, tool := range []string{"Write", "Edit", "MultiEdit"} {
		one(tool, run(true, func(m map[string]any) { m["tool_name"] = tool }))
	}
	one("NotebookEdit", run(true, func(m map[string]any) {
		m["tool_name"], m["tool_input"] = "NotebookEdit", map[string]any{"notebook_path": file}
	}))
	none("not recording", run(false, func(map[string]any) {}))
	none("Bash", run(true, func(m map[string]any) {
		m["tool_name"], m["tool_input"] = "Bash", map[string]any{"command": "cat " + file}
	}))
	none("PreToolUse", run(true, func(m map[string]any) { m["hook_event_name"] = "PreToolUse" }))
	none("missing file", run(true, func(m map[string]any) { m["tool_input"] = map[string]any{"file_path": file + ".gone"} }))
	none("directory", run(true, func(m map[string]any) { m["tool_input"] = map[string]any{"file_path": dir} }))
	secretDir := filepath.Join(dir, ghp)
	if err := os.Mkdir(secretDir, 0o700); err != nil {
		t.Fatal(err)
	}
	secretFile := filepath.Join(secretDir, "x.txt")
	if err := os.WriteFile(secretFile, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := run(true, func(m map[string]any) { m["tool_input"] = map[string]any{"file_path": secretFile} })
	none("a path holding a secret", got)
	for _, f := range got {
		if strings.Contains(f.Path, ghp) {
			t.Errorf("a secret on the envelope: %+v", f)
		}
	}
}

// TestAdmitFiles: an envelope made elsewhere keeps the file states whose
// path holds no secret, and loses the others.
func TestAdmitFiles(t *testing.T) {
	clean := event.FileState{Path: "/p/a.go", MtimeNS: 1, Size: 2}
	env := &event.Envelope{Payload: json.RawMessage(`{"hook_event_name":"PostToolUse"}`), Files: []event.FileState{clean, {Path: "/p/" + ghp + "/b.go"}}}
	pl := ingest.Pipeline{Privacy: privacy.DefaultOptions()}
	pl.Admit(env)
	if len(env.Files) != 1 || env.Files[0] != clean {
		t.Errorf("admitted %+v", env.Files)
	}
	if b := env.AppendJSON(nil); strings.Contains(string(b), ghp) {
		t.Errorf("a secret in %s", b)
	}
}
