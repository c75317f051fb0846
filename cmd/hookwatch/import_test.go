package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/internal/lockfile"
	"github.com/hookwatch/hookwatch/internal/syncbuf"
	"github.com/hookwatch/hookwatch/internal/testtree"
)

// copyDir copies the directory src into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	testtree.Copy(t, src, dst, nil)
}

// TestImportUsage imports a real session's transcripts (a main agent and
// two parallel subagents) into a real collector priced by --prices, and
// reads the tokens and cost per agent, per turn and per session from the
// API; a second import adds nothing.
func TestImportUsage(t *testing.T) {
	dir := t.TempDir()
	prices := filepath.Join(dir, "prices.json")
	// The scripted model answers as claude-opus-4-8: $5 and $25 per million.
	os.WriteFile(prices, []byte(`{"date":"2026-11-01","models":{"claude-opus-4-8":{"input":5,"output":25}}}`), 0o600)
	base := collectorIn(t, filepath.Join(dir, "home"), "--prices", prices)
	projects := filepath.Join(dir, "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)

	dry := mustHW(t, "import", "--dry-run", projects)
	if !strings.HasPrefix(dry, "would import ") || !strings.Contains(dry, "04c54c49-9580-4ffd-ac42-925d83960a3b") {
		t.Fatalf("dry run:\n%s", dry)
	}
	out := mustHW(t, "import", projects)
	if !strings.HasPrefix(out, "imported ") || !strings.Contains(out, "from 3 files") {
		t.Fatalf("import:\n%s", out)
	}

	type usage struct {
		Input     int64   `json:"input_tokens"`
		Output    int64   `json:"output_tokens"`
		Responses int     `json:"responses"`
		Cost      float64 `json:"cost_usd"`
		Unpriced  int     `json:"unpriced"`
	}
	var agents struct {
		Agents []struct {
			AgentID string `json:"agent_id"`
			Usage   *usage `json:"usage"`
		} `json:"agents"`
	}
	id := "04c54c49-9580-4ffd-ac42-925d83960a3b"
	getJSON(t, base, "/v1/sessions/"+id+"/agents", &agents)
	if len(agents.Agents) != 3 {
		t.Fatalf("%d agents", len(agents.Agents))
	}
	var sum usage
	for _, a := range agents.Agents {
		u := a.Usage
		// Every response of the scripted model uses 10 tokens in, 5 out.
		if u == nil || u.Responses == 0 || u.Input != 10*int64(u.Responses) || u.Output != 5*int64(u.Responses) || u.Unpriced != 0 {
			t.Fatalf("agent %q usage %+v", a.AgentID, u)
		}
		sum.Input += u.Input
		sum.Output += u.Output
		sum.Responses += u.Responses
		sum.Cost += u.Cost
	}
	var s struct {
		Usage *usage `json:"usage"`
		Turns []struct {
			PromptID string `json:"prompt_id"`
			usage
		} `json:"turns"`
	}
	getJSON(t, base, "/v1/sessions/"+id, &s)
	wantCost := float64(sum.Input*5+sum.Output*25) / 1e6
	if s.Usage == nil || s.Usage.Input != sum.Input || s.Usage.Responses != sum.Responses || !near(s.Usage.Cost, wantCost) || !near(sum.Cost, wantCost) {
		t.Fatalf("session usage %+v, agents sum %+v, want cost %v", s.Usage, sum, wantCost)
	}
	if len(s.Turns) != 1 || s.Turns[0].PromptID != "8c67a298-7ddf-4181-87b0-4bd61e00f5d0" || s.Turns[0].Responses != sum.Responses {
		t.Fatalf("turns %+v", s.Turns)
	}

	again := mustHW(t, "import", projects)
	if !strings.HasPrefix(again, "imported 0 records") {
		t.Fatalf("second import:\n%s", again)
	}
	// A dry run after it reads from the offsets kept, as the import would.
	if dry := mustHW(t, "import", "--dry-run", projects); !strings.HasPrefix(dry, "would import 0 records") {
		t.Fatalf("dry run after the import:\n%s", dry)
	}
}

// TestImportAfterHooks: importing a real session's transcripts after its
// hooks were recorded adds the tokens and nothing else — the same agents
// and calls, none counted twice — and says why it sent so little: what
// the collector had, then, imported again, that nothing was new.
func TestImportAfterHooks(t *testing.T) {
	dir := t.TempDir()
	base := collectorIn(t, filepath.Join(dir, "home"), "--watch-transcripts=off")
	const src = "../../attribution/testdata/claude-transcript"
	projects := filepath.Join(dir, "projects")
	copyDir(t, src+"/projects", projects)
	b, err := os.ReadFile(src + "/envelopes.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	body := `{"envelopes":[` + strings.Join(strings.Split(strings.TrimSpace(string(b)), "\n"), ",") + "]}"
	resp, err := http.Post(base+"/v1/events", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST of the hooks' envelopes: %s", resp.Status)
	}
	const id = "b4383b84-90ed-4ee7-986f-80e2b6c88baa"
	model := func() (string, bool) {
		t.Helper()
		var agents, calls, sess map[string]json.RawMessage
		getJSON(t, base, "/v1/sessions/"+id+"/agents", &agents)
		getJSON(t, base, "/v1/sessions/"+id+"/tool-calls?limit=1000", &calls)
		getJSON(t, base, "/v1/sessions/"+id, &sess)
		var counts struct {
			Agents    int `json:"agents"`
			ToolCalls int `json:"tool_calls"`
			Prompts   int `json:"prompts"`
		}
		json.Unmarshal(sess["counts"], &counts)
		// The calls' and agents' ids, statuses and times, and the counts;
		// not their usage, which the import adds.
		var cs []struct {
			ID, Agent, Status string
			Start, End        any
		}
		var raw struct {
			ToolCalls []struct {
				ID     string `json:"tool_use_id"`
				Agent  string `json:"agent_id"`
				Status string `json:"status"`
				Start  any    `json:"started_at"`
				End    any    `json:"ended_at"`
			} `json:"tool_calls"`
			Agents []struct {
				ID      string `json:"agent_id"`
				Type    string `json:"agent_type"`
				Spawn   string `json:"spawn_tool_use_id"`
				Started any    `json:"started_at"`
				Stopped any    `json:"stopped_at"`
			} `json:"agents"`
		}
		json.Unmarshal(calls["tool_calls"], &raw.ToolCalls)
		json.Unmarshal(agents["agents"], &raw.Agents)
		for _, c := range raw.ToolCalls {
			cs = append(cs, struct {
				ID, Agent, Status string
				Start, End        any
			}{c.ID, c.Agent, c.Status, c.Start, c.End})
		}
		out, _ := json.Marshal([]any{counts, cs, raw.Agents})
		return string(out), string(sess["usage"]) != "" && string(sess["usage"]) != "null"
	}
	before, hadUsage := model()
	if hadUsage || !strings.Contains(before, `"tool_calls":9`) {
		t.Fatalf("before the import: usage %v, %s", hadUsage, before)
	}
	if dry := mustHW(t, "import", "--dry-run", projects); !strings.Contains(dry, "\n25 events the collector already had (from the hooks, an earlier import or hookwatch serve following the transcripts) would not be sent again\n") {
		t.Errorf("dry run after the hooks said\n%s", dry)
	}
	out := mustHW(t, "import", projects)
	for _, want := range []string{
		"imported 8 records of 1 session from 4 files",
		"\n25 events the collector already had (from the hooks, an earlier import or hookwatch serve following the transcripts) were not sent again\n",
		"\nthe dashboard: " + base + "/#/s/" + id + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("import after the hooks said\n%s\nwant %q in it", out, want)
		}
	}
	after, hasUsage := model()
	if after != before || !hasUsage {
		t.Errorf("the import changed the hooks' model or added no usage (%v):\nbefore %s\nafter  %s", hasUsage, before, after)
	}
	again := mustHW(t, "import", projects)
	if !strings.HasPrefix(again, "imported 0 records of 0 sessions from 4 files") || !strings.Contains(again, "\nnothing new: every file was read to its end before") ||
		strings.Contains(again, "dashboard") {
		t.Errorf("second import said\n%s", again)
	}
	// Without its offsets, it reads all again; what it sends the
	// collector has, and it says so.
	os.Remove(filepath.Join(dir, "home", "import-state.json"))
	again = mustHW(t, "import", projects)
	if !strings.HasPrefix(again, "imported 8 records") || !strings.Contains(again, "\n8 of the records sent the collector had already") {
		t.Errorf("import without its offsets said\n%s", again)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestImportRelativePath: transcripts named by a path relative to the
// current directory are the same files as by their absolute path: the
// session records the transcript's absolute path (the one its hooks
// carry), and importing them again by another path reads nothing again.
func TestImportRelativePath(t *testing.T) {
	dir := t.TempDir()
	base := collectorIn(t, filepath.Join(dir, "home"))
	projects := filepath.Join(dir, "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	t.Chdir(dir)
	if out := mustHW(t, "import", "projects"); !strings.Contains(out, "from 3 files") {
		t.Fatalf("import of a relative path:\n%s", out)
	}
	id := "04c54c49-9580-4ffd-ac42-925d83960a3b"
	var s struct {
		TranscriptPath string `json:"transcript_path"`
	}
	getJSON(t, base, "/v1/sessions/"+id, &s)
	if want := filepath.Join(projects, "-tmp-hc-1665870347-c-demo", id+".jsonl"); s.TranscriptPath != want {
		t.Errorf("transcript_path %q, want %q", s.TranscriptPath, want)
	}
	for _, p := range []string{projects, "./projects/", "projects/../projects"} {
		if out := mustHW(t, "import", p); !strings.HasPrefix(out, "imported 0 records") {
			t.Errorf("import of %s after the import of projects:\n%s", p, out)
		}
	}
}

// TestImportNothingYet: on a machine where Claude Code never ran, import
// says where it looked and how to point it elsewhere.
func TestImportNothingYet(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(dir, "claude"))
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "home"))
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"import", "--no-start"}, nil, &stdout, &stderr)
	if err == nil {
		t.Fatal("import of a missing projects directory: no error")
	}
	for _, w := range []string{"no Claude Code transcripts", filepath.Join(dir, "claude", "projects"), "CLAUDE_CONFIG_DIR"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
}

// TestImportNothingToRead: paths that hold nothing to import need no
// collector: none answering is no error, and none is started.
func TestImportNothingToRead(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "home"))
	t.Setenv("HOOKWATCH_URL", "http://127.0.0.1:1")
	empty := filepath.Join(dir, "empty")
	os.MkdirAll(empty, 0o700)
	for _, args := range [][]string{{"import", "--no-start", empty}, {"import", "--codex", "--no-start", empty}} {
		out, errOut, err := hw(t, "", args...)
		if err != nil || !strings.Contains(out, "0 ") || !strings.Contains(errOut, "no ") || strings.Contains(errOut, "collector") {
			t.Errorf("%v: %v\n%s%s", args, err, out, errOut)
		}
	}
}

// TestImportNotTranscripts: a file named that is not a transcript is an
// error, and lines that are none of the client's records are said.
func TestImportNotTranscripts(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "home"))
	t.Setenv("HOOKWATCH_URL", "http://127.0.0.1:1")
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("hello\n"), 0o600)
	if _, _, err := hw(t, "", "import", "--dry-run", notes); err == nil || !strings.Contains(err.Error(), notes+" is not a Claude Code transcript") {
		t.Errorf("import of %s: %v", notes, err)
	}
	// A directory that holds none (a wrong one) is said so.
	empty := filepath.Join(dir, "empty")
	os.MkdirAll(filepath.Join(empty, "-p"), 0o700)
	out, errOut, err := hw(t, "", "import", "--dry-run", empty)
	if err != nil || !strings.Contains(out, "from 0 files") || !strings.Contains(errOut, "no Claude Code transcript") || !strings.Contains(errOut, empty) {
		t.Errorf("import of a directory without transcripts: %v\n%s%s", err, out, errOut)
	}
	garbage := filepath.Join(dir, "projects", "-p", "4f1c2a8e-0000-4000-8000-000000000001.jsonl")
	os.MkdirAll(filepath.Dir(garbage), 0o700)
	os.WriteFile(garbage, []byte("not json\n{\"x\":1}\nstill not\n"), 0o600)
	out, errOut, err = hw(t, "", "import", "--dry-run", garbage)
	if err != nil || !strings.Contains(out, "would import 0 records") || !strings.Contains(errOut, "none of the 3 lines read was a transcript record") {
		t.Errorf("import of lines that are no records: %v\n%s%s", err, out, errOut)
	}
	// Codex's sessions, given without --codex, are pointed to it.
	const rollout = "rollout-2026-12-01T19-30-23-01a23316-3758-7a81-a9c2-a6bb4415263b.jsonl"
	b, err := os.ReadFile(filepath.Join("..", "..", "codex", "testdata", rollout))
	if err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Join(dir, "codex", "sessions")
	os.MkdirAll(filepath.Join(sessions, "2026", "12", "01"), 0o700)
	os.WriteFile(filepath.Join(sessions, "2026", "12", "01", rollout), b, 0o600)
	out, errOut, err = hw(t, "", "import", "--dry-run", sessions)
	if err != nil || !strings.Contains(out, "would import 0 records") || !strings.Contains(errOut, rollout+" is named as a Codex rollout: hookwatch import --codex reads those") {
		t.Errorf("import of Codex's sessions without --codex: %v\n%s%s", err, out, errOut)
	}
}

// TestImportLostLines: lines of a transcript that cannot be read (torn by
// a crash, not JSON) are said, with the records around them imported.
func TestImportLostLines(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "home"))
	t.Setenv("HOOKWATCH_URL", deadPort(t).URL())
	projects := filepath.Join(dir, "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	main := filepath.Join(projects, "-tmp-hc-1665870347-c-demo", "04c54c49-9580-4ffd-ac42-925d83960a3b.jsonl")
	b := readFile(t, main)
	cut := bytes.IndexByte(b, '\n') + 1
	torn := `{"type":"user","message":{"role":"user","content":"half` + "\nnot json\n"
	os.WriteFile(main, append(append(b[:cut:cut], torn...), b[cut:]...), 0o600)
	out, errOut, err := hw(t, "", "import", "--dry-run", projects)
	if err != nil || !strings.HasPrefix(out, "would import 96 records") ||
		errOut != "hookwatch import: passed over 2 transcript lines not JSON or not of a record's shape (torn by a crash, or edited): what they record is not imported\n" {
		t.Errorf("import of a transcript with torn lines: %v\n%s%s", err, out, errOut)
	}
}

// TestImportCodexLostLines: lines of a rollout that cannot be read (torn
// by a crash, not JSON) are said as a transcript's are, with the records
// around them imported.
func TestImportCodexLostLines(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "home"))
	t.Setenv("HOOKWATCH_URL", deadPort(t).URL())
	rollouts := filepath.Join(dir, "sessions")
	copyDir(t, "../../codex/testdata", rollouts)
	whole, _, err := hw(t, "", "import", "--codex", "--dry-run", rollouts)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(rollouts, "rollout-2026-11-25T14-46-05-01a2132b-c636-7c31-93a8-aeaecf1768f7.jsonl")
	b := readFile(t, f)
	cut := bytes.IndexByte(b, '\n') + 1
	torn := `{"timestamp":"2026-11-25T14:46:10.000Z","type":"response_item","payload":{"type":"function_call","call_id":"c` + "\nnot json\n"
	os.WriteFile(f, append(append(b[:cut:cut], torn...), b[cut:]...), 0o600)
	out, errOut, err := hw(t, "", "import", "--codex", "--dry-run", rollouts)
	if err != nil || out != whole ||
		errOut != "hookwatch import: passed over 2 rollout lines not JSON or not of a record's shape (torn by a crash, or edited): what they record is not imported\n" {
		t.Errorf("import --codex of a rollout with torn lines: %v\n%s%s\nwant as without them:\n%s", err, out, errOut, whole)
	}
}

// TestImportDryRunMany: a dry run over many sessions lists the first ones
// and sums them all up by project, and says how to list every one, which
// --verbose does; a small one lists each session with its project.
func TestImportDryRunMany(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "home"))
	t.Setenv("HOOKWATCH_URL", deadPort(t).URL())
	projects := filepath.Join(dir, "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	main := readFile(t, filepath.Join(projects, "-tmp-hc-1665870347-c-demo", "04c54c49-9580-4ffd-ac42-925d83960a3b.jsonl"))
	out := mustHW(t, "import", "--dry-run", projects)
	if !strings.HasSuffix(out, "\n  session 04c54c49-9580-4ffd-ac42-925d83960a3b: 96 records in -tmp-hc-1665870347-c-demo\n") {
		t.Errorf("dry run of one session:\n%s", out)
	}
	for i := range 60 {
		project := []string{"-tmp-api", "-tmp-web"}[i%2]
		os.MkdirAll(filepath.Join(projects, project), 0o700)
		os.WriteFile(filepath.Join(projects, project, fmt.Sprintf("00000000-0000-4000-8000-%012d.jsonl", i)), main, 0o600)
	}
	out = mustHW(t, "import", "--dry-run", projects)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	listed := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "  session ") {
			listed++
		}
	}
	if listed != 50 || !strings.Contains(out, "\n  … 11 more sessions; all 61 by project (hookwatch import --dry-run --verbose lists every session):\n") ||
		!strings.HasSuffix(out, "\n  project -tmp-api: 30 sessions, 1380 records\n  project -tmp-web: 30 sessions, 1380 records\n  project -tmp-hc-1665870347-c-demo: 1 session, 96 records\n") {
		t.Errorf("dry run of 61 sessions: %d listed\n%s", listed, out)
	}
	out = mustHW(t, "import", "--dry-run", "--verbose", projects)
	if n := strings.Count(out, "\n  session "); n != 61 || strings.Contains(out, "project ") {
		t.Errorf("dry run --verbose of 61 sessions: %d listed\n%s", n, out)
	}
	if _, _, err := hw(t, "", "import", "--codex", "--verbose"); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "sessions --codex") {
		t.Errorf("import --codex --verbose: %v", err)
	}
}

// TestImportFlagsAfterPaths: flags given after the paths are flags, not
// paths to read: a dry run stays a dry run, --codex reads rollouts.
func TestImportFlagsAfterPaths(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "home"))
	dead := deadPort(t)
	t.Setenv("HOOKWATCH_URL", dead.URL())
	projects := filepath.Join(dir, "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	rollouts := filepath.Join(dir, "sessions")
	copyDir(t, "../../codex/testdata", rollouts)
	if out := mustHW(t, "import", projects, "--dry-run"); !strings.HasPrefix(out, "would import 96 records of 1 session from 3 files") {
		t.Errorf("import DIR --dry-run:\n%s", out)
	}
	if out := mustHW(t, "import", rollouts, "--dry-run", "--codex"); !strings.HasPrefix(out, "Would import ") || !strings.Contains(out, "from 7 rollout files") {
		t.Errorf("import DIR --dry-run --codex:\n%s", out)
	}
	if _, _, err := hw(t, "", "import", projects, "--no-start"); err == nil || !strings.Contains(err.Error(), "no collector answers") {
		t.Errorf("import DIR --no-start with no collector: %v", err)
	}
	// After --, a path that looks like a flag is a path.
	if _, _, err := hw(t, "", "import", "--dry-run", "--", "--codex"); err == nil || !strings.Contains(err.Error(), "cannot read --codex") {
		t.Errorf("import --dry-run -- --codex: %v", err)
	}
}

// TestImportCodexNoRollouts: --codex on a directory that holds no rollout
// (an empty one, Claude Code's transcripts) says so, as import says it of
// transcripts, rather than reporting a success that read nothing.
func TestImportCodexNoRollouts(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "home"))
	t.Setenv("HOOKWATCH_URL", "http://127.0.0.1:1")
	empty := filepath.Join(dir, "empty")
	os.MkdirAll(empty, 0o700)
	projects := filepath.Join(dir, "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	// Claude Code's transcripts are pointed to the import that reads them.
	for p, hint := range map[string]string{empty: "", projects: ": it holds Claude Code's transcripts, which hookwatch import without --codex reads"} {
		out, errOut, err := hw(t, "", "import", "--codex", "--dry-run", p)
		if err != nil || !strings.Contains(out, "from 0 rollout files") || errOut != "hookwatch import: no Codex rollout (rollout-<time>-<id>.jsonl) in "+p+hint+"\n" {
			t.Errorf("import --codex of %s: %v\n%s%s", p, err, out, errOut)
		}
	}
	// The default, Codex's sessions directory, when it holds none.
	t.Setenv("CODEX_HOME", dir)
	os.MkdirAll(filepath.Join(dir, "sessions"), 0o700)
	if _, errOut, err := hw(t, "", "import", "--codex", "--dry-run"); err != nil || !strings.Contains(errOut, "no Codex rollout (rollout-<time>-<id>.jsonl) in "+filepath.Join(dir, "sessions")) {
		t.Errorf("import --codex of an empty sessions directory: %v\n%s", err, errOut)
	}
}

// TestCodexNotRollouts: a file among the rollouts that is none (hook
// payloads named like a rollout, a FIFO) is skipped by import --codex and
// sessions --codex with one line that names it once and says why.
func TestCodexNotRollouts(t *testing.T) {
	root, _ := sessionsRoot(t)
	t.Setenv("HOOKWATCH_HOME", filepath.Join(root, "home"))
	t.Setenv("HOOKWATCH_URL", "http://127.0.0.1:1")
	day := filepath.Join(root, "codexhome", "sessions", "2026", "11", "30")
	os.MkdirAll(day, 0o755)
	payloads := filepath.Join(day, "rollout-2026-11-30T00-00-00-payloads.jsonl")
	os.WriteFile(payloads, []byte(`{"session_id":"01a1fec1-d268-7292-b394-c2a0ea7d215e","hook_event_name":"SessionStart","cwd":"/w","source":"startup"}`+"\n"), 0o600)
	fifo := filepath.Join(day, "rollout-2026-11-30T00-00-01-fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	f := func(cmd, errOut string) {
		t.Helper()
		want := "hookwatch " + cmd + ": skipping " + payloads + ": no session_meta record: not a Codex rollout\n" +
			"hookwatch " + cmd + ": skipping " + fifo + ": not a regular file (a named pipe)\n"
		if errOut != want {
			t.Errorf("%s of files that are no rollouts said\n%s\nwant\n%s", cmd, errOut, want)
		}
	}
	_, errOut, err := hw(t, "", "import", "--codex", "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	f("import", errOut)
	_, errOut, err = hw(t, "", "sessions", "--codex", "--all")
	if err != nil {
		t.Fatal(err)
	}
	f("sessions", errOut)
}

// TestImportMissingPath: a path that does not exist is named once in the
// message, with why it cannot be read, and the exit status is 1; for
// Claude Code's transcripts and for Codex's rollouts alike.
func TestImportMissingPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "home"))
	t.Setenv("HOOKWATCH_URL", "http://127.0.0.1:1")
	missing := filepath.Join(dir, "missing")
	for _, args := range [][]string{{"import", "--dry-run", missing}, {"import", "--codex", "--dry-run", missing}} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, nil, &stdout, &stderr)
		code := exitCode(err, &stderr)
		if want := "hookwatch: cannot read " + missing + ": no such file or directory\n"; code != 1 || stderr.String() != want || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 1, stderr %q", args, code, stderr.String(), stdout.String(), want)
		}
	}
}

// TestImportCodexDryRun: import --codex --dry-run counts what the rollouts
// hold and sends nothing, whether a collector answers or not; --no-start
// without one is an error, as for Claude Code's transcripts.
func TestImportCodexDryRun(t *testing.T) {
	dir := t.TempDir()
	rollouts := filepath.Join(dir, "sessions")
	copyDir(t, "../../codex/testdata", rollouts)
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "down"))
	dead := deadPort(t)
	t.Setenv("HOOKWATCH_URL", dead.URL())
	if out := mustHW(t, "import", "--codex", "--dry-run", rollouts); !strings.HasPrefix(out, "Would import ") || !strings.Contains(out, "from 7 rollout files into") {
		t.Fatalf("dry run with no collector:\n%s", out)
	}
	// A FIFO named as a rollout is skipped, and not counted as read.
	fifo := filepath.Join(rollouts, "rollout-2026-01-01T00-00-00-fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := hw(t, "", "import", "--codex", "--dry-run", rollouts); err != nil || !strings.Contains(out, "from 7 rollout files (1 skipped, said above)") ||
		!strings.Contains(errOut, "skipping "+fifo) {
		t.Fatalf("dry run with a FIFO among the rollouts: %v\n%s%s", err, out, errOut)
	}
	os.Remove(fifo)
	if _, _, err := hw(t, "", "import", "--codex", "--no-start", rollouts); err == nil || !strings.Contains(err.Error(), "no collector answers") {
		t.Fatalf("import --codex --no-start with no collector: %v", err)
	}

	base := collectorIn(t, filepath.Join(dir, "home"))
	dry := mustHW(t, "import", "--codex", "--dry-run", rollouts)
	if !strings.HasPrefix(dry, "Would import ") {
		t.Fatalf("dry run:\n%s", dry)
	}
	var list struct {
		Sessions []json.RawMessage `json:"sessions"`
	}
	getJSON(t, base, "/v1/sessions", &list)
	if len(list.Sessions) != 0 {
		t.Fatalf("the dry run stored %d sessions", len(list.Sessions))
	}
	if out := mustHW(t, "import", "--codex", rollouts); out != "Imported "+strings.TrimPrefix(dry, "Would import ") {
		t.Fatalf("import:\n%s\nafter the dry run:\n%s", out, dry)
	}
	getJSON(t, base, "/v1/sessions", &list)
	if len(list.Sessions) == 0 {
		t.Fatal("the import stored no session")
	}
	// Run again, it reads on from where it stopped, and says it found
	// nothing new, not that it imported it all.
	if again := mustHW(t, "import", "--codex", rollouts); !strings.HasPrefix(again, "Imported 0 tool events, 0 session events and 0 token usage records from 0 rollout files") ||
		!strings.Contains(again, "\nNothing new in 7 rollout files: each was read to its end before") {
		t.Fatalf("import again:\n%s", again)
	}
	// Without the offsets kept, it reads them all again, and says the
	// collector had every event.
	os.Remove(filepath.Join(dir, "home", "import-state.json"))
	if again := mustHW(t, "import", "--codex", rollouts); !strings.HasPrefix(again, "Imported ") || !strings.HasSuffix(again, " events already.\n") ||
		!strings.Contains(again, "\nNothing new: the collector had all ") {
		t.Fatalf("import again without the offsets kept:\n%s", again)
	}
}

// TestImportSince: --since imports only the sessions with a file written
// since (a subagent's is enough, and brings its whole session), and the
// rollouts written since, and says how many it left out; a time it cannot
// read is a usage error that says what it takes.
func TestImportSince(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "home"))
	t.Setenv("HOOKWATCH_URL", deadPort(t).URL())
	projects := filepath.Join(dir, "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	copyDir(t, "../../importer/testdata/edges/projects", projects)
	rollouts := filepath.Join(dir, "sessions")
	copyDir(t, "../../codex/testdata", rollouts)
	old := time.Now().Add(-30 * 24 * time.Hour)
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	sub := filepath.Join(projects, "-tmp-hc-1665870347-c-demo", "04c54c49-9580-4ffd-ac42-925d83960a3b", "subagents", "agent-ad1841a6fbf32358e.jsonl")
	os.Chtimes(sub, time.Now(), time.Now())
	out := mustHW(t, "import", "--dry-run", "--since", "2w", projects)
	if !strings.HasPrefix(out, "would import 96 records of 1 session from 3 files") || !strings.Contains(out, "\n1 session not active since ") ||
		!strings.Contains(out, "04c54c49-9580-4ffd-ac42-925d83960a3b") {
		t.Errorf("import --since 2w:\n%s", out)
	}
	out, errOut, err := hw(t, "", "import", "--dry-run", "--since", "2w", "--codex", rollouts)
	if err != nil || !strings.Contains(out, "from 0 rollout files") || !strings.Contains(out, "\n7 rollout files not written since ") || errOut != "" {
		t.Errorf("import --codex --since 2w: %v\n%s%s", err, out, errOut)
	}
	if _, _, err := hw(t, "", "import", "--since", "yesterday", projects); err == nil || !strings.Contains(err.Error(), "usage error") || !strings.Contains(err.Error(), "7d") {
		t.Errorf("import --since yesterday: %v", err)
	}
}

// TestImportCodexThroughSymlink: Codex's sessions directory kept
// elsewhere and linked is read through the link, named or the default.
func TestImportCodexThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "home"))
	t.Setenv("HOOKWATCH_URL", deadPort(t).URL())
	target := filepath.Join(dir, "elsewhere")
	copyDir(t, "../../codex/testdata", target)
	codexHome := filepath.Join(dir, "codex")
	os.MkdirAll(codexHome, 0o700)
	sessions := filepath.Join(codexHome, "sessions")
	if err := os.Symlink(target, sessions); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CODEX_HOME", codexHome)
	for _, args := range [][]string{{"import", "--codex", "--dry-run", sessions}, {"import", "--codex", "--dry-run"}} {
		out, errOut, err := hw(t, "", args...)
		if err != nil || !strings.Contains(out, "from 7 rollout files into") || errOut != "" {
			t.Errorf("%v: %v\n%s%s", args, err, out, errOut)
		}
	}
}

// TestImportCodexLinkedDay: a directory of Codex's sessions tree that is
// itself a symlink (a month moved to another disk) is read through, once
// however often it is linked, and a link to an ancestor is not followed.
func TestImportCodexLinkedDay(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_HOME", filepath.Join(dir, "home"))
	t.Setenv("HOOKWATCH_URL", deadPort(t).URL())
	target := filepath.Join(dir, "elsewhere")
	copyDir(t, "../../codex/testdata", target)
	sessions := filepath.Join(dir, "sessions")
	os.MkdirAll(filepath.Join(sessions, "2026"), 0o700)
	for l, to := range map[string]string{"2026/11": target, "2026/again": target, "2026/up": sessions} {
		if err := os.Symlink(to, filepath.Join(sessions, l)); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, err := hw(t, "", "import", "--codex", "--dry-run", sessions)
	if err != nil || !strings.Contains(out, "from 7 rollout files into") || errOut != "" {
		t.Errorf("import --codex of a linked month: %v\n%s%s", err, out, errOut)
	}
}

// TestImportTokenRefused: a collector that requires a token the shell does
// not give is said so, with what to do, as demo and sessions say it.
func TestImportTokenRefused(t *testing.T) {
	dir := t.TempDir()
	collectorWithToken(t, filepath.Join(dir, "home"))
	projects := filepath.Join(dir, "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	out, _, err := hw(t, "", "import", projects)
	if err == nil || !strings.Contains(err.Error(), "requires a token, and none was given") || !strings.Contains(err.Error(), "(HTTP 401): ask the collector's admin for a token") {
		t.Fatalf("import into a collector that requires a token: %v", err)
	}
	// A token of the shell's own is named as such.
	t.Setenv("HOOKWATCH_TOKEN", "wrong")
	if _, _, err := hw(t, "", "import", projects); err == nil || !strings.Contains(err.Error(), "refuses HOOKWATCH_TOKEN (HTTP 401): export HOOKWATCH_TOKEN") {
		t.Fatalf("import with a token the collector refuses: %v", err)
	}
	if out != "" {
		t.Errorf("import that failed printed to stdout: %q", out)
	}
}

// TestImportTokenRevoked: import asks the collector what it stores with a
// token it revoked, and is told what replaces a revoked HOOKWATCH_TOKEN
// (hook.RefusedToken, from the collector's answer), not to export it again.
func TestImportTokenRevoked(t *testing.T) {
	testdata, err := filepath.Abs("../../importer/testdata/parallel/projects")
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEnv(t)
	db, secret := revokedTokenDB(t, filepath.Join(e.root, "team.db"))
	newTestCollectorOn(t, db, collector.Config{RequireAuth: true})
	t.Setenv("HOOKWATCH_TOKEN", secret)
	projects := filepath.Join(e.root, "projects")
	copyDir(t, testdata, projects)
	_, _, err = hw(t, "", "import", projects)
	if err == nil || !strings.Contains(err.Error(), "refuses HOOKWATCH_TOKEN (HTTP 401)") || !strings.Contains(err.Error(), "export HOOKWATCH_TOKEN=<the new token>") {
		t.Fatalf("import with a revoked HOOKWATCH_TOKEN: %v, want the fix of a revoked token", err)
	}
	if strings.Contains(err.Error(), "hookwatch serve runs with") || strings.Contains(err.Error(), secret) {
		t.Errorf("import with a revoked HOOKWATCH_TOKEN: %v", err)
	}
}

// TestImportWaitsForTheFollower: an import that finds the transcripts
// being read from the same offsets (the collector's look holds the
// import state) says so and waits, then imports once it is free.
func TestImportWaitsForTheFollower(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	collectorIn(t, home)
	projects := filepath.Join(dir, "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	held, err := lockfile.Take(filepath.Join(home, "import-state.json.lock"), []byte("hookwatch serve (pid 1)"))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		out, errOut string
		err         error
	}
	done := make(chan result, 1)
	var errb syncbuf.Buffer
	go func() {
		var out bytes.Buffer
		err := run(context.Background(), []string{"import", projects}, strings.NewReader(""), &out, &errb)
		done <- result{out.String(), errb.String(), err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errb.String(), "waiting for hookwatch serve (pid 1), which is reading the transcripts") {
		if time.Now().After(deadline) {
			t.Fatalf("the import did not say it waits; stderr:\n%s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case r := <-done:
		t.Fatalf("the import ended while the state was held: %v\n%s", r.err, r.out)
	case <-time.After(300 * time.Millisecond):
	}
	held.Release()
	select {
	case r := <-done:
		if r.err != nil || !strings.HasPrefix(r.out, "imported ") || !strings.Contains(r.out, "from 3 files") {
			t.Fatalf("the import after the wait: %v\nstdout:\n%s\nstderr:\n%s", r.err, r.out, r.errOut)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the import did not go on once the state was free")
	}
}

// modelBehind returns the sessions of the collector at base whose model
// does not reflect all their stored events yet, read from the session list,
// which answers without waiting for the model (GET /v1/sessions/{id} would
// wait for it).
func modelBehind(t *testing.T, base string) (behind []string, sessions int) {
	t.Helper()
	var list struct {
		Sessions []struct {
			ID         string `json:"id"`
			LastSeq    int64  `json:"last_seq"`
			DerivedSeq int64  `json:"derived_seq"`
		} `json:"sessions"`
	}
	getJSON(t, base, "/v1/sessions", &list)
	for _, s := range list.Sessions {
		if s.DerivedSeq < s.LastSeq {
			behind = append(behind, fmt.Sprintf("%s (derived_seq %d, last_seq %d)", s.ID, s.DerivedSeq, s.LastSeq))
		}
	}
	return behind, len(list.Sessions)
}

// TestImportWaitsForTheModel: import returns once the collector has
// modelled what it sent (a model round comes at least 40 ms after the
// commit: read at once, the model would be behind), so that the dashboard
// link it prints shows the calls; past its bound it says the collector is
// still at it, and succeeds. The same for Codex rollouts.
func TestImportWaitsForTheModel(t *testing.T) {
	dir := t.TempDir()
	base := collectorIn(t, filepath.Join(dir, "home"), "--watch-transcripts=off")
	projects := filepath.Join(dir, "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	out := mustHW(t, "import", projects)
	if behind, n := modelBehind(t, base); n == 0 || len(behind) > 0 {
		t.Fatalf("import returned with the model behind on %d of %d sessions: %v\n%s", len(behind), n, behind, out)
	}
	if strings.Contains(out, "still modelling") {
		t.Fatalf("import:\n%s", out)
	}
	var calls struct {
		ToolCalls []json.RawMessage `json:"tool_calls"`
	}
	getJSON(t, base, "/v1/sessions/04c54c49-9580-4ffd-ac42-925d83960a3b/tool-calls", &calls)
	if len(calls.ToolCalls) == 0 {
		t.Fatal("the imported session has no tool calls")
	}

	rollouts := filepath.Join(dir, "sessions")
	copyDir(t, "../../codex/testdata", rollouts)
	out = mustHW(t, "import", "--codex", rollouts)
	if behind, _ := modelBehind(t, base); len(behind) > 0 {
		t.Fatalf("import --codex returned with the model behind on %v\n%s", behind, out)
	}

	// Past the bound (here at once), it says so and exits 0.
	defer func(d time.Duration) { importModelWait = d }(importModelWait)
	importModelWait = time.Nanosecond
	dir2 := t.TempDir()
	collectorIn(t, filepath.Join(dir2, "home"), "--watch-transcripts=off")
	copyDir(t, "../../importer/testdata/parallel/projects", filepath.Join(dir2, "projects"))
	out = mustHW(t, "import", filepath.Join(dir2, "projects"))
	want := "the collector is still modelling 1 session; the dashboard fills in as it does\nthe dashboard: "
	if !strings.Contains(out, want) {
		t.Fatalf("import past the bound: want %q in\n%s", want, out)
	}
}

// TestImportHomeUnusable: an import, a dry run too, whose HOOKWATCH_HOME
// cannot be created (a file where a directory of its path should be, or in
// its place) is refused with serve's words, naming the variable and the
// way out, not the import state's open error. A dry run creates no home:
// one that does not exist yet reads as keeping no offsets.
func TestImportHomeUnusable(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKWATCH_URL", deadPort(t).URL())
	projects := filepath.Join(dir, "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	rollouts := filepath.Join(dir, "sessions")
	copyDir(t, "../../codex/testdata", rollouts)
	file := filepath.Join(dir, "afile")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	const fix = "; set HOOKWATCH_HOME to a directory you can write in (default ~/.hookwatch)"
	for _, tc := range []struct{ home, want string }{
		{filepath.Join(file, "hw"), "cannot create the data directory " + filepath.Join(file, "hw") + " (HOOKWATCH_HOME): mkdir " + file + ": not a directory" + fix},
		{filepath.Join(file, "a", "hw"), "cannot create the data directory " + filepath.Join(file, "a", "hw") + " (HOOKWATCH_HOME): mkdir " + file + ": not a directory" + fix},
		{file, "the data directory " + file + " (HOOKWATCH_HOME) is a file: move it away, or set HOOKWATCH_HOME to a directory you can write in (default ~/.hookwatch)"},
	} {
		t.Setenv("HOOKWATCH_HOME", tc.home)
		for _, args := range [][]string{
			{"import", "--dry-run", projects}, {"import", projects},
			{"import", "--codex", "--dry-run", rollouts}, {"import", "--codex", rollouts},
		} {
			out, errOut, err := hw(t, "", args...)
			if err == nil || err.Error() != tc.want || out != "" || errOut != "" {
				t.Errorf("%s with HOOKWATCH_HOME=%s: %v\n%s%s\nwant the error %q alone", strings.Join(args, " "), tc.home, err, out, errOut, tc.want)
			}
		}
	}
	// A home to be: the dry run reads, and leaves it uncreated.
	home := filepath.Join(dir, "new", "hw")
	t.Setenv("HOOKWATCH_HOME", home)
	if out := mustHW(t, "import", "--dry-run", projects); !strings.HasPrefix(out, "would import 96 records") {
		t.Errorf("import --dry-run with HOOKWATCH_HOME=%s, not yet made:\n%s", home, out)
	}
	if out := mustHW(t, "import", "--codex", "--dry-run", rollouts); !strings.HasPrefix(out, "Would import ") {
		t.Errorf("import --codex --dry-run with HOOKWATCH_HOME=%s, not yet made:\n%s", home, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a dry run made %s: %v", filepath.Join(dir, "new"), err)
	}
}

// TestImportToTeamServerOverTLS: a developer whose hooks send to an
// https:// team server that the team's own authority certified (install
// --ca-file) imports the transcripts into it, trusting that authority as
// the forwarder does, rather than call the server unreachable.
func TestImportToTeamServerOverTLS(t *testing.T) {
	testdata, err := filepath.Abs("../../importer/testdata/parallel/projects")
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEnv(t)
	ts := installTLSTeamServer(t, e)
	projects := filepath.Join(e.root, "projects")
	copyDir(t, testdata, projects)

	out := mustHW(t, "import", projects)
	if !strings.HasPrefix(out, "imported ") {
		t.Fatalf("import:\n%s", out)
	}
	const id = "04c54c49-9580-4ffd-ac42-925d83960a3b"
	resp, err := ts.Client().Get(ts.URL + "/v1/sessions/" + id)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the team server answers HTTP %d for the imported session %s", resp.StatusCode, id)
	}
}
