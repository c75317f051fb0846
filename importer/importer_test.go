package importer_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/internal/testtree"
	"github.com/hookwatch/hookwatch/pricing"
	"github.com/hookwatch/hookwatch/privacy"
)

// copyTree copies testdata/<name> into a temporary directory, so that tests
// can append to the transcripts.
func copyTree(t *testing.T, name string) string {
	t.Helper()
	return copyDir(t, filepath.Join("testdata", name))
}

// copyDir copies the tree at src into a temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	testtree.Copy(t, src, dst, nil)
	return dst
}

// pipeline is the ingest pipeline an import runs, with the default privacy
// rules.
func pipeline() *ingest.Pipeline {
	return &ingest.Pipeline{Origin: ingest.Origin{Host: "h", User: "u", Version: "test"}, Privacy: privacy.DefaultOptions()}
}

// importAll imports root and returns the envelopes delivered.
func importAll(t *testing.T, root, state string) ([]event.Envelope, importer.Summary) {
	t.Helper()
	files, err := importer.Find([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	var got []event.Envelope
	sum, err := importer.Run(context.Background(), files, importer.Options{
		Pipeline: pipeline(), StatePath: state, BatchSize: 7,
		Deliver: func(_ context.Context, envs []event.Envelope) error {
			got = append(got, envs...)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, sum
}

// usageByAgent sums the transcripts' usage records the plain way: every
// assistant line of each file, one response per message id, each kind of
// token the largest any of its lines reports.
func usageByAgent(t *testing.T, root string) map[string][2]int64 {
	t.Helper()
	type msg struct{ in, out int64 }
	out := map[string][2]int64{}
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || filepath.Ext(p) != ".jsonl" {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		msgs := map[string]msg{}
		agent := ""
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var r struct {
				Type    string `json:"type"`
				AgentID string `json:"agentId"`
				Message struct {
					ID    string `json:"id"`
					Usage *struct {
						In  int64 `json:"input_tokens"`
						Out int64 `json:"output_tokens"`
					} `json:"usage"`
				} `json:"message"`
			}
			if json.Unmarshal(sc.Bytes(), &r) != nil || r.Type != "assistant" || r.Message.Usage == nil {
				continue
			}
			agent = r.AgentID
			m := msgs[r.Message.ID]
			msgs[r.Message.ID] = msg{max(m.in, r.Message.Usage.In), max(m.out, r.Message.Usage.Out)}
		}
		sum := out[agent]
		for _, m := range msgs {
			sum[0] += m.in
			sum[1] += m.out
		}
		out[agent] = sum
		return nil
	})
	return out
}

// TestImportUsage: the tokens per agent of an imported real session (the
// client's parallel subagents) equal the sum of its transcripts' usage
// records, each response once.
func TestImportUsage(t *testing.T) {
	root := copyTree(t, "parallel")
	envs, sum := importAll(t, root, "")
	want := usageByAgent(t, root)
	if len(want) != 3 {
		t.Fatalf("the fixture has usage for %d agents, want 3", len(want))
	}
	res := attribution.Build(envs)
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions", len(res.Sessions))
	}
	s := res.Sessions[0]
	var total [2]int64
	for id, w := range want {
		var a *attribution.Agent
		for _, x := range s.Agents {
			if x.AgentID == id {
				a = x
			}
		}
		if a == nil || a.Usage == nil {
			t.Fatalf("agent %q: no usage (agents %d)", id, len(s.Agents))
		}
		if a.Usage.InputTokens != w[0] || a.Usage.OutputTokens != w[1] {
			t.Errorf("agent %q: %d in, %d out; the transcript says %d, %d", id, a.Usage.InputTokens, a.Usage.OutputTokens, w[0], w[1])
		}
		total[0] += w[0]
		total[1] += w[1]
	}
	if s.Usage == nil || s.Usage.InputTokens != total[0] || s.Usage.OutputTokens != total[1] {
		t.Fatalf("session usage %+v, want %v", s.Usage, total)
	}
	// The subagents are placed by their sidecar files, read on import.
	for _, a := range s.Agents[1:] {
		if a.SpawnToolUseID == "" || a.ResolvedBy != attribution.ResolvedBySidecar {
			t.Errorf("subagent %s: spawned by %q (%s)", a.AgentID, a.SpawnToolUseID, a.ResolvedBy)
		}
	}
	if sum.Envelopes[event.TranscriptUsage] != 11 || sum.Total() != len(envs) || sum.Files != 3 {
		t.Fatalf("summary %+v for %d envelopes", sum, len(envs))
	}
	for _, e := range envs {
		if e.Kind != event.KindTranscript || e.Host != "h" || e.User != "u" {
			t.Fatalf("envelope %+v", e)
		}
	}
}

// TestImportResumes: a second import reads nothing it read before; a line
// appended in two writes (torn in between) is imported once, whole; the
// same record imported again (no state) gets the same envelope id.
// TestImportStateBroken: a state file that is not the offsets (cut short
// by a full disk) is refused with what to do, and once removed the
// transcripts are read again whole.
func TestImportStateBroken(t *testing.T) {
	root := copyTree(t, "parallel")
	state := filepath.Join(t.TempDir(), "import.json")
	if err := os.WriteFile(state, []byte(`{"files":{"/x":{"off`), 0o600); err != nil {
		t.Fatal(err)
	}
	files, err := importer.Find([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	_, err = importer.Run(context.Background(), files, importer.Options{Pipeline: pipeline(), StatePath: state,
		Deliver: func(context.Context, []event.Envelope) error { return nil }})
	if err == nil || !strings.Contains(err.Error(), state) || !strings.Contains(err.Error(), "remove it") {
		t.Fatalf("a broken state file: %v, want an error naming it and saying to remove it", err)
	}
	os.Remove(state)
	if got, _ := importAll(t, root, state); len(got) == 0 {
		t.Fatal("nothing imported once the state file was removed")
	}
}

func TestImportResumes(t *testing.T) {
	root := copyTree(t, "parallel")
	state := filepath.Join(t.TempDir(), "import.json")
	first, _ := importAll(t, root, state)
	if len(first) == 0 {
		t.Fatal("nothing imported")
	}
	again, sum := importAll(t, root, state)
	if len(again) != 0 || sum.Bytes != 0 {
		t.Fatalf("second import made %d envelopes from %d bytes", len(again), sum.Bytes)
	}
	files, _ := importer.Find([]string{root})
	main := files[0].Path
	line := `{"type":"assistant","uuid":"9d1f0000-0000-4000-8000-000000000001","sessionId":"04c54c49-9580-4ffd-ac42-925d83960a3b","timestamp":"2026-11-25T13:40:00Z","message":{"id":"msg_new","model":"claude-opus-4-8","usage":{"input_tokens":1000,"output_tokens":77}}}` + "\n"
	appendTo := func(s string) {
		f, err := os.OpenFile(main, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	appendTo(line[:50])
	if torn, _ := importAll(t, root, state); len(torn) != 0 {
		t.Fatalf("a torn line made %d envelopes", len(torn))
	}
	appendTo(line[50:])
	whole, _ := importAll(t, root, state)
	if len(whole) != 1 {
		t.Fatalf("the completed line made %d envelopes", len(whole))
	}
	all, _ := importAll(t, root, "")
	ids := map[string]bool{}
	for _, e := range all {
		ids[e.ID] = true
	}
	for _, e := range append(first, whole...) {
		if !ids[e.ID] {
			t.Fatalf("envelope %s is not made again by a fresh import", e.ID)
		}
	}
	if len(ids) != len(first)+1 {
		t.Fatalf("a fresh import made %d distinct ids, want %d", len(ids), len(first)+1)
	}
	s := attribution.Build(all).Sessions[0]
	if s.Usage.Unpriced != s.Usage.Responses || len(s.Turns) != 1 {
		t.Fatalf("usage %+v, turns %+v", s.Usage, s.Turns)
	}
}

func BenchmarkImport(b *testing.B) {
	files, err := importer.Find([]string{"testdata/parallel"})
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, f := range files {
		info, _ := os.Stat(f.Path)
		size += info.Size()
	}
	b.SetBytes(size)
	for b.Loop() {
		if _, err := importer.Run(context.Background(), files, importer.Options{Pipeline: pipeline(),
			Deliver: func(context.Context, []event.Envelope) error { return nil }}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestImportShape: the client's parallel subagents, imported from its
// transcripts, are a fan-out of the main agent in one turn.
func TestImportShape(t *testing.T) {
	envs, _ := importAll(t, copyTree(t, "parallel"), "")
	s := attribution.Build(envs).Sessions[0]
	if s.Shape == nil || s.Shape.String() != "fan-out of 2" || s.Shape.Turns != 1 {
		t.Fatalf("shape %+v, want a fan-out of 2 in one turn", s.Shape)
	}
}

// TestImportAPIError: the assistant records the client writes itself when
// the API fails a turn (model claudecode.SyntheticModel, a usage of zeros;
// real transcripts of 2.1.197 and 2.1.332 whose main agent and subagent
// each met a 400) are no responses: no TranscriptUsage is made of them, so
// each agent counts its real responses only (those of a model the price
// table has all priced) and ran the one real model. The subagent's record
// of its error ends its turn as the client's hooks report it: a
// StopFailure of the subagent, of the record's error kind, with the error
// text as its last message, and no SubagentStop; the main agent's makes
// no event (its hook's StopFailure is the session's).
func TestImportAPIError(t *testing.T) {
	root := copyTree(t, "apierror")
	envs, sum := importAll(t, root, "")
	// The real responses per session and agent: distinct message ids.
	real := map[string]map[string]bool{}
	model := map[string]string{}
	synthetic := 0
	testtree.Files(t, root, ".jsonl", func(f io.Reader) {
		claudecode.ReadTranscript(f, func(r *claudecode.TranscriptRecord) error {
			switch {
			case r.Type != "assistant" || r.Message.Usage == nil:
			case r.Synthetic():
				synthetic++
			default:
				k := r.SessionID + "/" + r.AgentID
				if real[k] == nil {
					real[k] = map[string]bool{}
				}
				real[k][r.Message.ID] = true
				model[k] = r.Message.Model
			}
			return nil
		})
	})
	if synthetic != 6 || len(real) != 4 {
		t.Fatalf("the fixture holds %d records of the client's own and responses of %d agents, want 6 and 4", synthetic, len(real))
	}
	responses := 0
	for _, ids := range real {
		responses += len(ids)
	}
	if sum.Envelopes[event.StopFailure] != 2 || sum.Envelopes[event.SubagentStop] != 0 {
		t.Errorf("%d StopFailure and %d SubagentStop envelopes, want one StopFailure per subagent", sum.Envelopes[event.StopFailure], sum.Envelopes[event.SubagentStop])
	}
	if n := sum.Envelopes[event.TranscriptUsage]; n != responses {
		t.Errorf("%d usage envelopes for %d responses", n, responses)
	}
	res := attribution.Build(envs)
	if len(res.Sessions) != 2 {
		t.Fatalf("%d sessions", len(res.Sessions))
	}
	for _, s := range res.Sessions {
		if len(s.Agents) != 2 {
			t.Fatalf("session %s: %d agents", s.SessionID, len(s.Agents))
		}
		for _, a := range s.Agents {
			u := a.Usage
			if u == nil {
				t.Fatalf("session %s agent %q: no usage", s.SessionID, a.AgentID)
			}
			// 2.1.197's default model then (claude-opus-4-8) is not in the
			// price table: its responses are all unpriced, none else.
			k := s.SessionID + "/" + a.AgentID
			n, unpriced := len(real[k]), 0
			if _, ok := pricing.Default().Lookup(model[k]); !ok {
				unpriced = n
			}
			if u.Responses != n || u.Unpriced != unpriced {
				t.Errorf("session %s agent %q: %d responses, %d unpriced; the transcript holds %d of %s, %d unpriced",
					s.SessionID, a.AgentID, u.Responses, u.Unpriced, n, model[k], unpriced)
			}
			if len(u.Models) != 1 || u.Models[0] != model[k] || a.Model != model[k] {
				t.Errorf("session %s agent %q: model %q, usage models %q", s.SessionID, a.AgentID, a.Model, u.Models)
			}
			if a.AgentID != "" && (a.StoppedAt == nil || a.StopError != "unknown" || a.LastMessage != "API Error: 400 scripted failure of the subagent") {
				t.Errorf("session %s agent %q: stopped at %v, error %q, with %q; the hooks report a StopFailure",
					s.SessionID, a.AgentID, a.StoppedAt, a.StopError, a.LastMessage)
			}
		}
	}
}

// TestImportFileError: a file that cannot be read (gone since it was
// found) ends a Run without FileError; with it, the file is reported and
// passed over, its offset not kept, and the other files are imported and
// their offsets kept, so that a second Run reads only that file.
func TestImportFileError(t *testing.T) {
	root := copyTree(t, "parallel")
	files, err := importer.Find([]string{root})
	if err != nil || len(files) < 3 {
		t.Fatalf("found %d files: %v", len(files), err)
	}
	gone := files[1] // a subagent's, after its main transcript
	moved := gone.Path + ".away"
	if err := os.Rename(gone.Path, moved); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "import.json")
	run := func(fileError func(string, error)) (int, importer.Summary, error) {
		n := 0
		sum, err := importer.Run(context.Background(), files, importer.Options{
			Pipeline: pipeline(), StatePath: state, BatchSize: 7, FileError: fileError,
			Deliver: func(_ context.Context, envs []event.Envelope) error { n += len(envs); return nil },
		})
		return n, sum, err
	}
	if _, _, err := run(nil); err == nil || !strings.Contains(err.Error(), gone.Path) {
		t.Fatalf("without FileError: %v, want an error naming %s", err, gone.Path)
	}
	os.Remove(state)

	var told []string
	n, sum, err := run(func(path string, err error) { told = append(told, path) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(told, []string{gone.Path}) || sum.Files != len(files)-1 || n == 0 {
		t.Fatalf("told of %q; %d of %d files imported, %d envelopes", told, sum.Files, len(files), n)
	}
	if err := os.Rename(moved, gone.Path); err != nil {
		t.Fatal(err)
	}
	n, sum, err = run(nil)
	if err != nil || sum.Files != len(files) || n == 0 {
		t.Fatalf("again: %v, %d files, %d envelopes", err, sum.Files, n)
	}
	if info, err := os.Stat(gone.Path); err != nil || sum.Bytes != info.Size() {
		t.Fatalf("the second run read %d bytes, want only the file passed over (%v)", sum.Bytes, err)
	}
}

// TestImportForkFollowed: a fork's transcript read as the client writes
// it (its bookkeeping line first, then the copies of its parent's records
// one by one, then its own) yields its own records only, as a whole read
// of it does: the copies are its parent's, imported with the parent.
func TestImportForkFollowed(t *testing.T) {
	root := copyTree(t, "parallel")
	files, _ := importer.Find([]string{root})
	parent := files[0]
	b, err := os.ReadFile(parent.Path)
	if err != nil {
		t.Fatal(err)
	}
	const fork = "f0f0f0f0-0000-4000-8000-000000000001"
	var lines []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if strings.Contains(l, `"uuid"`) {
			lines = append(lines, strings.ReplaceAll(l, parent.SessionID, fork))
		}
	}
	own := `{"type":"assistant","uuid":"f0f0f0f0-0000-4000-8000-0000000000aa","sessionId":"` + fork + `","timestamp":"2026-11-25T14:00:01Z","message":{"id":"msg_fork_own","model":"claude-opus-4-8","usage":{"input_tokens":10,"output_tokens":5}}}` + "\n"
	whole := `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-11-25T14:00:00Z","sessionId":"` + fork + `"}` + "\n" + strings.Join(lines, "") + own
	forkPath := filepath.Join(filepath.Dir(parent.Path), fork+".jsonl")
	forkEnvs := func(envs []event.Envelope) map[string]bool {
		ids := map[string]bool{}
		for _, e := range envs {
			var p struct {
				SessionID string `json:"session_id"`
			}
			if json.Unmarshal(e.Payload, &p) == nil && p.SessionID == fork {
				ids[e.ID] = true
			}
		}
		return ids
	}

	// Read whole, once.
	if err := os.WriteFile(forkPath, []byte(whole), 0o600); err != nil {
		t.Fatal(err)
	}
	all, _ := importAll(t, root, "")
	want := forkEnvs(all)
	if len(want) == 0 {
		t.Fatal("the fork's own record made no envelope")
	}

	// Followed: the parent read first, then the fork at each of its writes.
	state := filepath.Join(t.TempDir(), "import.json")
	if err := os.WriteFile(forkPath, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	importAll(t, root, state)
	got := map[string]bool{}
	f, err := os.OpenFile(forkPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	written := 0
	for _, cut := range []int{strings.Index(whole, "\n") + 1, strings.Index(whole, lines[2]), len(whole) - len(own), len(whole)} {
		if _, err := f.WriteString(whole[written:cut]); err != nil {
			t.Fatal(err)
		}
		written = cut
		envs, _ := importAll(t, root, state)
		maps.Copy(got, forkEnvs(envs))
	}
	if !maps.Equal(got, want) {
		t.Fatalf("followed, the fork made %d envelopes; read whole, %d", len(got), len(want))
	}
}

// TestImportForkStart: a real fork's transcript (Claude Code 2.1.332,
// --resume X --fork-session) is read as the SessionStart(fork) its hook
// sends, once, at the time the fork started, naming X as the hook's does
// (fork_of); X's own transcript starts nothing.
func TestImportForkStart(t *testing.T) {
	const parent, fork = "95f71cd0-68f7-43c7-aa4f-2d4f54f69415", "ade817eb-d549-4f37-8dec-fccc9a21af82"
	envs, sum := importAll(t, "../attribution/testdata/claude-fork-2.1.332/projects", "")
	var starts []event.Envelope
	for _, e := range envs {
		if p, err := event.Decode(e.Payload); err == nil && p.Name() == event.SessionStart {
			starts = append(starts, e)
		}
	}
	if len(starts) != 1 || sum.Envelopes[event.SessionStart] != 1 {
		t.Fatalf("%d SessionStart made (%d counted), want the fork's", len(starts), sum.Envelopes[event.SessionStart])
	}
	p, _ := event.Decode(starts[0].Payload)
	in, _ := p.Event.(*event.SessionStartInput)
	if p.SessionID != fork || in == nil || in.Source != "fork" || starts[0].ForkOf != parent || p.PromptID != "" ||
		!starts[0].ReceivedAt.Equal(time.Date(2026, 12, 2, 1, 36, 28, 115e6, time.UTC)) || starts[0].Kind != event.KindTranscript {
		t.Errorf("the fork's start: %s at %s, fork of %q", starts[0].Payload, starts[0].ReceivedAt, starts[0].ForkOf)
	}
}

// TestImportStoredCounted: the hook events Known says are stored (the
// hooks', an earlier import's) are not made again, and the summary counts
// them, each once, so that import can say why it sent less than the
// transcripts hold.
func TestImportStoredCounted(t *testing.T) {
	root := copyTree(t, "parallel")
	first, sum := importAll(t, root, "")
	known := &importer.Known{Calls: map[string]bool{}, Prompts: map[string]bool{}, Agents: map[string]bool{}}
	hookEvents := 0
	for _, e := range first {
		p, err := event.Decode(e.Payload)
		if err != nil {
			t.Fatal(err)
		}
		switch name := p.Name(); name {
		case event.PreToolUse:
			known.Calls[p.Tool().ToolUseID] = known.Calls[p.Tool().ToolUseID] || false
		case event.PostToolUse, event.PostToolUseFailure:
			known.Calls[p.Tool().ToolUseID] = true
		case event.UserPromptSubmit:
			known.Prompts[p.PromptID] = true
		case event.SubagentStart:
			known.Agents[p.AgentID] = known.Agents[p.AgentID] || false
		case event.SubagentStop:
			known.Agents[p.AgentID] = true
		default:
			continue
		}
		hookEvents++
	}
	if sum.Stored != 0 || hookEvents == 0 {
		t.Fatalf("first import: %d stored, %d hook events", sum.Stored, hookEvents)
	}
	files, err := importer.Find([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	var again []string
	sum, err = importer.Run(context.Background(), files, importer.Options{
		Pipeline: pipeline(),
		Known: func(context.Context, string) (*importer.Known, error) {
			return &importer.Known{Calls: maps.Clone(known.Calls), Prompts: maps.Clone(known.Prompts), Agents: maps.Clone(known.Agents)}, nil
		},
		Deliver: func(_ context.Context, envs []event.Envelope) error {
			for _, e := range envs {
				p, _ := event.Decode(e.Payload)
				if p.Name() != event.TranscriptUsage {
					again = append(again, p.Name())
				}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 0 || sum.Stored != hookEvents {
		t.Fatalf("import of what is stored made %v and counted %d stored; want none made and %d stored", again, sum.Stored, hookEvents)
	}
}

// TestActiveSince: a session is kept, all its files, when any of them was
// written at or after the time; else left out and counted.
func TestActiveSince(t *testing.T) {
	root := copyTree(t, "edges")
	par := copyTree(t, "parallel")
	files, err := importer.Find([]string{root, par})
	if err != nil {
		t.Fatal(err)
	}
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range files {
		os.Chtimes(f.Path, old, old)
	}
	since := old.Add(24 * time.Hour)
	if kept, left := importer.ActiveSince(files, since); len(kept) != 0 || left != 2 {
		t.Fatalf("every file older: kept %d, left out %d; want 0, 2", len(kept), left)
	}
	// One subagent of the parallel session written since: its whole
	// session is kept, the other left out.
	var sub claudecode.TranscriptFile
	for _, f := range files {
		if f.AgentID != "" && strings.HasPrefix(f.Path, par) {
			sub = f
		}
	}
	os.Chtimes(sub.Path, since, since)
	kept, left := importer.ActiveSince(files, since)
	if left != 1 || len(kept) != 3 {
		t.Fatalf("kept %d files, left out %d sessions; want the parallel session's 3 files, 1 left out", len(kept), left)
	}
	for _, f := range kept {
		if f.SessionID != sub.SessionID {
			t.Errorf("kept %s of another session", f.Path)
		}
	}
}

// TestFilesSince: a file is kept when written at or after the time, or
// when it cannot be stat'ed (the import says why it cannot read it); older
// ones are left out and counted, the order kept.
func TestFilesSince(t *testing.T) {
	dir := t.TempDir()
	since := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	mtimes := map[string]time.Time{
		"a-old.jsonl":     since.Add(-time.Second),
		"b-at.jsonl":      since,
		"c-new.jsonl":     since.Add(time.Hour),
		"d-ancient.jsonl": since.AddDate(-1, 0, 0),
	}
	var files []string
	for _, name := range []string{"a-old.jsonl", "b-at.jsonl", "c-new.jsonl", "d-ancient.jsonl", "e-gone.jsonl"} {
		p := filepath.Join(dir, name)
		files = append(files, p)
		if mt, ok := mtimes[name]; ok {
			if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, mt, mt); err != nil {
				t.Fatal(err)
			}
		}
	}
	kept, left := importer.FilesSince(files, since)
	want := []string{files[1], files[2], files[4]}
	if !slices.Equal(kept, want) || left != 2 {
		t.Errorf("FilesSince = %v, left out %d; want %v, 2", kept, left, want)
	}
	for i, want := range []bool{false, true, true, false, true} {
		if got := importer.WrittenSince(files[i], since); got != want {
			t.Errorf("WrittenSince(%s) = %v, want %v", filepath.Base(files[i]), got, want)
		}
	}
}

// TestFindThroughSymlink: a projects directory that is a symlink (kept in
// a dotfiles repository) is walked through, and its files named by the
// path through the link, which the client's hooks carry.
func TestFindThroughSymlink(t *testing.T) {
	target := copyTree(t, "parallel")
	link := filepath.Join(t.TempDir(), "projects")
	if err := os.Symlink(filepath.Join(target, "projects"), link); err != nil {
		t.Fatal(err)
	}
	for _, given := range []string{link, link + string(filepath.Separator)} {
		files, err := importer.Find([]string{given})
		if err != nil || len(files) != 3 {
			t.Fatalf("Find(%s): %d files, %v; want 3", given, len(files), err)
		}
		for _, f := range files {
			if !strings.HasPrefix(f.Path, link+string(filepath.Separator)) || !strings.HasPrefix(f.MainPath, link+string(filepath.Separator)) {
				t.Errorf("Find(%s) named %s (main %s), not through the link", given, f.Path, f.MainPath)
			}
		}
	}
}

// TestFindLinkedProject: a project directory that is itself a symlink in
// the projects directory (kept elsewhere) is walked through, its files
// named through the link; one linked twice, or a link to an ancestor,
// adds nothing.
func TestFindLinkedProject(t *testing.T) {
	target := copyTree(t, "parallel")
	projects := filepath.Join(t.TempDir(), "projects")
	if err := os.MkdirAll(projects, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(projects, "-tmp-hc-1665870347-c-demo")
	for l, to := range map[string]string{
		link:                             filepath.Join(target, "projects", "-tmp-hc-1665870347-c-demo"),
		filepath.Join(projects, "again"): filepath.Join(target, "projects", "-tmp-hc-1665870347-c-demo"),
		filepath.Join(projects, "up"):    projects,
	} {
		if err := os.Symlink(to, l); err != nil {
			t.Fatal(err)
		}
	}
	files, err := importer.Find([]string{projects})
	if err != nil || len(files) != 3 {
		t.Fatalf("Find(%s): %d files, %v; want 3", projects, len(files), err)
	}
	for _, f := range files {
		if !strings.HasPrefix(f.Path, link+string(filepath.Separator)) {
			t.Errorf("Find(%s) named %s, not through %s", projects, f.Path, link)
		}
	}
}

// TestSummarySessionEvents: the summary counts the envelopes made for
// each session, every file of the session's included, which add up to
// the total.
func TestSummarySessionEvents(t *testing.T) {
	root := copyTree(t, "parallel")
	main := filepath.Join(root, "projects", "-tmp-hc-1665870347-c-demo", "04c54c49-9580-4ffd-ac42-925d83960a3b.jsonl")
	other := filepath.Join(root, "projects", "-tmp-other", "11111111-2222-4333-8444-555555555555.jsonl")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(other, b, 0o600)
	envs, sum := importAll(t, root, "")
	by := map[string]int{}
	for _, e := range envs {
		p, _ := event.Decode(e.Payload)
		by[p.SessionID]++
	}
	if len(sum.SessionEvents) != 2 || sum.SessionEvents["04c54c49-9580-4ffd-ac42-925d83960a3b"]+sum.SessionEvents["11111111-2222-4333-8444-555555555555"] != sum.Total() {
		t.Fatalf("SessionEvents %v, total %d", sum.SessionEvents, sum.Total())
	}
	if sum.SessionEvents["04c54c49-9580-4ffd-ac42-925d83960a3b"] != by["04c54c49-9580-4ffd-ac42-925d83960a3b"] {
		t.Fatalf("SessionEvents %v, envelopes by session_id %v", sum.SessionEvents, by)
	}
}

// TestImportStateLocked: while a run delivers from a state file, another
// run on it reads nothing and says who holds it; a dry run is not kept
// out (it keeps no offset). Once the first run ends, the next reads only
// what it left.
func TestImportStateLocked(t *testing.T) {
	root := copyTree(t, "parallel")
	state := filepath.Join(t.TempDir(), "import.json")
	files, err := importer.Find([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	var inner error
	var innerGot, dryGot int
	asked := false
	_, err = importer.Run(context.Background(), files, importer.Options{
		Pipeline: pipeline(), StatePath: state, Holder: "hookwatch import",
		Deliver: func(context.Context, []event.Envelope) error {
			if asked {
				return nil
			}
			asked = true
			_, inner = importer.Run(context.Background(), files, importer.Options{
				Pipeline: pipeline(), StatePath: state, Holder: "hookwatch serve",
				Deliver: func(_ context.Context, envs []event.Envelope) error { innerGot += len(envs); return nil },
			})
			dry, err := importer.Run(context.Background(), files, importer.Options{Pipeline: pipeline(), StatePath: state, DryRun: true})
			if err != nil {
				t.Errorf("a dry run beside an import: %v", err)
			}
			dryGot = dry.Total()
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var busy *importer.BusyError
	if !errors.As(inner, &busy) || !errors.Is(inner, importer.ErrBusy) || innerGot != 0 {
		t.Fatalf("a run beside another: %v, %d envelopes delivered; want a BusyError and none", inner, innerGot)
	}
	if want := fmt.Sprintf("hookwatch import (pid %d)", os.Getpid()); busy.Holder != want {
		t.Fatalf("the holder read %q, want %q", busy.Holder, want)
	}
	if dryGot == 0 {
		t.Fatal("the dry run beside the import read nothing")
	}
	if again, sum := importAll(t, root, state); len(again) != 0 || sum.Bytes != 0 {
		t.Fatalf("after the run, another made %d envelopes from %d bytes: the lock was not released or the offsets not kept", len(again), sum.Bytes)
	}
}

// TestImportFileLost: FileLost is told, for each file delivered, of the
// lines of it passed over for what they held (its share of the Summary's
// Long and Unreadable), and not of the files that lost none.
func TestImportFileLost(t *testing.T) {
	files, broken := withLostLines(t)
	told := map[string][2]int{}
	sum, err := importer.Run(context.Background(), files, importer.Options{
		Pipeline: pipeline(), DryRun: true,
		FileLost: func(path string, long, unreadable int) { told[path] = [2]int{long, unreadable} },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(told) != 1 || told[broken] != [2]int{0, 2} || sum.Unreadable != 2 {
		t.Fatalf("told of %v (summary: %d unreadable), want only %s, 2 unreadable lines", told, sum.Unreadable, broken)
	}
}

// TestImportFileLostOnceKept: where offsets are kept, FileLost is told of
// a file's lost lines once its offset past them is saved: a run whose
// state cannot be saved (a directory stands where the file goes) tells
// nothing, and the next run, which reads the same lines again from the
// offsets kept before, tells of them once.
func TestImportFileLostOnceKept(t *testing.T) {
	files, broken := withLostLines(t)
	state := filepath.Join(t.TempDir(), "import-state.json")
	told := map[string][2]int{}
	opt := importer.Options{
		Pipeline: pipeline(), StatePath: state,
		Deliver: func(context.Context, []event.Envelope) error { return os.MkdirAll(filepath.Join(state, "x"), 0o700) },
		FileLost: func(path string, long, unreadable int) {
			n := told[path]
			told[path] = [2]int{n[0] + long, n[1] + unreadable}
		},
	}
	if _, err := importer.Run(context.Background(), files, opt); err == nil {
		t.Fatal("a run whose state is a directory saved it")
	}
	if len(told) != 0 {
		t.Errorf("a run whose offsets were not saved told of %v", told)
	}
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	opt.Deliver = func(context.Context, []event.Envelope) error { return nil }
	sum, err := importer.Run(context.Background(), files, opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Unreadable != 2 {
		t.Fatalf("the run after a failed save read %d unreadable lines, want the same 2 again", sum.Unreadable)
	}
	if len(told) != 1 || told[broken] != [2]int{0, 2} {
		t.Fatalf("told, over both runs, of %v; want only %s, 2 unreadable lines once", told, broken)
	}
}

// withLostLines copies the parallel run's transcripts and puts, in one
// file (a subagent's, after its main transcript), two lines a reader
// passes over before its records: a record torn by a crash, and a line
// that is not JSON. It returns the files and that one's path.
func withLostLines(t *testing.T) (files []claudecode.TranscriptFile, broken string) {
	t.Helper()
	root := copyTree(t, "parallel")
	files, err := importer.Find([]string{root})
	if err != nil || len(files) < 2 {
		t.Fatalf("found %d files: %v", len(files), err)
	}
	broken = files[1].Path
	b, err := os.ReadFile(broken)
	if err != nil {
		t.Fatal(err)
	}
	// A record torn by a crash, and a line that is not JSON, before the
	// file's records.
	i := bytes.Index(b, []byte(`"type":"assistant"`))
	if i < 0 {
		t.Fatalf("%s has no assistant record", broken)
	}
	torn := b[bytes.LastIndexByte(b[:i], '\n')+1 : i+len(`"type":"assistant"`)]
	if err := os.WriteFile(broken, slices.Concat(torn, []byte("\nnot json\n"), b), 0o600); err != nil {
		t.Fatal(err)
	}
	return files, broken
}

// TestRolloutOffsets: the rollouts' offsets are kept in the import state
// beside the transcripts', each kept by the other's saves; a save while a
// run holds the state keeps nothing and says who holds it.
func TestRolloutOffsets(t *testing.T) {
	root := copyTree(t, "parallel")
	state := filepath.Join(t.TempDir(), "import.json")
	if got, err := importer.RolloutOffsets(state); err != nil || len(got) != 0 {
		t.Fatalf("no state file: %v, %v; want none", got, err)
	}
	// Rollouts that exist: a save drops the entries of files gone.
	rollouts := t.TempDir()
	a, b := filepath.Join(rollouts, "rollout-a.jsonl"), filepath.Join(rollouts, "rollout-b.jsonl")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := saveRollouts(state, "hookwatch serve", map[string]int64{a: 10, b: 20}); err != nil {
		t.Fatal(err)
	}
	importAll(t, root, state) // saves the transcripts' offsets
	if err := saveRollouts(state, "hookwatch serve", map[string]int64{b: 30}); err != nil {
		t.Fatal(err)
	}
	if got, err := importer.RolloutOffsets(state); err != nil || !maps.Equal(got, map[string]int64{a: 10, b: 30}) {
		t.Fatalf("rollout offsets %v, %v; want a at 10 and b at 30", got, err)
	}
	if again, sum := importAll(t, root, state); len(again) != 0 || sum.Bytes != 0 {
		t.Fatalf("the transcripts' offsets were not kept by a save of the rollouts': %d envelopes from %d bytes", len(again), sum.Bytes)
	}
	offsets, err := importer.Offsets(state)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := offsets[a]; ok || len(offsets) == 0 {
		t.Fatalf("transcript offsets %v: want the transcripts' alone", offsets)
	}

	files, err := importer.Find([]string{copyTree(t, "parallel")})
	if err != nil {
		t.Fatal(err)
	}
	var saveErr error
	asked := false
	_, err = importer.Run(context.Background(), files, importer.Options{
		Pipeline: pipeline(), StatePath: state, Holder: "hookwatch import",
		Deliver: func(context.Context, []event.Envelope) error {
			if !asked {
				asked = true
				saveErr = saveRollouts(state, "hookwatch serve", map[string]int64{a: 99})
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var busy *importer.BusyError
	if !errors.As(saveErr, &busy) || busy.Holder != fmt.Sprintf("hookwatch import (pid %d)", os.Getpid()) {
		t.Fatalf("a save while a run holds the state: %v; want a BusyError naming the run", saveErr)
	}
	if got, _ := importer.RolloutOffsets(state); got[a] != 10 {
		t.Fatalf("rollout a at %d after a save refused and the run's own save, want 10 kept", got[a])
	}
}

// saveRollouts keeps offsets in the state file at path as the collector
// following the rollouts keeps those of a look: held, Set, released.
func saveRollouts(path, holder string, offsets map[string]int64) error {
	h, err := importer.HoldRollouts(path, holder, false)
	if err != nil {
		return err
	}
	for p, off := range offsets {
		if err := h.Set(p, off); err != nil {
			h.Release()
			return err
		}
	}
	return h.Release()
}

// TestHoldRollouts: a held RolloutState keeps the rollouts' offsets under
// the import state's lock until it is released: the collector's saves and
// an import of the transcripts are refused meanwhile, what was Set is
// saved at the release with the transcripts' offsets kept, and a read-only
// one (a dry run) takes no lock and keeps nothing.
func TestHoldRollouts(t *testing.T) {
	root := copyTree(t, "parallel")
	state := filepath.Join(t.TempDir(), "import-state.json")
	rollouts := t.TempDir()
	a, b := filepath.Join(rollouts, "rollout-a.jsonl"), filepath.Join(rollouts, "rollout-b.jsonl")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	importAll(t, root, state)
	if err := saveRollouts(state, "hookwatch serve", map[string]int64{a: 10}); err != nil {
		t.Fatal(err)
	}

	h, err := importer.HoldRollouts(state, "hookwatch import", false)
	if err != nil {
		t.Fatal(err)
	}
	if h.Offset(a) != 10 || h.Offset(b) != 0 {
		t.Fatalf("held offsets: a %d, b %d; want 10 and 0", h.Offset(a), h.Offset(b))
	}
	var busy *importer.BusyError
	if err := saveRollouts(state, "hookwatch serve", map[string]int64{a: 99}); !errors.As(err, &busy) ||
		busy.Holder != fmt.Sprintf("hookwatch import (pid %d)", os.Getpid()) {
		t.Fatalf("a save while the rollouts are held: %v; want a BusyError naming the holder", err)
	}
	if _, err := importer.HoldRollouts(state, "hookwatch import", false); !errors.As(err, &busy) {
		t.Fatalf("a second hold: %v; want a BusyError", err)
	}
	files, err := importer.Find([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := importer.Run(context.Background(), files, importer.Options{Pipeline: pipeline(), StatePath: state,
		Deliver: func(context.Context, []event.Envelope) error { return nil }}); !errors.As(err, &busy) {
		t.Fatalf("an import of the transcripts while the rollouts are held: %v; want a BusyError", err)
	}
	if err := h.Set(a, 20); err != nil {
		t.Fatal(err)
	}
	if err := h.Set(b, 5); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if got, err := importer.RolloutOffsets(state); err != nil || !maps.Equal(got, map[string]int64{a: 20, b: 5}) {
		t.Fatalf("rollout offsets after the release: %v, %v; want a at 20 and b at 5", got, err)
	}
	if again, sum := importAll(t, root, state); len(again) != 0 || sum.Bytes != 0 {
		t.Fatalf("the transcripts' offsets were not kept by the rollouts' save: %d envelopes from %d bytes", len(again), sum.Bytes)
	}

	// Read only: no lock, nothing kept.
	ro, err := importer.HoldRollouts(state, "hookwatch import", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := saveRollouts(state, "hookwatch serve", map[string]int64{a: 30}); err != nil {
		t.Fatalf("a save beside a read-only hold: %v", err)
	}
	if err := ro.Set(b, 77); err != nil {
		t.Fatal(err)
	}
	if err := ro.Release(); err != nil {
		t.Fatal(err)
	}
	if got, _ := importer.RolloutOffsets(state); !maps.Equal(got, map[string]int64{a: 30, b: 5}) {
		t.Fatalf("rollout offsets after a read-only hold: %v; want a at 30 (the save beside it) and b at 5", got)
	}
}
