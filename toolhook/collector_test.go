package toolhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// capture returns the first payload of the Claude Code 2.1.332 captures
// (internal/corpus) that keep says to keep, as a map.
func capture(t *testing.T, keep func(p map[string]any) bool) map[string]any {
	t.Helper()
	for _, c := range corpus.Load(t) {
		var p map[string]any
		if strings.HasPrefix(c.Label, "claude-code-2.1.332.jsonl:") && json.Unmarshal(c.JSON, &p) == nil && keep(p) {
			return p
		}
	}
	t.Fatal("no such payload in the captures")
	return nil
}

// sessionView is what the test reads of GET /v1/sessions/{id}.
type sessionView struct {
	Status         string     `json:"status"`
	EndedAt        *time.Time `json:"ended_at"`
	EndReason      string     `json:"end_reason"`
	CWD            string     `json:"cwd"`
	Project        string     `json:"project"`
	ProjectName    string     `json:"project_name"`
	PermissionMode string     `json:"permission_mode"`
	Counts         struct {
		ToolCalls int `json:"tool_calls"`
	} `json:"counts"`
}

// TestCollectorSeesAClaudeCodeSession forwards an agent's calls to a real
// collector (in process, SQLite) beside a Claude Code session of the same
// project, whose captured payloads go to the collector's http hook: the
// project's rule on permission_mode answers the agent's calls as it
// answers Claude Code's in each mode, and once EndSession and Claude Code's
// SessionEnd ended them, the collector shows both sessions alike — ended,
// with the same reason, cwd, project and permission mode. A session the
// agent did not end, the Forwarder closed, stays running.
func TestCollectorSeesAClaudeCodeSession(t *testing.T) {
	home := t.TempDir()
	c, err := collector.Start(collector.Options{
		Config: collector.Config{Store: sqlite.MustOpenDB(t), Version: "test"},
		Addr:   "127.0.0.1:0",
		Home:   home,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background())

	project := filepath.Join(t.TempDir(), "demo")
	policyFile := filepath.Join(project, ".hookwatch", "policy.yaml")
	if err := os.MkdirAll(filepath.Dir(policyFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policyFile, []byte(`rules:
  - id: no-commands-unchecked
    tool: Bash
    when: permission_mode == "bypassPermissions"
    action: deny
    reason: Commands are checked in this project.
`), 0o600); err != nil {
		t.Fatal(err)
	}
	pre := capture(t, func(p map[string]any) bool {
		return p["hook_event_name"] == "PreToolUse" && p["tool_name"] == "Bash" && p["permission_mode"] == "bypassPermissions"
	})
	end := capture(t, func(p map[string]any) bool { return p["hook_event_name"] == "SessionEnd" })
	// The agent runs in the project: its cwd is the process's.
	t.Chdir(project)
	// Claude Code's session, moved to the project.
	ccID := event.NewID(time.Now())
	transcript := claudecode.TranscriptPath(filepath.Join(home, ".claude"), project, ccID)
	claude := func(captured map[string]any, edit func(p map[string]any)) []byte {
		p := maps.Clone(captured)
		p["session_id"], p["cwd"], p["transcript_path"] = ccID, project, transcript
		if edit != nil {
			edit(p)
		}
		data, _ := json.Marshal(p)
		resp, err := http.Post(c.URL()+"/v1/hooks/claude", "application/json", bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("http hook: %s %s", resp.Status, answer)
		}
		return answer
	}

	fw, err := NewForwarder(ForwardOptions{URL: c.URL()})
	if err != nil {
		t.Fatal(err)
	}
	var r Registry
	if err := r.LoadPolicy(policyFile); err != nil {
		t.Fatal(err)
	}
	sdkID := event.NewID(time.Now())
	input := pre["tool_input"].(map[string]any)
	ctx := context.Background()
	var x *Executor
	for _, mode := range []string{"default", "bypassPermissions"} {
		answer := claude(pre, func(p map[string]any) { p["permission_mode"], p["tool_use_id"] = mode, "toolu_"+mode })
		hookDenies := strings.Contains(string(answer), `"permissionDecision":"deny"`)
		x = &Executor{Registry: &r, Recorder: fw, SessionID: sdkID, PermissionMode: mode, Tools: map[string]Tool{"Bash": echo, "Read": echo}}
		_, err := x.Call(ctx, "Bash", input)
		var denied *DeniedError
		if sdkDenies := errors.As(err, &denied); sdkDenies != hookDenies || hookDenies != (mode == "bypassPermissions") {
			t.Errorf("mode %s: the SDK denies: %v (%v), the hook: %v (%s)", mode, sdkDenies, err, hookDenies, answer)
		}
	}
	claude(end, nil)
	x.EndSession(ctx, end["reason"].(string))
	// Another session of the agent, which it does not end.
	open := WithSession(ctx, event.NewID(time.Now()))
	if _, err := x.Call(open, "Read", map[string]any{"file_path": filepath.Join(project, "notes.txt")}); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil || fw.Dropped() != 0 {
		t.Fatalf("close: %v, %d dropped", err, fw.Dropped())
	}

	view := func(id string, ready func(v sessionView) bool) sessionView {
		t.Helper()
		var v sessionView
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			v = sessionView{}
			resp, err := http.Get(c.URL() + "/v1/sessions/" + id)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode == http.StatusOK {
				err = json.NewDecoder(resp.Body).Decode(&v)
			}
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if ready(v) {
				break
			}
		}
		return v
	}
	ended := func(v sessionView) bool { return v.Status == "ended" && v.Counts.ToolCalls == 2 }
	cc, sdk := view(ccID, ended), view(sdkID, ended)
	if !ended(cc) || cc.EndedAt == nil || cc.EndReason != "other" || cc.CWD != project || cc.Project == "" ||
		cc.ProjectName != "demo" || cc.PermissionMode != "bypassPermissions" {
		t.Fatalf("the Claude Code session: %+v", cc)
	}
	cc.EndedAt, sdk.EndedAt = nil, nil
	if sdk != cc {
		t.Errorf("the agent's session\n%+v\nClaude Code's\n%+v", sdk, cc)
	}
	if v := view(scopeOf(open).sessionID, func(v sessionView) bool { return v.Counts.ToolCalls == 1 }); v.Status != "running" || v.EndedAt != nil || v.CWD != project {
		t.Errorf("the session not ended: %+v", v)
	}
}
