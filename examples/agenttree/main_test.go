package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/audit"
)

// TestTrailShowsTheTree runs the program and rebuilds the agent tree from
// its audit trail alone.
func TestTrailShowsTheTree(t *testing.T) {
	dir := t.TempDir()
	if err := run(context.Background(), dir, nil); err != nil {
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
	f, err := os.Open(filepath.Join(dir, audit.SessionDir(SessionID), audit.ToolCallsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c audit.ToolCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.Schema != audit.ToolCallSchema || c.Status != "ok" || c.PromptID != "build-report" {
			t.Fatalf("record %s", sc.Bytes())
		}
		typ := "-"
		if c.AgentType != nil {
			typ = *c.AgentType
		}
		what := c.ToolUseID
		if c.ToolName == "Read" {
			what = "Read " + c.InputPreview
		}
		got = append(got, fmt.Sprintf("%d %s/%s <- %s: %s", c.Depth, c.AgentID, typ, c.ParentToolUseID, what))
	}
	sort.Strings(got)
	want := []string{
		"0 /- <- : spawn-worker-a",
		"0 /- <- : spawn-worker-b",
		"1 worker-a/worker <- spawn-worker-a: Read {\"file_path\":\"worker-a.md\"}",
		"1 worker-a/worker <- spawn-worker-a: spawn-worker-a-1",
		"1 worker-a/worker <- spawn-worker-a: spawn-worker-a-2",
		"1 worker-b/worker <- spawn-worker-b: Read {\"file_path\":\"worker-b.md\"}",
		"1 worker-b/worker <- spawn-worker-b: spawn-worker-b-1",
		"1 worker-b/worker <- spawn-worker-b: spawn-worker-b-2",
		"2 worker-a-1/sub-worker <- spawn-worker-a-1: Read {\"file_path\":\"worker-a-1.md\"}",
		"2 worker-a-2/sub-worker <- spawn-worker-a-2: Read {\"file_path\":\"worker-a-2.md\"}",
		"2 worker-b-1/sub-worker <- spawn-worker-b-1: Read {\"file_path\":\"worker-b-1.md\"}",
		"2 worker-b-2/sub-worker <- spawn-worker-b-2: Read {\"file_path\":\"worker-b-2.md\"}",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("tree from the trail:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
