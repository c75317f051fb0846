package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/internal/testtree"
)

// sessionsRoot returns a fresh directory by its real path, with a project
// directory below (and its child "sub"), and points Claude Code's and
// Codex's homes into it (config, codexhome), still empty.
func sessionsRoot(t *testing.T) (root, project string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project = filepath.Join(root, "work", "demo")
	if err := os.MkdirAll(filepath.Join(project, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(root, "config"))
	t.Setenv("CODEX_HOME", filepath.Join(root, "codexhome"))
	return root, project
}

// parallelSession is the session of importer/testdata/parallel.
const parallelSession = "04c54c49-9580-4ffd-ac42-925d83960a3b"

// copyParallel copies the real transcripts of importer/testdata/parallel
// into the projects directory of the Claude Code configuration config as
// if recorded in project, with every old string replaced by new in turn
// (the recorded project's path first).
func copyParallel(t *testing.T, config, project string, oldnew ...string) {
	t.Helper()
	src := "../../importer/testdata/parallel/projects/-tmp-hc-1665870347-c-demo"
	dst := filepath.Join(config, "projects", claudecode.Slug(project))
	r := strings.NewReplacer(oldnew...)
	testtree.Copy(t, src, dst, func(b []byte) []byte { return []byte(r.Replace(string(b))) })
}

// TestSessionsTitleIsTheModels: a long first prompt over several lines is
// titled in the listing as the session model titles it
// (attribution.Title), from the transcript alone and once a collector
// knows the session — one title, whichever tells it.
func TestSessionsTitleIsTheModels(t *testing.T) {
	root, project := sessionsRoot(t)
	config := filepath.Join(root, "config")
	prompt := "[e2e:session] work through the project\\n\\tthen " + strings.Repeat("check every file twice, ", 8)
	copyParallel(t, config, project, "/tmp/hc-1665870347/c/demo", project, "[e2e:session] work through the project", prompt)
	want := attribution.Title(strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(prompt))
	if !strings.HasSuffix(want, "…") || strings.ContainsAny(want, "\n\t") {
		t.Fatalf("the test's title %q is not a cut one-line title", want)
	}
	t.Setenv("HOOKWATCH_URL", "http://127.0.0.1:1")
	if out := mustHW(t, "sessions", "--cwd", project); !strings.Contains(out, want+"\n") {
		t.Errorf("from the transcript, the title is not %q:\n%s", want, out)
	}
	collectorIn(t, filepath.Join(root, "home"))
	mustHW(t, "import", filepath.Join(config, "projects"))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out := mustHW(t, "sessions", "--cwd", project)
		if strings.Contains(out, "fan-out of 2") {
			if !strings.Contains(out, want+"\n") {
				t.Errorf("with the collector, the title is not %q:\n%s", want, out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sessions with a collector:\n%s", out)
		}
	}
}

// TestSessions lists the sessions of a real transcript tree (the client's
// parallel-subagents session, moved to a project directory made here), and
// points a user in a neighbouring directory — parent, child, symlink — to
// the right cd.
func TestSessions(t *testing.T) {
	root, project := sessionsRoot(t)
	config := filepath.Join(root, "config")
	if out := mustHW(t, "sessions", "--all"); out != "No Claude Code session found in "+filepath.Join(config, "projects")+".\n" {
		t.Errorf("sessions --all before any session:\n%s", out)
	}
	copyParallel(t, config, project, "/tmp/hc-1665870347/c/demo", project)
	const id = parallelSession
	// No collector: the listing comes from the transcripts alone.
	t.Setenv("HOOKWATCH_URL", "http://127.0.0.1:1")

	// A file is no directory sessions ran in, and --all lists every
	// project's: neither is taken for something else.
	file := filepath.Join(root, "notes.txt")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := hw(t, "", "sessions", "--cwd", file); err == nil || !strings.Contains(err.Error(), file+" is not a directory") {
		t.Errorf("sessions --cwd FILE: %v", err)
	}
	if _, _, err := hw(t, "", "sessions", "--all", "--cwd", project); !errors.Is(err, errUsage) {
		t.Errorf("sessions --all --cwd DIR: %v, want a usage error", err)
	}

	if _, _, err := hw(t, "", "sessions", "--all", "--project", project); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--project and --all") {
		t.Errorf("sessions --all --project DIR: %v, want a usage error", err)
	}

	// --project, as install and doctor name a directory, and --cwd, its
	// other name, list the same.
	out := mustHW(t, "sessions", "--project", project)
	for _, want := range []string{id, "[e2e:session] work through the project", "2 subagents", "1 prompt,",
		"claude --resume " + id, "claude --resume " + id + " --fork-session"} {
		if !strings.Contains(out, want) {
			t.Errorf("sessions --project %s lacks %q:\n%s", project, want, out)
		}
	}
	if cwdOut := mustHW(t, "sessions", "--cwd", project); cwdOut != out {
		t.Errorf("sessions --cwd %s:\n%s\nwant what --project lists:\n%s", project, cwdOut, out)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	f := func(cwd, why string) {
		t.Helper()
		out := mustHW(t, "sessions", "--cwd", cwd)
		if !strings.Contains(out, "No Claude Code session was started in "+cwd) || !strings.Contains(out, why) ||
			!strings.Contains(out, "cd "+project) || strings.Contains(out, "claude --resume") {
			t.Errorf("sessions --cwd %s:\n%s", cwd, out)
		}
	}
	f(filepath.Dir(project), "a child directory")
	f(filepath.Join(project, "sub"), "a parent directory")
	// Claude Code names the project by the real path: through a symlink,
	// the client resumes the same sessions, and the listing shows them.
	if out := mustHW(t, "sessions", "--cwd", link); !strings.HasPrefix(out, project+" (") || !strings.Contains(out, "claude --resume "+id) {
		t.Errorf("sessions --cwd %s (a symlink to the project):\n%s", link, out)
	}
	gone := filepath.Join(root, "gone")
	if out := mustHW(t, "sessions", "--cwd", gone); !strings.Contains(out, gone+" does not exist.") {
		t.Errorf("sessions --cwd %s (no such directory):\n%s", gone, out)
	}

	other := filepath.Join(root, "other")
	os.Mkdir(other, 0o755)
	if out := mustHW(t, "sessions", "--cwd", other); strings.Contains(out, "cd ") {
		t.Errorf("an unrelated directory is pointed somewhere:\n%s", out)
	}
	if out := mustHW(t, "sessions", "--all"); !strings.Contains(out, project) || !strings.Contains(out, id) || strings.Contains(out, "fan-out") {
		t.Errorf("sessions --all:\n%s", out)
	}

	// A collector that imported the transcripts adds the session's shape
	// and outcome.
	collectorIn(t, filepath.Join(root, "home"))
	mustHW(t, "import", filepath.Join(config, "projects"))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out = mustHW(t, "sessions", "--cwd", project)
		if strings.Contains(out, "2 subagents, fan-out of 2, ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sessions with a collector:\n%s", out)
		}
	}
}

// The 2.1.332 capture's session and its fork, and the 2.1.197 capture's
// session, which shares no baseline with them.
const (
	diffBase  = "74975720-1a50-4d17-9463-df6fabfdeb7c"
	diffFork  = "03760423-27f3-4a00-8d63-b14ec37ed695"
	diffOther = "0e2e0b5d-7136-4322-8086-c38ed16b10ad"
)

// captureEnvelopes reads a capture of testdata/payloads from start; the
// 2.1.332 fork's SessionEnd names its parent as the hook finds it in the
// fork's transcript.
func captureEnvelopes(t *testing.T, name string, start time.Time) []event.Envelope {
	t.Helper()
	f, err := os.Open("../../testdata/payloads/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	envs, err := demo.Payloads(f, start)
	if err != nil {
		t.Fatal(err)
	}
	for i := range envs {
		if p, err := event.Decode(envs[i].Payload); err == nil && p.SessionID == diffFork && p.Name() == event.SessionEnd {
			envs[i].ForkOf = diffBase
		}
	}
	return envs
}

// TestSessionsDiffUnreachable: a collector that does not answer is named
// with where its URL comes from, here the one install kept, and how to
// point the commands elsewhere.
func TestSessionsDiffUnreachable(t *testing.T) {
	e := newTestEnv(t)
	dead := os.Getenv("HOOKWATCH_URL") // newTestEnv's: nothing listens there
	t.Setenv("HOOKWATCH_URL", "")
	if err := os.MkdirAll(e.hwHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.hwHome, hook.URLFile), []byte(dead+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := hw(t, "", "sessions", "diff", "aaaaaaaa", "bbbbbbbb")
	want := "cannot reach the collector at " + dead + " (the URL kept by 'hookwatch install --url'): "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), pointHint) || strings.Contains(err.Error(), "set HOOKWATCH_URL") {
		t.Errorf("sessions diff with no collector at the URL kept: %v\nwant %s…%s", err, want, pointHint)
	}
}

// TestSessionsDiff compares the real capture's session with its fork
// through a real collector: the table names the baseline and where the
// fork left it, both shapes and the calls per tool as the API has them;
// --json is the API's answer; unrelated sessions are refused unless
// --unrelated.
func TestSessionsDiff(t *testing.T) {
	base := collectorIn(t, filepath.Join(t.TempDir(), "home"))
	start := time.Now().Add(-time.Hour)
	envs := append(captureEnvelopes(t, "claude-code-2.1.197.jsonl", start), captureEnvelopes(t, "claude-code-2.1.332.jsonl", start.Add(30*time.Minute))...)
	if err := postEnvelopes(context.Background(), http.DefaultClient, base, "", envs, "the captures"); err != nil {
		t.Fatal(err)
	}
	// The model is written a moment after the commit: wait for the fork.
	var api collector.CompareResponse
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(base + "/v1/sessions/" + diffBase + "/compare/" + diffFork)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&api)
		resp.Body.Close()
		if err == nil && resp.StatusCode == 200 && api.B.Counts.Events > 0 && api.A.Shape != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no comparison after 30 s: HTTP %d", resp.StatusCode)
		}
	}

	out := mustHW(t, "sessions", "diff", diffBase, diffFork)
	line := func(prefix string) []string {
		t.Helper()
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); strings.HasPrefix(l, prefix) {
				return f
			}
		}
		t.Fatalf("no line %q in\n%s", prefix, out)
		return nil
	}
	for _, want := range []string{diffBase, diffFork, "is the baseline", "fork of 74975720 at ", "orchestrator-workers of depth 2", "single agent", "ended"} {
		if !strings.Contains(out, want) {
			t.Errorf("sessions diff lacks %q:\n%s", want, out)
		}
	}
	for _, r := range api.Tools {
		f := line("  " + r.Name + " ")
		if got := strings.Join(f[len(f)-2:], " "); got != fmt.Sprintf("%d %d", r.A, r.B) {
			t.Errorf("tool %s: %q, the API says %d %d", r.Name, got, r.A, r.B)
		}
	}
	if f := line("tool calls"); f[2] != fmt.Sprint(api.A.Counts.ToolCalls) || f[3] != fmt.Sprint(api.B.Counts.ToolCalls) {
		t.Errorf("tool calls %v, the API says %d %d", f, api.A.Counts.ToolCalls, api.B.Counts.ToolCalls)
	}
	for name, n := range map[string][2]int{
		"failures": {api.A.Counts.Failures, api.B.Counts.Failures},
		"rejected": {api.A.Counts.Rejected, api.B.Counts.Rejected},
		"denials":  {api.A.Counts.Denials, api.B.Counts.Denials},
	} {
		if f := line(name + " "); f[1] != fmt.Sprint(n[0]) || f[2] != fmt.Sprint(n[1]) {
			t.Errorf("%s %v, the API says %d %d", name, f, n[0], n[1])
		}
	}
	// The capture's session has two compaction agents (one /compact of
	// 2.1.332): counted among its agents, not among its subagents.
	agentsRow := strings.Join(line("agents "), " ")
	if want := fmt.Sprintf("%d (%d subagents, 2 compaction agents)", api.A.Counts.Agents, api.A.Counts.Subagents); !strings.Contains(agentsRow, want) ||
		api.A.Counts.Subagents != api.A.Shape.Subagents {
		t.Errorf("agents %q, want %q (its shape: %d subagents)", agentsRow, want, api.A.Shape.Subagents)
	}
	if len(api.Files) == 0 || !strings.Contains(out, "  "+api.Files[0].Path+" ") {
		t.Errorf("files %v not listed:\n%s", api.Files, out)
	}

	// The short ids the comparison prints of them name them too.
	if short := mustHW(t, "sessions", "diff", diffBase[:8], diffFork[:8]); short != out {
		t.Errorf("sessions diff %s %s:\n%s\nwant what the whole ids give:\n%s", diffBase[:8], diffFork[:8], short, out)
	}
	if _, _, err := hw(t, "", "sessions", "diff", diffBase[:8], "ffffffff"); err == nil || !strings.Contains(err.Error(), "session ffffffff not found") {
		t.Errorf("a prefix no session has: %v", err)
	}

	var asJSON collector.CompareResponse
	if err := json.Unmarshal([]byte(mustHW(t, "sessions", "diff", "--json", diffBase, diffFork)), &asJSON); err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, asJSON), mustJSON(t, api); a != b {
		t.Errorf("--json:\n%s\nthe API:\n%s", a, b)
	}

	_, _, err := hw(t, "", "sessions", "diff", diffBase, diffOther)
	if err == nil || !strings.Contains(err.Error(), "share no baseline") || !strings.Contains(err.Error(), "--unrelated compares them anyway") {
		t.Errorf("unrelated sessions: %v", err)
	}
	if _, _, err := hw(t, "", "sessions", "diff", diffBase, "no-such-session"); err == nil || !strings.Contains(err.Error(), "session no-such-session not found") {
		t.Errorf("an unknown session: %v", err)
	}
	if out := mustHW(t, "sessions", "diff", "--unrelated", diffBase, diffOther); !strings.Contains(out, "fan-out of 2") || !strings.Contains(out, "share no baseline") {
		t.Errorf("--unrelated:\n%s", out)
	}
	// Flags may follow the ids too.
	if out := mustHW(t, "sessions", "diff", diffBase, diffOther, "--unrelated"); !strings.Contains(out, "fan-out of 2") {
		t.Errorf("A B --unrelated:\n%s", out)
	}
	if _, _, err := hw(t, "", "sessions", "diff", diffBase); err == nil || !strings.Contains(err.Error(), "two session ids") {
		t.Errorf("one id: %v", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSessionsCodex lists the Codex sessions of real rollouts (Codex
// 0.169's, moved to a project directory made here), newest first with
// the commands that continue them; a neighbouring directory is pointed to
// them, the Claude Code listing says they exist, and a missing
// $CODEX_HOME/sessions is named. A collector that imported them adds what
// it knows.
func TestSessionsCodex(t *testing.T) {
	root, project := sessionsRoot(t)
	codexHome := filepath.Join(root, "codexhome")
	t.Setenv("HOOKWATCH_URL", "http://127.0.0.1:1")
	sessions := filepath.Join(codexHome, "sessions")
	// No Codex home is no session, not an error: as for Claude Code's
	// listing, exit status 0 and a line saying where it looked.
	for _, args := range [][]string{{"--cwd", project}, {"--all"}} {
		out, errOut, err := hw(t, "", append([]string{"sessions", "--codex"}, args...)...)
		if err != nil || !strings.Contains(out, "looked in "+sessions+", which does not exist") || errOut != "" {
			t.Errorf("sessions --codex %v with no Codex home: %v\nstdout:\n%s\nstderr:\n%s", args, err, out, errOut)
		}
	}
	// What cannot be read is an error.
	if err := os.WriteFile(codexHome, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := hw(t, "", "sessions", "--codex", "--cwd", project); err == nil || exitCode(err, io.Discard) != 1 || !strings.Contains(err.Error(), "cannot read "+sessions) {
		t.Errorf("sessions --codex with a file for the Codex home: %v, want an error naming %s", err, sessions)
	}
	os.Remove(codexHome)
	if _, _, err := hw(t, "", "sessions", "--codex", "--cwd", project, "--bogus"); exitCode(err, io.Discard) != 2 {
		t.Errorf("sessions --codex with a bad flag: %v, want exit status 2", err)
	}
	if out := mustHW(t, "sessions", "--cwd", project); strings.Contains(out, "Codex:") {
		t.Errorf("no Codex home, Claude Code's listing:\n%s", out)
	}

	day := filepath.Join(sessions, "2026", "11", "30")
	os.MkdirAll(day, 0o755)
	rollouts, _ := filepath.Glob("../../codex/testdata/rollout-*.jsonl")
	for _, f := range rollouts {
		b, _ := os.ReadFile(f)
		os.WriteFile(filepath.Join(day, filepath.Base(f)), []byte(strings.ReplaceAll(string(b), "/home/dev/src/demo", project)), 0o600)
	}
	const (
		fork   = "01a23316-3758-7a81-a9c2-a6bb4415263b" // thread/fork of 01a23316-345b-…
		newest = "01a229dc-1aa3-7a63-b2bf-bdf2419a639b"
		patch  = "01a229dc-18be-7000-9cea-a05da2ec00c3"
		oldest = "01a2132b-c636-7c31-93a8-aeaecf1768f7"
	)
	out := mustHW(t, "sessions", "--codex", "--cwd", project)
	for _, want := range []string{project + " (Codex)\n", patch + "  2026-11-30 ", "  Patch failure\n", "model gpt-5.5, codex exec, 1 prompt, 0 subagents\n",
		"last answer: Patch failed.\n", "continue: codex resume " + patch + "    fork: codex fork " + patch + "\n",
		"forked from 01a23316-345b-74a0-a31e-017bc0d13103, model gpt-5.5, 1 prompt, 0 subagents\n", "continue: codex resume " + fork + " "} {
		if !strings.Contains(out, want) {
			t.Errorf("sessions --codex lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "codex resume ") != len(rollouts) || strings.Index(out, newest) > strings.Index(out, patch) || strings.Index(out, patch) > strings.Index(out, oldest) {
		t.Errorf("not every session, newest first:\n%s", out)
	}
	link := filepath.Join(root, "link")
	os.Symlink(project, link)
	if out := mustHW(t, "sessions", "--codex", "--cwd", link); !strings.HasPrefix(out, project+" (Codex)") {
		t.Errorf("through a symlink:\n%s", out)
	}
	sub := filepath.Join(project, "sub")
	out = mustHW(t, "sessions", "--codex", "--cwd", sub)
	if !strings.Contains(out, "No Codex session was started in "+sub+" (looked in "+sessions+")") ||
		!strings.Contains(out, project+" (a parent directory, 7 sessions, last ") || !strings.Contains(out, "cd "+project) || strings.Contains(out, "continue: ") {
		t.Errorf("sessions --codex in a child directory:\n%s", out)
	}
	if out := mustHW(t, "sessions", "--codex", "--all"); !strings.HasPrefix(out, project+" (Codex)\n") || strings.Count(out, "codex resume ") != len(rollouts) {
		t.Errorf("sessions --codex --all:\n%s", out)
	}
	// Claude Code's listing names them, and how to list them.
	if out := mustHW(t, "sessions", "--cwd", project); !strings.Contains(out, "No Claude Code session was started in "+project) ||
		!strings.Contains(out, "Codex: 7 sessions in "+project+" (hookwatch sessions --codex --project "+project+" lists them).") {
		t.Errorf("sessions in a directory with Codex sessions only:\n%s", out)
	}
	if out := mustHW(t, "sessions", "--cwd", sub); strings.Contains(out, "Codex:") {
		t.Errorf("Codex sessions of another directory named:\n%s", out)
	}
	if out := mustHW(t, "sessions", "--all"); !strings.Contains(out, "Codex: 7 sessions (hookwatch sessions --codex --all lists them).") {
		t.Errorf("sessions --all:\n%s", out)
	}

	// A collector that imported the rollouts adds the sessions' shape
	// and outcome, and the calls that failed.
	collectorIn(t, filepath.Join(root, "home"))
	mustHW(t, "import", "--codex")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out = mustHW(t, "sessions", "--codex", "--cwd", project)
		if strings.Contains(out, "model gpt-5.5, codex exec, 1 prompt, 0 subagents, single agent, ended, 2 calls failed\n      last answer: Patch failed.") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sessions --codex with a collector:\n%s", out)
		}
	}
	// The collector compares Codex sessions as any other: these two share
	// no baseline.
	if out := mustHW(t, "sessions", "diff", "--unrelated", patch, newest); !strings.Contains(out, patch) || !strings.Contains(out, newest) || !strings.Contains(out, "share no baseline") {
		t.Errorf("sessions diff of two Codex sessions:\n%s", out)
	}
}

// TestSessionsListsDenials: a session whose calls a policy denied, or that
// failed, says so in the listing, from the collector's counts; a session
// with neither adds nothing.
func TestSessionsListsDenials(t *testing.T) {
	f := func(counts attribution.Counts, want string) {
		t.Helper()
		var b strings.Builder
		printListed(&b, listedSession{id: "s1", title: "clean up", commands: "continue: claude --resume s1"},
			&sessionFacts{Status: "ended", Counts: counts})
		if !strings.Contains(b.String(), "\n      "+want+"\n") {
			t.Errorf("counts %+v: listing lacks %q:\n%s", counts, want, b.String())
		}
	}
	f(attribution.Counts{Prompts: 1}, "1 prompt, 0 subagents, ended")
	f(attribution.Counts{Prompts: 1, Denials: 1}, "1 prompt, 0 subagents, ended, 1 call denied")
	f(attribution.Counts{Prompts: 2, Denials: 2, Failures: 3}, "2 prompts, 0 subagents, ended, 2 calls denied, 3 calls failed")
}
