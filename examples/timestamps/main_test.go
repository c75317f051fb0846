package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/audit"
	"github.com/hookwatch/hookwatch/toolhook"
)

// TestNormalised calls the clock through the executor: the caller gets the
// times in ISO 8601 UTC, the other fields as they were; a tool the hook
// does not match keeps its epoch; and the audit trail records what the
// model saw.
func TestNormalised(t *testing.T) {
	dir := t.TempDir()
	w, err := audit.NewWriter(dir, audit.WriterOptions{UniqueCalls: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rec := toolhook.NewAuditRecorder(w, toolhook.AuditOptions{})
	x, err := newExecutor(rec)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out, err := x.Call(ctx, "mcp__clock__now", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out.(string)), &got); err != nil {
		t.Fatalf("the output is no longer JSON text: %v: %q", err, out)
	}
	want := map[string]any{
		"event":         "deploy",
		"created_at":    "2024-06-01T10:00:00Z",
		"updated_at_ms": "2024-06-01T10:00:00.123Z",
		"expires":       "2024-06-01T10:30:00Z",
		"count":         3.0,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("members %v, want those of %v", got, want)
	}

	echoed, err := x.Call(ctx, "echo", map[string]any{"created_at": 1717236000})
	if err != nil || echoed.(map[string]any)["created_at"] != 1717236000 {
		t.Fatalf("a tool the hook does not match was changed: %v, %v", echoed, err)
	}

	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	calls, err := os.ReadFile(filepath.Join(dir, audit.SessionDir("timestamps-example"), audit.ToolCallsFile))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(calls), "\n")
	var call audit.ToolCall
	if err := json.Unmarshal([]byte(first), &call); err != nil {
		t.Fatal(err)
	}
	if call.ToolName != "mcp__clock__now" || !strings.Contains(call.OutputPreview, "2024-06-01T10:30:00Z") || strings.Contains(call.OutputPreview, "1717236000") {
		t.Fatalf("the trail does not hold what the model saw: %+v", call)
	}
}
