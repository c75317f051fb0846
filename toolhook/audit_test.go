package toolhook

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// TestAuditRecorderConcurrent records the calls of agents running at once
// through one AuditRecorder: the trail verifies, holds every call once and
// both of its events, the events' seq counts the lines, and each call's
// PreToolUse comes before the event that ended it.
func TestAuditRecorderConcurrent(t *testing.T) {
	dir := t.TempDir()
	w, err := audit.NewWriter(dir, audit.WriterOptions{UniqueCalls: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rec := NewAuditRecorder(w, AuditOptions{BatchSize: 7})
	x := &Executor{Recorder: rec, SessionID: "go-agents", Tools: map[string]Tool{"Bash": echo}}
	const agents, calls = 8, 50
	var wg sync.WaitGroup
	for a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := SpawnAgent(context.Background(), fmt.Sprintf("worker-%d", a), "checker")
			for i := range calls {
				x.Call(ctx, "Bash", map[string]any{"command": fmt.Sprintf("echo %d %d", a, i)})
			}
		}()
	}
	wg.Wait()
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
	sdir := filepath.Join(dir, audit.SessionDir("go-agents"))
	events := readRecords[audit.Event](t, filepath.Join(sdir, audit.EventsFile))
	if len(events) != 2*agents*calls {
		t.Fatalf("%d events, want %d", len(events), 2*agents*calls)
	}
	pre := map[string]bool{}
	for i, e := range events {
		if e.Seq != int64(i+1) {
			t.Fatalf("line %d has seq %d", i+1, e.Seq)
		}
		switch e.Event {
		case "PreToolUse":
			pre[e.ToolUseID] = true
		case "PostToolUse":
			if !pre[e.ToolUseID] {
				t.Fatalf("line %d: the PostToolUse of %s before its PreToolUse", i+1, e.ToolUseID)
			}
			delete(pre, e.ToolUseID)
		}
	}
	ids := map[string]bool{}
	for _, c := range readRecords[audit.ToolCall](t, filepath.Join(sdir, audit.ToolCallsFile)) {
		ids[c.ToolUseID] = true
	}
	if len(pre) != 0 || len(ids) != agents*calls {
		t.Fatalf("%d calls without their end, %d distinct calls recorded, want %d", len(pre), len(ids), agents*calls)
	}
}

func readRecords[R any](t *testing.T, path string) []R {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []R
	for line := range bytes.Lines(data) {
		var r R
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestPhaseAndMetadataRecorded checks that a call's phase and the hooks'
// metadata reach its payloads, in the trail and at the collector, the
// metadata through the privacy rules.
func TestPhaseAndMetadataRecorded(t *testing.T) {
	secret := "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	var hooks Registry
	hooks.Pre("*", func(context.Context, *Call) PreResult {
		return PreResult{Metadata: map[string]any{"cache": "miss", "token": secret}}
	})
	dir := t.TempDir()
	w, err := audit.NewWriter(dir, audit.WriterOptions{UniqueCalls: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	trail := NewAuditRecorder(w, AuditOptions{})
	var body bytes.Buffer
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		body.ReadFrom(r.Body)
	}))
	defer srv.Close()
	fw, err := NewForwarder(ForwardOptions{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	x := &Executor{Registry: &hooks, Recorder: Recorders{trail, fw}, SessionID: "s", Tools: map[string]Tool{"T": echo}}
	if _, err := x.Call(WithPhase(context.Background(), "plan"), "T", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if err := trail.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	events := readRecords[audit.Event](t, filepath.Join(dir, "s", "events.jsonl"))
	mu.Lock()
	sent := body.String()
	mu.Unlock()
	for _, e := range events {
		var p struct {
			Phase    string         `json:"phase"`
			Metadata map[string]any `json:"metadata"`
		}
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if p.Phase != "plan" || p.Metadata["cache"] != "miss" || strings.Contains(string(e.Payload), secret) {
			t.Fatalf("%s payload %s: want phase plan, the metadata, no secret", e.Event, e.Payload)
		}
	}
	if len(events) != 2 || strings.Count(sent, `"phase":"plan"`) != 2 || strings.Count(sent, `"cache":"miss"`) != 2 || strings.Contains(sent, secret) {
		t.Fatalf("%d events in the trail; sent %s", len(events), sent)
	}
}
