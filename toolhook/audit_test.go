package toolhook

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hookwatch/hookwatch/audit"
	"github.com/hookwatch/hookwatch/decision"
)

// TestAuditTrail records a small agent tree through an AuditRecorder and
// reads the trail back: it verifies as a hash chain, every line validates
// against the published tool-call schema, and the records carry the tree,
// the decisions and redacted previews.
func TestAuditTrail(t *testing.T) {
	dir := t.TempDir()
	w, err := audit.NewWriter(dir, audit.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rec := NewAuditRecorder(w, AuditOptions{BatchSize: 3})

	var hooks Registry
	hooks.Pre("deploy", func(context.Context, *Call) PreResult {
		return PreResult{Decision: decision.Decision{Verdict: decision.Deny, Reasons: []string{"no deploys on Fridays"}}}
	})
	x := &Executor{Registry: &hooks, Recorder: rec, SessionID: "go-agent-1"}
	x.Tools = map[string]Tool{
		"Bash": func(_ context.Context, in map[string]any) (any, error) {
			return "export GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", nil
		},
		"fail":   func(context.Context, map[string]any) (any, error) { return nil, errors.New("disk full") },
		"deploy": echo,
		"Task": func(ctx context.Context, in map[string]any) (any, error) {
			wctx := SpawnAgent(ctx, "worker-1", "checker")
			_, err := x.Call(wctx, "Bash", map[string]any{"command": "env"})
			return "done", err
		},
	}
	ctx := WithTask(context.Background(), "ticket-9")
	if _, err := x.CallID(ctx, "Task", "spawn-1", map[string]any{"prompt": "check"}); err != nil {
		t.Fatal(err)
	}
	x.Call(ctx, "fail", nil)
	x.Call(ctx, "deploy", map[string]any{"env": "prod"})
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}

	reports, err := audit.Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		if r.Problem != nil {
			t.Fatal(audit.Summary(r))
		}
	}
	path := filepath.Join(dir, audit.SessionDir("go-agent-1"), audit.ToolCallsFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	schema := trailSchema(t, "tool_call.v1.schema.json")
	var recs []audit.ToolCall
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(sc.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(v); err != nil {
			t.Fatalf("%s: %v", sc.Bytes(), err)
		}
		var r audit.ToolCall
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4:\n%s", len(recs), data)
	}
	// The worker's Bash call ends first, then the Task that spawned it.
	bash, task, fail, deploy := recs[0], recs[1], recs[2], recs[3]
	if bash.ToolName != "Bash" || bash.AgentID != "worker-1" || bash.AgentType == nil || *bash.AgentType != "checker" ||
		bash.Depth != 1 || bash.ParentToolUseID != "spawn-1" || bash.PromptID != "ticket-9" {
		t.Fatalf("worker call: %+v", bash)
	}
	if strings.Contains(bash.OutputPreview, "ghp_") || !strings.Contains(bash.OutputPreview, "[REDACTED:") {
		t.Fatalf("the output preview is not redacted: %q", bash.OutputPreview)
	}
	if task.ToolUseID != "spawn-1" || task.AgentType != nil || task.Depth != 0 || task.Status != "ok" || task.InputPreview != `{"prompt":"check"}` {
		t.Fatalf("orchestrator call: %+v", task)
	}
	if fail.Status != "error" || fail.Error != "disk full" {
		t.Fatalf("failed call: %+v", fail)
	}
	var d decision.Audit
	if err := json.Unmarshal(deploy.Decision, &d); err != nil || deploy.Status != "denied" || d.Action != "deny" || d.Reason != "no deploys on Fridays" {
		t.Fatalf("denied call: %+v, decision %s", deploy, deploy.Decision)
	}
}
