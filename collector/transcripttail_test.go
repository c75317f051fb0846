package collector_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/lockfile"
	"github.com/hookwatch/hookwatch/internal/syncbuf"
)

// The real run the session model's tests use: Claude Code 2.1.197 with
// three subagents, its hooks' envelopes and its transcripts.
const (
	runDir     = "../attribution/testdata/claude-transcript"
	runProject = "-tmp-TestTranscripts2-1-1972080684500-002-demo"
	runSession = "b4383b84-90ed-4ee7-986f-80e2b6c88baa"
)

func runHooks(t *testing.T) []event.Envelope {
	t.Helper()
	f, err := os.Open(filepath.Join(runDir, "envelopes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []event.Envelope
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e event.Envelope
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// runTranscript returns the real run's main transcript, and the path it
// has under the projects directory dir, whose directories it makes.
func runTranscript(t *testing.T, dir string) (content []byte, path string) {
	t.Helper()
	content, err := os.ReadFile(filepath.Join(runDir, "projects", runProject, runSession+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, runProject, runSession+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	return content, path
}

// runPrompts is the prompts the API counts of the real run's session.
func (s *testServer) runPrompts(t *testing.T) int {
	t.Helper()
	st, _ := s.sessionState(t, runSession)
	return st.Counts["prompts"]
}

// appendTo appends b to the file at path, as a client writing on does.
func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// sessionState is what the API shows of a session that the hooks and the
// transcripts must agree on.
type sessionState struct {
	Counts map[string]int
	Calls  []string
	Agents []string
	// Tokens are the input and output tokens of each agent.
	Tokens map[string][2]int64
}

func (s *testServer) sessionState(t *testing.T, id string) (sessionState, bool) {
	t.Helper()
	var st sessionState
	code, body := s.do(t, http.MethodGet, "/v1/sessions/"+id, nil)
	if code != http.StatusOK {
		return st, false
	}
	var sess struct {
		Counts map[string]int `json:"counts"`
	}
	if err := json.Unmarshal(body, &sess); err != nil {
		t.Fatal(err)
	}
	st.Counts = sess.Counts
	var calls struct {
		ToolCalls []struct {
			ToolUseID string `json:"tool_use_id"`
			ToolName  string `json:"tool_name"`
			AgentID   string `json:"agent_id"`
			Status    string `json:"status"`
		} `json:"tool_calls"`
	}
	s.getJSON(t, "/v1/sessions/"+id+"/tool-calls?limit=1000", &calls)
	for _, c := range calls.ToolCalls {
		st.Calls = append(st.Calls, fmt.Sprintf("%s %s %q %s", c.ToolUseID, c.ToolName, c.AgentID, c.Status))
	}
	var agents struct {
		Agents []struct {
			AgentID        string  `json:"agent_id"`
			ParentAgentID  *string `json:"parent_agent_id"`
			SpawnToolUseID string  `json:"spawn_tool_use_id"`
			Usage          *struct {
				In  int64 `json:"input_tokens"`
				Out int64 `json:"output_tokens"`
			} `json:"usage"`
		} `json:"agents"`
	}
	s.getJSON(t, "/v1/sessions/"+id+"/agents", &agents)
	st.Tokens = map[string][2]int64{}
	for _, a := range agents.Agents {
		parent := "<none>"
		if a.ParentAgentID != nil {
			parent = *a.ParentAgentID
		}
		st.Agents = append(st.Agents, fmt.Sprintf("%q parent %q spawn %q", a.AgentID, parent, a.SpawnToolUseID))
		if a.Usage != nil {
			st.Tokens[a.AgentID] = [2]int64{a.Usage.In, a.Usage.Out}
		}
	}
	slices.Sort(st.Calls)
	slices.Sort(st.Agents)
	return st, true
}

// TestFollowTranscripts: the collector following a projects directory
// stores a session's transcript records as the client writes them — a torn
// last line once it is whole, a subagent's transcript when it appears, a
// line above the bound passed over —, each once however many looks
// follow; with the hooks' events of the same calls sent before and after,
// the session counts what the hooks alone count, with the tokens only the
// transcripts carry. A transcript older than the window is left alone
// until it grows.
func TestFollowTranscripts(t *testing.T) {
	hooks := runHooks(t)
	ref := newServer(t, collector.Config{})
	ref.post(t, hooks, len(hooks), 0)
	ref.settle(t)
	want, _ := ref.sessionState(t, runSession)

	s := newServer(t, collector.Config{})
	dir := t.TempDir()
	proj := filepath.Join(dir, runProject)
	src := filepath.Join(runDir, "projects", runProject)
	read := func(rel string) []byte {
		b, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write := func(rel string, b []byte, flag int) {
		t.Helper()
		p := filepath.Join(proj, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|flag, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	// An old session of another project, not read until it grows.
	oldSrc := "../importer/testdata/parallel/projects/-tmp-hc-1665870347-c-demo/04c54c49-9580-4ffd-ac42-925d83960a3b.jsonl"
	oldBytes, err := os.ReadFile(oldSrc)
	if err != nil {
		t.Fatal(err)
	}
	oldPath := filepath.Join(dir, "-tmp-hc-1665870347-c-demo", "04c54c49-9580-4ffd-ac42-925d83960a3b.jsonl")
	if err := os.MkdirAll(filepath.Dir(oldPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(oldPath, oldBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-72 * time.Hour)
	if err := os.Chtimes(oldPath, past, past); err != nil {
		t.Fatal(err)
	}

	// The main transcript up to the middle of a line, no subagent yet.
	main := read(runSession + ".jsonl")
	cut := bytes.Index(main, []byte(`"type":"assistant"`)) + 10
	write(runSession+".jsonl", main[:cut], os.O_TRUNC)

	collector.FollowForTest(t, func(ctx context.Context) {
		s.FollowTranscripts(ctx, collector.TranscriptOptions{Dir: dir, StatePath: filepath.Join(t.TempDir(), "import-state.json"),
			Host: hooks[0].Host, User: hooks[0].User, Interval: 10 * time.Millisecond})
	})

	wait := func(what string, ok func(sessionState) bool) sessionState {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			s.settle(t)
			st, found := s.sessionState(t, runSession)
			if found && ok(st) {
				return st
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the session is %+v", what, st)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The prompt before the torn line, and the first half of the hooks.
	wait("the first prompt", func(st sessionState) bool { return st.Counts["prompts"] == 1 })
	s.post(t, hooks[:len(hooks)/2], len(hooks)/2, 0)

	// The rest of the main transcript, then the subagents' as they
	// appear, one with a line above the bound before its last line.
	write(runSession+".jsonl", main[cut:], os.O_APPEND)
	subs, err := filepath.Glob(filepath.Join(src, runSession, "subagents", "*"))
	if err != nil || len(subs) != 6 {
		t.Fatalf("subagent files %v %v", subs, err)
	}
	for i, p := range subs {
		rel := filepath.Join(runSession, "subagents", filepath.Base(p))
		b := read(rel)
		if i == 0 && strings.HasSuffix(p, ".jsonl") {
			last := bytes.LastIndexByte(b[:len(b)-1], '\n') + 1
			huge := append([]byte(`{"type":"assistant","x":"`), bytes.Repeat([]byte("a"), claudecode.MaxTranscriptLine)...)
			b = slices.Concat(b[:last], huge, []byte("\"}\n"), b[last:])
		}
		write(rel, b, os.O_TRUNC)
	}
	s.post(t, hooks[len(hooks)/2:], len(hooks)-len(hooks)/2, 0)

	got := wait("every call and every agent's tokens", func(st sessionState) bool {
		return len(st.Calls) == len(want.Calls) && len(st.Tokens) == len(want.Agents)
	})
	time.Sleep(100 * time.Millisecond) // looks that find nothing new
	got = wait("nothing more", func(sessionState) bool { return true })
	if fmt.Sprint(got.Counts) != fmt.Sprint(want.Counts) {
		t.Errorf("counts %v, the hooks alone %v", got.Counts, want.Counts)
	}
	if !slices.Equal(got.Calls, want.Calls) || !slices.Equal(got.Agents, want.Agents) {
		t.Errorf("calls %q agents %q, the hooks alone %q %q", got.Calls, got.Agents, want.Calls, want.Agents)
	}
	for id, tok := range got.Tokens {
		if tok[0] == 0 || tok[1] == 0 {
			t.Errorf("agent %q: tokens %v", id, tok)
		}
	}
	stored, err := s.db.Session(context.Background(), runSession)
	if err != nil {
		t.Fatal(err)
	}
	if stored.EventCount != int64(len(hooks)) {
		t.Errorf("the store counts %d events, the hooks sent %d", stored.EventCount, len(hooks))
	}

	if _, found := s.sessionState(t, "04c54c49-9580-4ffd-ac42-925d83960a3b"); found {
		t.Errorf("a transcript older than the window was read")
	}
	// It grows (a resumed session): read, from its start.
	if err := os.WriteFile(oldPath, append(oldBytes, "{}\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if st, found := s.sessionState(t, "04c54c49-9580-4ffd-ac42-925d83960a3b"); found && len(st.Calls) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the old transcript that grew was not read")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFollowTranscriptsDirLater: a projects directory that does not exist
// when the collector starts (Claude Code not run yet) is followed once it
// appears, the session's records read as they are written.
func TestFollowTranscriptsDirLater(t *testing.T) {
	s := newServer(t, collector.Config{})
	dir := filepath.Join(t.TempDir(), "projects")
	collector.FollowForTest(t, func(ctx context.Context) {
		s.FollowTranscripts(ctx, collector.TranscriptOptions{Dir: dir, StatePath: filepath.Join(t.TempDir(), "import-state.json"),
			Host: "h", User: "u", Interval: 10 * time.Millisecond})
	})
	time.Sleep(50 * time.Millisecond) // looks at nothing
	main, p := runTranscript(t, dir)
	half := bytes.LastIndexByte(main[:len(main)/2], '\n') + 1
	if err := os.WriteFile(p, main[:half], 0o600); err != nil {
		t.Fatal(err)
	}
	calls := func() int {
		st, _ := s.sessionState(t, runSession)
		return len(st.Calls)
	}
	prompts := func() int { return s.runPrompts(t) }
	deadline := time.Now().Add(20 * time.Second)
	for prompts() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the transcript of a directory made after the start was not read")
		}
		time.Sleep(20 * time.Millisecond)
	}
	first := calls()
	appendTo(t, p, main[half:])
	for calls() != 3 { // the main agent's three Agent calls
		if time.Now().After(deadline) {
			t.Fatalf("%d calls after the transcript grew (%d before), want 3", calls(), first)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFollowTranscriptsBesideImport: while hookwatch import holds the
// import state, the collector reads none of the transcripts it would
// read from the same offsets; once the import ends, it reads them from
// where the import left them.
func TestFollowTranscriptsBesideImport(t *testing.T) {
	s := newServer(t, collector.Config{})
	dir := filepath.Join(t.TempDir(), "projects")
	state := filepath.Join(t.TempDir(), "import-state.json")
	main, p := runTranscript(t, dir)
	if err := os.WriteFile(p, main, 0o600); err != nil {
		t.Fatal(err)
	}
	held, err := lockfile.Take(state+".lock", []byte("hookwatch import (pid 1)"))
	if err != nil {
		t.Fatal(err)
	}
	collector.FollowForTest(t, func(ctx context.Context) {
		s.FollowTranscripts(ctx, collector.TranscriptOptions{Dir: dir, StatePath: state,
			Host: "h", User: "u", Interval: 10 * time.Millisecond})
	})
	prompts := func() int { return s.runPrompts(t) }
	time.Sleep(300 * time.Millisecond) // some thirty looks
	if n := prompts(); n != 0 {
		t.Fatalf("%d prompts stored while an import held the state", n)
	}
	if _, err := os.Stat(state); err == nil {
		t.Fatal("the state file was written while an import held it")
	}
	held.Release()
	deadline := time.Now().Add(20 * time.Second)
	for prompts() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the transcript was not read once the import ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFollowUnreadableState: an import state that cannot be parsed stops
// the transcripts' import and is warned of once, not at every look; once
// it is mended (removed, as the warning says), the next look imports and
// says so. The rollouts' follower, which goes on with offsets in memory,
// warns once too and says when the state is read again.
func TestFollowUnreadableState(t *testing.T) {
	var logs syncbuf.Buffer
	s := newServer(t, collector.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	state := filepath.Join(t.TempDir(), "import-state.json")
	if err := os.WriteFile(state, []byte(`{"files":{"/x":{"offset":1`), 0o600); err != nil { // cut short
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "projects")
	main, p := runTranscript(t, dir)
	if err := os.WriteFile(p, main, 0o600); err != nil {
		t.Fatal(err)
	}
	rollouts, day := sessionsDay(t)
	const rollout = "rollout-2026-11-25T14-46-05-01a2132b-c636-7c31-93a8-aeaecf1768f7.jsonl"
	whole := codexRollout(t, rollout)
	cut := bytes.LastIndex(whole, []byte(`"type":"token_count"`))
	cut = bytes.LastIndexByte(whole[:cut], '\n') + 1 // before the last usage record
	rolloutPath := filepath.Join(day, rollout)
	if err := os.WriteFile(rolloutPath, whole[:cut], 0o600); err != nil {
		t.Fatal(err)
	}
	collector.FollowForTest(t, func(ctx context.Context) {
		s.FollowTranscripts(ctx, collector.TranscriptOptions{Dir: dir, StatePath: state,
			Host: "h", User: "u", Interval: 10 * time.Millisecond})
	})
	collector.FollowForTest(t, func(ctx context.Context) {
		s.FollowRollouts(ctx, collector.RolloutOptions{Dir: rollouts, StatePath: state,
			Host: "h", User: "u", Interval: 10 * time.Millisecond})
	})
	prompts := func() int { return s.runPrompts(t) }
	const rolloutID = "01a2132b-c636-7c31-93a8-aeaecf1768f7"
	until := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s; the log:\n%s", what, logs.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// The rollout is read with offsets in memory.
	until("the rollout was not read beside an unreadable state", func() bool { return s.eventCount(t, rolloutID) > 0 })
	time.Sleep(300 * time.Millisecond) // some thirty looks of each
	if n := prompts(); n != 0 {
		t.Fatalf("%d prompts imported with offsets the state could not give", n)
	}
	said := func(msg string) int { return strings.Count(logs.String(), msg) }
	// Said once each as the followers start; the looks after, which meet
	// the same cause, say nothing more.
	for _, w := range []string{"Claude Code's transcripts are not imported until it can be", "Codex's rollouts untouched for"} {
		if n := said(w); n != 1 {
			t.Errorf("%q said %d times in some thirty looks, want once; the log:\n%s", w, n, logs.String())
		}
	}
	for _, w := range []string{"cannot import Claude Code's transcripts", "Codex's rollouts' offsets are not kept until it can be"} {
		if n := said(w); n != 0 {
			t.Errorf("the cause already said was warned of again %d times: %q", n, w)
		}
	}

	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	until("the transcript was not imported once the state was removed", func() bool { return prompts() == 1 })
	// The rollout grows: its look reads the state again, and keeps its
	// offset there.
	appendTo(t, rolloutPath, whole[cut:])
	until("the end of the outage was not said", func() bool {
		return said("Claude Code's transcripts are imported again") == 1 && said("the import state is read again") == 1
	})
	until("the rollout's offset was not kept once the state could be read", func() bool {
		b, _ := os.ReadFile(state)
		return bytes.Contains(b, []byte(strconv.Quote(rolloutPath)+":"+strconv.Itoa(len(whole))))
	})
}
