package e2e

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/internal/fakeclaude"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fakeTB records what Clients does to a test instead of doing it.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper()                           {}
func (f *fakeTB) Skipf(format string, args ...any)  { f.skipped = fmt.Sprintf(format, args...) }
func (f *fakeTB) Fatalf(format string, args ...any) { f.failed = fmt.Sprintf(format, args...) }

func TestClients(t *testing.T) {
	dir := t.TempDir()
	fake := func(name, says string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\necho '"+says+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	old, newer, again := fake("old", "2.1.197 (Claude Code)"), fake("new", "2.1.332 (Claude Code)"), fake("again", "2.1.197 (Claude Code)")
	mute := fake("mute", "no version here")
	f := func(bins, bin, ci, want, wantOutcome string) {
		t.Helper()
		t.Setenv(BinsEnv, bins)
		t.Setenv(BinEnv, bin)
		t.Setenv("CI", ci)
		tb := &fakeTB{TB: t}
		var got []string
		for _, c := range Clients(tb) {
			got = append(got, c.Name()+"="+filepath.Base(c.Bin))
		}
		outcome := "found"
		switch {
		case tb.failed != "":
			outcome = "failed"
		case tb.skipped != "":
			outcome = "skipped"
		}
		if strings.Join(got, " ") != want || outcome != wantOutcome {
			t.Fatalf("Clients with %s=%q %s=%q CI=%q: %q %s (%s%s), want %q %s",
				BinsEnv, bins, BinEnv, bin, ci, got, outcome, tb.skipped, tb.failed, want, wantOutcome)
		}
	}
	// The matrix, ordered by version, one client per version.
	f(newer+":"+old+":"+again, "", "", "2.1.197=old 2.1.332=new", "found")
	f(newer+":"+old, newer, "true", "2.1.197=old 2.1.332=new", "found")
	// One client for a developer who has one.
	f("", newer, "", "2.1.332=new", "found")
	f("", old, "true", "2.1.197=old", "found")
	// A binary that is missing or does not tell its version.
	f(old+":"+newer+".missing", "", "", "", "skipped")
	f(old+":"+newer+".missing", "", "true", "", "failed") // in CI the suite must run
	f("", dir, "", "", "skipped")
	f("", mute, "", "", "skipped")
	f(":", "", "", "", "skipped")
}

// TestClientMatrix keeps the suite's clients those of the support rule: in
// CI it runs on the oldest and the newest tested client, and on nothing
// else.
func TestClientMatrix(t *testing.T) {
	var got []string
	for _, c := range Clients(t) {
		got = append(got, c.Name())
	}
	want := []string{install.OldestTestedClient.String(), install.NewestTestedClient.String()}
	if os.Getenv("CI") != "" && !slices.Equal(got, want) {
		t.Fatalf("the suite runs on clients %v; the support rule names %v as tested", got, want)
	}
	t.Logf("clients: %v (tested: %v)", got, want)
}

func TestSettingsJSON(t *testing.T) {
	got := SettingsJSON(Hook{Command: "/usr/local/bin/hookwatch", Args: []string{"hook"}})
	path := filepath.Join("testdata", "settings.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("settings differ from %s (run with -update):\n%s", path, got)
	}

	var s struct {
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(SettingsJSON(Hook{Command: "/bin/rec"}), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Hooks) != 30 || s.Hooks["WorktreeCreate"] != nil {
		t.Fatalf("%d events registered (want the 31 of the catalogue but WorktreeCreate)", len(s.Hooks))
	}
	for ev, groups := range s.Hooks {
		h := groups[0].Hooks[0]
		if _, async := h["async"]; async != (ev == "SubagentStart") {
			t.Fatalf("%s: async %v", ev, h["async"])
		}
		if args, ok := h["args"].([]any); !ok || len(args) != 0 || h["command"] != "/bin/rec" {
			t.Fatalf("%s: not the exec form: %v", ev, h)
		}
	}
}

// checkCommon checks what every payload of every run must satisfy.
func checkCommon(t *testing.T, evs []event) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no hook payload recorded")
	}
	for _, ev := range evs {
		for _, key := range []string{"session_id", "transcript_path", "cwd", "hook_event_name"} {
			if ev.str(key) == "" {
				t.Fatalf("%s without %s: %s", ev.name(), key, ev)
			}
		}
		if ev.has("agent_id") && !ev.has("agent_type") {
			t.Fatalf("%s with agent_id but no agent_type: %s", ev.name(), ev)
		}
	}
}

// byToolUseID returns the single event named name for tool call id.
func byToolUseID(t *testing.T, evs []event, name, id string) event {
	t.Helper()
	got := filter(evs, name, func(ev event) bool { return ev.str("tool_use_id") == id })
	if len(got) != 1 {
		t.Fatalf("%d %s events for %s, want 1", len(got), name, id)
	}
	return got[0]
}

func TestToolKinds(t *testing.T) {
	t.Parallel()
	EachClient(t, testToolKinds)
}

func testToolKinds(t *testing.T, c Client) {
	r := newRecorded(t, c)
	sc := ToolKinds(r.Project, r.WebURL)
	res := r.Play(sc)
	if res.Text != "Every tool ran." {
		r.dump()
		t.Fatalf("result %q", res.Text)
	}
	evs := r.events()
	checkCommon(t, evs)
	reqs := turnRequests(r.Model.Requests(), "[e2e:tool-kinds]")
	if len(reqs) != 3 {
		r.dump()
		t.Fatalf("%d model turns, want 3", len(reqs))
	}
	offered := reqs[0].Tools
	t.Logf("tools offered by claude %s in -p mode: %s", c.Name(), strings.Join(offered, ", "))
	for _, name := range []string{"Agent", "Bash", "Read", "Edit", "Write"} {
		if !slices.Contains(offered, name) {
			t.Fatalf("%s not offered: %v", name, offered)
		}
	}
	for _, name := range []string{"Glob", "Grep", "TodoWrite"} {
		if slices.Contains(offered, name) {
			t.Fatalf("%s is offered, but real-client.md says it is not in -p mode", name)
		}
	}

	// Every call gets a PreToolUse and a PostToolUse with its tool_use_id.
	var calls []fakeclaude.Block
	for _, q := range reqs {
		for _, b := range q.Reply {
			if b.IsToolUse() {
				calls = append(calls, b)
			}
		}
	}
	var called []string
	for _, c := range calls {
		called = append(called, c.Tool)
		pre := byToolUseID(t, evs, "PreToolUse", c.ID)
		post := byToolUseID(t, evs, "PostToolUse", c.ID)
		if pre.str("tool_name") != c.Tool || post.str("tool_name") != c.Tool {
			t.Fatalf("tool %s recorded as %s/%s", c.Tool, pre.str("tool_name"), post.str("tool_name"))
		}
		if !post.has("duration_ms") || !post.has("tool_response") {
			t.Fatalf("PostToolUse(%s) lacks duration_ms or tool_response: %s", c.Tool, post)
		}
		if pre.has("agent_id") || pre.str("prompt_id") == "" || pre.str("prompt_id") != post.str("prompt_id") {
			t.Fatalf("PreToolUse(%s) attribution: %s", c.Tool, pre)
		}
	}
	want := []string{"Bash", "Read", "Write", "Edit"}
	for _, opt := range []string{"TaskCreate", "WebFetch", "WebSearch", "TaskUpdate"} {
		if slices.Contains(offered, opt) {
			want = append(want, opt)
		}
	}
	slices.Sort(want)
	slices.Sort(called)
	if !slices.Equal(called, want) {
		t.Fatalf("called %v, want %v", called, want)
	}
	if len(filter(evs, "PostToolUseFailure", nil)) != 0 {
		r.dump()
		t.Fatal("a tool failed")
	}
	if slices.Contains(offered, "TaskCreate") {
		created, completed := filter(evs, "TaskCreated", nil), filter(evs, "TaskCompleted", nil)
		if len(created) != 1 || len(completed) != 1 || created[0].str("task_id") == "" ||
			created[0].str("task_id") != completed[0].str("task_id") || created[0].str("task_subject") != "Tidy main.go" {
			t.Fatalf("task events: created %v completed %v", created, completed)
		}
	}

	// The session frame, and one PostToolBatch per tool turn. The client
	// loads CLAUDE.md while it starts: that InstructionsLoaded hook runs
	// beside SessionStart's and may be recorded first (seen on 2.1.332).
	frame := filter(evs, "", func(ev event) bool { return ev.name() != "InstructionsLoaded" })
	if frame[0].name() != "SessionStart" || frame[0].str("source") != "startup" || frame[len(frame)-1].name() != "SessionEnd" ||
		frame[len(frame)-1].str("reason") != "other" {
		t.Fatalf("frame: first %s, last %s", frame[0], frame[len(frame)-1])
	}
	if p := filter(evs, "UserPromptSubmit", nil); len(p) != 1 || p[0].str("prompt") != sc.Prompt {
		t.Fatalf("UserPromptSubmit: %v", p)
	}
	if s := filter(evs, "Stop", nil); len(s) != 1 || s[0].str("last_assistant_message") != "Every tool ran." {
		t.Fatalf("Stop: %v", s)
	}
	if n := len(filter(evs, "PostToolBatch", nil)); n != 2 {
		t.Fatalf("%d PostToolBatch, want 2", n)
	}
	ids := map[string]bool{}
	for _, ev := range evs {
		ids[ev.str("session_id")] = true
	}
	if len(ids) != 1 || !ids[res.SessionID] {
		t.Fatalf("session ids %v, result %s", ids, res.SessionID)
	}

	// The tools really ran, and the model saw their results.
	b, err := os.ReadFile(filepath.Join(r.Project, "main.go"))
	if err != nil || !strings.Contains(string(b), `greeting() + "!"`) {
		t.Fatalf("Edit did not change main.go: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(r.Project, "notes.md")); err != nil {
		t.Fatalf("Write did not create notes.md: %v", err)
	}
	bash, _ := reqs[1].ToolResult(calls[0].ID)
	if calls[0].Tool != "Bash" || !strings.Contains(bash.ResultText(), "greet.go") {
		t.Fatalf("the model saw %q for ls", bash.ResultText())
	}
}

func TestFailingBash(t *testing.T) {
	t.Parallel()
	EachClient(t, testFailingBash)
}

func testFailingBash(t *testing.T, c Client) {
	r := newRecorded(t, c)
	r.Play(FailingBash())
	evs := r.events()
	checkCommon(t, evs)
	pre := filter(evs, "PreToolUse", func(ev event) bool { return ev.input("command") == FailingBashCommand })
	if len(pre) != 1 {
		r.dump()
		t.Fatalf("%d PreToolUse for the failing command", len(pre))
	}
	id := pre[0].str("tool_use_id")
	fail := byToolUseID(t, evs, "PostToolUseFailure", id)
	if !strings.HasPrefix(fail.str("error"), "Exit code 3") || fail["is_interrupt"] != false || !fail.has("duration_ms") {
		t.Fatalf("PostToolUseFailure: %s", fail)
	}
	if n := len(filter(evs, "PostToolUse", func(ev event) bool { return ev.str("tool_use_id") == id })); n != 0 {
		t.Fatalf("%d PostToolUse for the failed call", n)
	}
	reqs := turnRequests(r.Model.Requests(), "[e2e:failing-bash]")
	res, ok := reqs[len(reqs)-1].ToolResult(id)
	if !ok || !res.IsError || !strings.Contains(res.ResultText(), "Exit code 3") {
		t.Fatalf("the model saw %+v", res)
	}
}

func TestRejectedCall(t *testing.T) {
	t.Parallel()
	EachClient(t, testRejectedCall)
}

func testRejectedCall(t *testing.T, c Client) {
	r := newRecorded(t, c)
	r.Play(RejectedCall())
	evs := r.events()
	checkCommon(t, evs)
	if n := len(filter(evs, "", func(ev event) bool { return ev.str("tool_name") == "Glob" })); n != 0 {
		r.dump()
		t.Fatalf("%d tool events for Glob, want none: it fails validation first", n)
	}
	var found bool
	for _, batch := range filter(evs, "PostToolBatch", nil) {
		calls, _ := batch["tool_calls"].([]any)
		for _, c := range calls {
			m, _ := c.(map[string]any)
			resp, _ := m["tool_response"].(string)
			if m["tool_name"] == "Glob" && strings.Contains(resp, "<tool_use_error>") && m["tool_use_id"] != "" {
				found = true
			}
		}
	}
	if !found {
		r.dump()
		t.Fatal("no PostToolBatch with the rejected Glob call")
	}
}

// spawnedBy is the call that spawned a subagent, and the subagent's depth.
type spawnedBy struct {
	pre   event // PreToolUse(Agent)
	depth int
}

// agentSpawns maps each subagent to the PreToolUse(Agent) that spawned it,
// using the .meta.json sidecar, and checks the sidecar against the other
// two sources real-client.md names (PostToolUse(Agent).tool_response.agentId
// and the SubagentStart's agent_type).
func agentSpawns(t *testing.T, r *recorded, evs []event, sessionID string) map[string]spawnedBy {
	t.Helper()
	spawns := map[string]spawnedBy{}
	for _, start := range filter(evs, "SubagentStart", nil) {
		id := start.str("agent_id")
		b, err := os.ReadFile(r.SubagentMeta(sessionID, id))
		if err != nil {
			t.Fatalf("no sidecar for %s: %v", id, err)
		}
		var meta struct {
			AgentType  string `json:"agentType"`
			ToolUseID  string `json:"toolUseId"`
			SpawnDepth int    `json:"spawnDepth"`
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			t.Fatalf("sidecar of %s: %v: %s", id, err, b)
		}
		if meta.AgentType != start.str("agent_type") {
			t.Fatalf("sidecar type %q, SubagentStart type %q", meta.AgentType, start.str("agent_type"))
		}
		pre := byToolUseID(t, evs, "PreToolUse", meta.ToolUseID)
		post := byToolUseID(t, evs, "PostToolUse", meta.ToolUseID)
		resp, _ := post["tool_response"].(map[string]any)
		if pre.input("subagent_type") != meta.AgentType || resp["agentId"] != id {
			t.Fatalf("agent %s: spawning call %s, its PostToolUse names %v", id, pre, resp["agentId"])
		}
		spawns[id] = spawnedBy{pre: pre, depth: meta.SpawnDepth}
	}
	return spawns
}

func TestParallelSubagents(t *testing.T) {
	t.Parallel()
	EachClient(t, testParallelSubagents)
}

func testParallelSubagents(t *testing.T, c Client) {
	r := newRecorded(t, c)
	res := r.Play(ParallelSubagents(r.Project))
	evs := r.events()
	checkCommon(t, evs)
	starts := filter(evs, "SubagentStart", nil)
	var types []string
	for _, s := range starts {
		types = append(types, s.str("agent_type"))
	}
	slices.Sort(types)
	if !slices.Equal(types, []string{"Explore", "general-purpose", "general-purpose"}) {
		r.dump()
		t.Fatalf("subagent types %v", types)
	}
	spawns := agentSpawns(t, r, evs, res.SessionID)
	if len(spawns) != 3 {
		t.Fatalf("%d distinct subagents, want 3", len(spawns))
	}
	for id, sp := range spawns {
		pre := sp.pre
		if pre.has("agent_id") || sp.depth != 1 {
			t.Fatalf("agent %s spawned at depth %d by %s", id, sp.depth, pre)
		}
		mine := filter(evs, "", func(ev event) bool { return ev.str("agent_id") == id })
		var tools []string
		for _, ev := range mine {
			if ev.str("session_id") != res.SessionID || ev.str("agent_type") != pre.input("subagent_type") {
				t.Fatalf("subagent event %s: want session %s, type %s", ev, res.SessionID, pre.input("subagent_type"))
			}
			if ev.name() == "PreToolUse" {
				tools = append(tools, ev.str("tool_name"))
			}
		}
		slices.Sort(tools)
		if !slices.Equal(tools, []string{"Bash", "Read"}) {
			t.Fatalf("agent %s called %v", id, tools)
		}
		stop := filter(mine, "SubagentStop", nil)
		if len(stop) != 1 {
			t.Fatalf("%d SubagentStop for %s", len(stop), id)
		}
		if _, err := os.Stat(stop[0].str("agent_transcript_path")); err != nil {
			t.Fatalf("subagent transcript: %v", err)
		}
	}

	// The sidecar exists for every event after the subagent's start; for
	// SubagentStart itself only async hooks can see it.
	var atStart, seenAtStart int
	for _, s := range r.sidecarsSeen() {
		if s.Event == "SubagentStart" {
			atStart++
			if s.MetaExists {
				seenAtStart++
			}
			continue
		}
		if !s.MetaExists {
			t.Fatalf("sidecar of %s missing at its %s", s.AgentID, s.Event)
		}
	}
	if atStart != 3 {
		t.Fatalf("the async SubagentStart hook ran %d times, want 3", atStart)
	}
	t.Logf("the async SubagentStart hook saw the sidecar %d of %d times", seenAtStart, atStart)
}

func TestNestedSubagents(t *testing.T) {
	t.Parallel()
	EachClient(t, testNestedSubagents)
}

func testNestedSubagents(t *testing.T, c Client) {
	r := newRecorded(t, c)
	res := r.Play(NestedSubagents())
	evs := r.events()
	checkCommon(t, evs)
	spawns := agentSpawns(t, r, evs, res.SessionID)
	if len(spawns) != NestedDepth {
		r.dump()
		t.Fatalf("%d subagents, want %d", len(spawns), NestedDepth)
	}
	// Walk up from the agent that ran Bash: each spawning call carries the
	// agent_id of its parent, the main agent's none.
	bash := filter(evs, "PreToolUse", func(ev event) bool { return ev.input("command") == "echo deepest" })
	if len(bash) != 1 {
		t.Fatalf("%d Bash calls at the bottom", len(bash))
	}
	agent := bash[0].str("agent_id")
	for depth := NestedDepth; depth >= 1; depth-- {
		sp, ok := spawns[agent]
		if !ok {
			t.Fatalf("no spawning call for agent %q at depth %d", agent, depth)
		}
		if sp.depth != depth {
			t.Fatalf("agent %s: spawnDepth %d, want %d", agent, sp.depth, depth)
		}
		agent = sp.pre.str("agent_id")
	}
	if agent != "" {
		t.Fatalf("the top subagent was spawned by agent %q, want the main agent", agent)
	}
}

// runs splits events into the runs of the client: each ends with its
// SessionEnd.
func runs(evs []event) [][]event {
	var out [][]event
	start := 0
	for i, ev := range evs {
		if ev.name() == "SessionEnd" {
			out = append(out, evs[start:i+1])
			start = i + 1
		}
	}
	if start < len(evs) {
		out = append(out, evs[start:])
	}
	return out
}

// transcriptUUIDs returns the uuids of a transcript's records in order.
func transcriptUUIDs(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec struct {
			UUID string `json:"uuid"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.UUID != "" {
			out = append(out, rec.UUID)
		}
	}
	return out
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	EachClient(t, testLifecycle)
}

func testLifecycle(t *testing.T, c Client) {
	r := newRecorded(t, c)
	lc := r.PlayLifecycle(Lifecycle())
	id := lc.Start.SessionID
	texts := []string{lc.Start.Text, lc.Resume.Text, lc.Fork.Text, lc.Continue.Text}
	if !slices.Equal(texts, []string{StartedText, ResumedText, ForkedText, ContinuedText}) {
		r.dump()
		t.Fatalf("results %q", texts)
	}
	if lc.Resume.SessionID != id || lc.Compact.SessionID != id || lc.Continue.SessionID != id || lc.Fork.SessionID == id {
		t.Fatalf("session ids: start %s resume %s fork %s compact %s continue %s", id,
			lc.Resume.SessionID, lc.Fork.SessionID, lc.Compact.SessionID, lc.Continue.SessionID)
	}
	evs := r.events()
	checkCommon(t, evs)
	rs := runs(evs)
	if len(rs) != 5 {
		r.dump()
		t.Fatalf("%d runs recorded, want 5", len(rs))
	}
	first := func(run []event, name string) event {
		t.Helper()
		got := filter(run, name, nil)
		if len(got) == 0 {
			t.Fatalf("no %s in run %v", name, names(run))
		}
		return got[0]
	}
	sessionStart := func(run []event, source, sid string) {
		t.Helper()
		if ss := first(run, "SessionStart"); ss.str("source") != source || ss.str("session_id") != sid {
			t.Fatalf("SessionStart %s, want source %s session %s", ss, source, sid)
		}
	}
	prompt := func(run []event, text, sid string) {
		t.Helper()
		if up := first(run, "UserPromptSubmit"); up.str("prompt") != text || up.str("session_id") != sid {
			t.Fatalf("UserPromptSubmit %s, want %q in %s", up, text, sid)
		}
	}
	start, resume, fork, compact, cont := rs[0], rs[1], rs[2], rs[3], rs[4]
	sessionStart(start, "startup", id)

	// Resume keeps the id.
	sessionStart(resume, "resume", id)
	prompt(resume, ResumePrompt, id)

	// Fork: 2.1.197 sends SessionStart under the old id (source resume)
	// and everything after it under the new; a newer client sends every
	// event under the new id, SessionStart with source fork, and no event
	// names the old one.
	forked := lc.Fork.SessionID
	if c.ForksAsNewSession() {
		sessionStart(fork, "fork", forked)
	} else {
		sessionStart(fork, "resume", id)
	}
	for _, ev := range fork {
		if ev.name() == "SessionStart" && !c.ForksAsNewSession() {
			continue
		}
		if ev.str("session_id") != forked {
			t.Fatalf("fork event under %s, want %s: %s", ev.str("session_id"), forked, ev)
		}
	}
	prompt(fork, ForkPrompt, forked)
	// Lineage: the fork's transcript starts with copies of the original's
	// records, same uuids.
	orig, copied := transcriptUUIDs(t, r.Transcript(id)), transcriptUUIDs(t, r.Transcript(forked))
	if len(orig) < 2 || len(copied) < 2 || !slices.Contains(copied, orig[0]) || !slices.Contains(copied, orig[1]) {
		t.Fatalf("fork transcript does not copy the original: %v vs %v", orig, copied)
	}

	// Compaction: PreCompact → SubagentStop of the compact agent (type "",
	// no SubagentStart) → SessionStart compact → PostCompact.
	var order []string
	for _, ev := range compact {
		if ev.str("session_id") != id {
			t.Fatalf("compaction event under %s: %s", ev.str("session_id"), ev)
		}
		switch ev.name() {
		case "PreCompact", "SubagentStart", "SubagentStop", "PostCompact":
			order = append(order, ev.name())
		case "SessionStart":
			order = append(order, ev.name()+":"+ev.str("source"))
		}
	}
	if want := []string{"SessionStart:resume", "PreCompact", "SubagentStop", "SessionStart:compact", "PostCompact"}; !slices.Equal(order, want) {
		t.Fatalf("compaction events %v, want %v", order, want)
	}
	stop := first(compact, "SubagentStop")
	if typ, ok := stop["agent_type"].(string); !ok || typ != "" || stop.str("agent_id") == "" {
		t.Fatalf("compaction SubagentStop: %s", stop)
	}
	if pre := first(compact, "PreCompact"); pre.str("trigger") != "manual" || pre.str("custom_instructions") != CompactInstruction {
		t.Fatalf("PreCompact %s", pre)
	}
	if post := first(compact, "PostCompact"); !strings.Contains(post.str("compact_summary"), fakeclaude.CompactedKey) {
		t.Fatalf("PostCompact %s", post)
	}

	// Continue picks the compacted session up again; the model's request is
	// the compacted conversation.
	sessionStart(cont, "resume", id)
	prompt(cont, ContinuePrompt, id)
	after := turnRequests(r.Model.Requests(), fakeclaude.CompactedKey)
	if len(after) != 1 || !strings.Contains(after[0].AllText(), ContinuePrompt) {
		t.Fatalf("%d requests after the compaction", len(after))
	}
}
