package claudecode

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestSlug(t *testing.T) {
	f := func(cwd, want string) {
		t.Helper()
		if got := Slug(cwd); got != want {
			t.Fatalf("Slug(%q) = %q, want %q", cwd, got, want)
		}
	}
	f("/Users/me/proj", "-Users-me-proj")
	f("/home/u/.cfg_x", "-home-u--cfg-x")
	f("/home/dev/src/demo", "-home-dev-src-demo")
	f(`D:\work\app`, "D--work-app")
	f("/tmp/café", "-tmp-caf-") // one UTF-16 unit
	f("/tmp/a😀b", "-tmp-a--b")  // a surrogate pair: two units
	f("", "")
	long := "/" + strings.Repeat("a", 300)
	if got := Slug(long); len(got) != 200 || got != "-"+strings.Repeat("a", 199) {
		t.Fatalf("long slug %q", got)
	}
}

func TestProject(t *testing.T) {
	f := func(transcript, cwd, want string) {
		t.Helper()
		if got := Project(transcript, cwd); got != want {
			t.Fatalf("Project(%q, %q) = %q, want %q", transcript, cwd, got, want)
		}
	}
	// The client's own name wins over the slug of cwd (after a cd, or with
	// a symlinked checkout).
	f("/h/.claude/projects/-real-path/s1.jsonl", "/link/path", "-real-path")
	f(`C:\Users\me\.claude\projects\C--w\s1.jsonl`, `C:\w`, "C--w")
	f("/h/.codex/sessions/2026/11/21/rollout-x.jsonl", "/w/p", "-w-p")
	f("", "/w/p", "-w-p")
	f("s1.jsonl", "", "")
}

// TestProjectName: a project named after its cwd reads as the cwd's last
// element; any other project as it is.
func TestProjectName(t *testing.T) {
	long := "/home/dev/" + strings.Repeat("deep/", 50) + "app"
	for _, c := range [][3]string{
		{"", "/home/dev/src/demo/", "demo"},
		{"-home-dev-src-pay-api", "/home/dev/src/pay-api", "pay-api"},
		{"/w/p", "/w/p", "p"},
		{`C--w-api`, `C:\w\api`, "api"},
		{Slug(long) + "-1x2y3z", long, "app"}, // the client's hash after a long path's cut slug
		{"-real-path", "/link/path", "-real-path"},
		{"p", "/x", "p"},
		{"p", "", "p"},
		{"", "", ""},
	} {
		if got := ProjectName(c[0], c[1]); got != c[2] {
			t.Errorf("ProjectName(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

// TestPathsOfRealSessions checks the paths against what a real client
// (Claude Code 2.1.197) sent: each payload's transcript_path is where
// TranscriptPath says, and a subagent's agent_transcript_path where
// SubagentTranscriptPath says.
func TestPathsOfRealSessions(t *testing.T) {
	f, err := os.Open("../testdata/payloads/claude-code-2.1.197.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const configDir = "/home/dev/.claude" // the capture's home
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n, subagents := 0, 0
	for sc.Scan() {
		var p struct {
			SessionID           string `json:"session_id"`
			CWD                 string `json:"cwd"`
			TranscriptPath      string `json:"transcript_path"`
			AgentID             string `json:"agent_id"`
			AgentTranscriptPath string `json:"agent_transcript_path"`
		}
		if json.Unmarshal(sc.Bytes(), &p) != nil || p.TranscriptPath == "" {
			continue
		}
		n++
		if got := TranscriptPath(configDir, p.CWD, p.SessionID); got != p.TranscriptPath {
			t.Errorf("TranscriptPath(%q, %q) = %q; the client wrote %q", p.CWD, p.SessionID, got, p.TranscriptPath)
		}
		if p.AgentTranscriptPath == "" {
			continue
		}
		subagents++
		if got := SubagentTranscriptPath(p.TranscriptPath, p.SessionID, p.AgentID); got != p.AgentTranscriptPath {
			t.Errorf("SubagentTranscriptPath = %q; the client wrote %q", got, p.AgentTranscriptPath)
		}
		meta, ok := SubagentMetaPath(p.TranscriptPath, p.SessionID, p.AgentID)
		if want := strings.TrimSuffix(p.AgentTranscriptPath, ".jsonl") + ".meta.json"; !ok || meta != want {
			t.Errorf("SubagentMetaPath = %q, %v; want %q", meta, ok, want)
		}
	}
	if n == 0 || subagents == 0 {
		t.Fatalf("read %d payloads, %d with a subagent transcript", n, subagents)
	}
}

func TestSubagentPaths(t *testing.T) {
	f := func(transcript, session, agent, wantTranscript, wantMeta string) {
		t.Helper()
		if got := SubagentTranscriptPath(transcript, session, agent); got != wantTranscript {
			t.Errorf("SubagentTranscriptPath(%q, %q, %q) = %q, want %q", transcript, session, agent, got, wantTranscript)
		}
		got, ok := SubagentMetaPath(transcript, session, agent)
		if got != wantMeta || ok != (wantMeta != "") {
			t.Errorf("SubagentMetaPath(%q, %q, %q) = %q, %v, want %q", transcript, session, agent, got, ok, wantMeta)
		}
	}
	f("/h/.claude/projects/-w/s1.jsonl", "s1", "a1", "/h/.claude/projects/-w/s1/subagents/agent-a1.jsonl", "/h/.claude/projects/-w/s1/subagents/agent-a1.meta.json")
	// A Windows client's transcript, read here: the model names the
	// subagent's transcript in the client's separators; the sidecar is read
	// only by a hook on the client's machine.
	if runtime.GOOS != "windows" {
		f(`C:\u\.claude\projects\C--w\s1.jsonl`, "s1", "a1", `C:\u\.claude\projects\C--w\s1\subagents\agent-a1.jsonl`, "")
	}
	// Not the client's layout: no guess at a transcript, but the sidecar is
	// looked for beside whatever transcript the client named.
	f("/tmp/t/s1.jsonl", "s1", "a1", "", "/tmp/t/s1/subagents/agent-a1.meta.json")
	f("/h/.claude/projects/-w/other.jsonl", "s1", "a1", "", "/h/.claude/projects/-w/s1/subagents/agent-a1.meta.json")
	// Hostile ids never leave the directory.
	f("/h/.claude/projects/-w/s1.jsonl", "s1", "../../x", "", "")
	f("/h/.claude/projects/-w/...jsonl", "..", "a1", "", "")
	f("/h/p/s1.jsonl", "s1", `a\b`, "", "")
	f("/h/p/s1.jsonl", "s\x00", "a1", "", "")
	f("/h/p/s1.jsonl", "s1", "", "", "")
	f("s1.jsonl", "s1", "a1", "", "")
	f("", "s1", "a1", "", "")
}

func TestSettingsPath(t *testing.T) {
	f := func(scope, want string) {
		t.Helper()
		got, err := SettingsPath(scope, "/cfg", "/src/p")
		if err != nil || got != filepath.FromSlash(want) {
			t.Fatalf("SettingsPath(%q) = %q, %v; want %q", scope, got, err, want)
		}
	}
	f(ScopeUser, "/cfg/settings.json")
	f(ScopeProject, "/src/p/.claude/settings.json")
	f(ScopeLocal, "/src/p/.claude/settings.local.json")
	if runtime.GOOS == "linux" {
		f(ScopeManaged, "/etc/claude-code/managed-settings.json")
	}
	if _, err := SettingsPath("global", "/cfg", "/src/p"); err == nil || !strings.Contains(err.Error(), `unknown scope "global"`) {
		t.Fatalf("unknown scope: %v", err)
	}
}

func TestUserConfigDir(t *testing.T) {
	f := func(env map[string]string, home, want string) {
		t.Helper()
		got, err := UserConfigDir(func(k string) string { return env[k] }, home)
		if err != nil || got != want {
			t.Fatalf("UserConfigDir(%v, %q) = %q, %v; want %q", env, home, got, err, want)
		}
	}
	f(map[string]string{"CLAUDE_CONFIG_DIR": "/env/claude", "HOME": "/home/e"}, "/home/u", "/env/claude")
	f(map[string]string{"HOME": "/home/e"}, "/home/u", "/home/u/.claude")
	f(map[string]string{"HOME": "/home/e"}, "", "/home/e/.claude")
}
