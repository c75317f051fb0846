package attribution

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/hookwatch/hookwatch/classify"
	"github.com/hookwatch/hookwatch/event"
)

func TestToolCallStatus(t *testing.T) {
	f := func(name string, evs []ev, id, status, errText string, durationMS int64) {
		t.Helper()
		s := only(t, Build(stream(t, evs...)))
		c := callOf(t, s, id)
		if c.Status != status || c.Error != errText {
			t.Fatalf("%s: status %s error %q, want %s %q", name, c.Status, c.Error, status, errText)
		}
		switch {
		case durationMS < 0 && c.DurationMS != nil:
			t.Fatalf("%s: duration %d, want none", name, *c.DurationMS)
		case durationMS >= 0 && (c.DurationMS == nil || *c.DurationMS != durationMS):
			t.Fatalf("%s: duration %v, want %d", name, c.DurationMS, durationMS)
		}
		if (status == StatusPending) != (c.EndedAt == nil) {
			t.Fatalf("%s: ended_at %v with status %s", name, c.EndedAt, status)
		}
	}
	const denyAudit = `{"action":"deny","rule_ids":["no-rm"],"reason":"no rm -rf","enforced":true}`
	const auditOnly = `{"action":"deny","rule_ids":["no-rm"],"reason":"no rm -rf","enforced":false}`
	rm := bash("rm -rf /")

	f("ok, payload duration", []ev{
		pre("Bash", "t1", rm),
		post("Bash", "t1", rm, map[string]any{"stdout": ""}).with("duration_ms", 41.6),
	}, "t1", StatusOK, "", 42)
	f("ok, measured duration", []ev{
		pre("Bash", "t1", rm),
		ev{"hook_event_name": "Notification", "message": "m"},
		post("Bash", "t1", rm, "x"),
	}, "t1", StatusOK, "", 500)
	f("pending", []ev{pre("Bash", "t1", rm)}, "t1", StatusPending, "", -1)
	f("error", []ev{
		pre("Bash", "t1", rm),
		ev{"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_use_id": "t1", "tool_input": rm,
			"error": "Exit code 3\nboom", "is_interrupt": false, "duration_ms": 7},
	}, "t1", StatusError, "Exit code 3\nboom", 7)
	f("interrupted", []ev{
		pre("Bash", "t1", rm),
		ev{"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_use_id": "t1", "tool_input": rm,
			"error": "Interrupted by user", "is_interrupt": true},
	}, "t1", StatusInterrupted, "Interrupted by user", 250)
	f("rejected: only in PostToolBatch", []ev{
		ev{"hook_event_name": "PostToolBatch", "tool_calls": []any{map[string]any{"tool_name": "Glob", "tool_use_id": "t1",
			"tool_input": map[string]any{"pattern": "*"}, "tool_response": "<tool_use_error>Error: No such tool available: Glob</tool_use_error>"}}},
	}, "t1", StatusRejected, "Error: No such tool available: Glob", -1)
	f("error: a tool_use_error after PreToolUse", []ev{
		pre("Bash", "t1", rm),
		ev{"hook_event_name": "PostToolBatch", "tool_calls": []any{map[string]any{"tool_name": "Bash", "tool_use_id": "t1",
			"tool_input": rm, "tool_response": []any{map[string]any{"type": "text", "text": "<tool_use_error>bad</tool_use_error>"}}}}},
	}, "t1", StatusError, "bad", 250)
	f("denied by the client", []ev{
		pre("Bash", "t1", rm),
		ev{"hook_event_name": "PermissionDenied", "tool_name": "Bash", "tool_use_id": "t1", "tool_input": rm, "reason": "Blocked by classifier"},
	}, "t1", StatusDenied, "Blocked by classifier", 250)
	f("denied by policy on PreToolUse", []ev{
		pre("Bash", "t1", rm).with("_decision", denyAudit),
		ev{"hook_event_name": "PostToolBatch", "tool_calls": []any{map[string]any{"tool_name": "Bash", "tool_use_id": "t1",
			"tool_input": rm, "tool_response": "no rm -rf"}}},
	}, "t1", StatusDenied, "no rm -rf", 0)
	f("a deny only recorded (audit mode) does not deny", []ev{
		pre("Bash", "t1", rm).with("_decision", auditOnly),
		post("Bash", "t1", rm, "x"),
	}, "t1", StatusOK, "", 250)
	f("denied on PermissionRequest", []ev{
		pre("Bash", "t1", rm),
		ev{"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": rm, "_decision": denyAudit},
	}, "t1", StatusDenied, "no rm -rf", 250)
	f("denial outranks a later result", []ev{
		pre("Bash", "t1", rm),
		post("Bash", "t1", rm, "x"),
		ev{"hook_event_name": "PermissionDenied", "tool_name": "Bash", "tool_use_id": "t1", "tool_input": rm, "reason": "r"},
	}, "t1", StatusDenied, "r", 500)
	// Claude Code's own denials, as 2.1.332 reports them: a permission
	// rule on the path (before any PreToolUse), one on the command (after
	// PreToolUse), another hook's block, each in PostToolBatch alone (the
	// hook's preview of the text) or in the PostToolUseFailure a
	// transcript gives.
	secret := map[string]any{"file_path": "/p/secret.txt"}
	curl := bash("curl http://127.0.0.1:1/")
	batch := func(tool string, input map[string]any, text string) ev {
		head, _ := json.Marshal(text)
		return ev{"hook_event_name": "PostToolBatch", "tool_calls": []any{map[string]any{"tool_name": tool, "tool_use_id": "t1", "tool_input": input,
			"tool_response": map[string]any{"hookwatch_capture": "preview", "bytes": len(head), "head": string(head)}}}}
	}
	failure := func(tool string, input map[string]any, text string) ev {
		return ev{"hook_event_name": "PostToolUseFailure", "tool_name": tool, "tool_use_id": "t1", "tool_input": input, "error": text}
	}
	const pathDenied = "File is in a directory that is denied by your permission settings."
	const curlDenied = "Permission to use Bash with command curl http://127.0.0.1:1/ has been denied."
	const hookBlocked = "PreToolUse:Bash hook error: Force pushes are not allowed."
	f("denied by a permission rule on the path, before any hook", []ev{
		batch("Read", secret, "<tool_use_error>"+pathDenied+"</tool_use_error>"),
	}, "t1", StatusDenied, pathDenied, -1)
	f("denied by a permission rule on the command, after PreToolUse", []ev{
		pre("Bash", "t1", curl), batch("Bash", curl, curlDenied),
	}, "t1", StatusDenied, curlDenied, 250)
	f("blocked by another hook", []ev{
		pre("Bash", "t1", rm), batch("Bash", rm, hookBlocked),
	}, "t1", StatusDenied, hookBlocked, 250)
	f("a permission denial in the transcript's failure", []ev{
		pre("Read", "t1", secret), failure("Read", secret, "<tool_use_error>"+pathDenied+"</tool_use_error>"), batch("Read", secret, "<tool_use_error>"+pathDenied+"</tool_use_error>"),
	}, "t1", StatusDenied, pathDenied, 250)
	f("the user's no", []ev{
		pre("Bash", "t1", rm), failure("Bash", rm, "The user doesn't want to proceed with this tool use. The tool use was rejected."),
	}, "t1", StatusDenied, "The user doesn't want to proceed with this tool use. The tool use was rejected.", 250)
	f("a command that fails is no denial", []ev{
		pre("Bash", "t1", rm), failure("Bash", rm, "Exit code 1\nPermission to use Bash has been denied."),
	}, "t1", StatusError, "Exit code 1\nPermission to use Bash has been denied.", 250)
	f("codex interrupt ends the turn's running tools", []ev{
		pre("Bash", "c1", bash("sleep 30")).with("turn_id", "u1"),
		ev{"hook_event_name": "Interrupt", "turn_id": "u1"},
	}, "c1", StatusInterrupted, "", 250)
	f("codex command exiting 0 (the rollout's exit code)", []ev{
		pre("Bash", "c1", bash("true")),
		post("Bash", "c1", bash("true"), "").with("_exit_code", 0),
	}, "c1", StatusOK, "", 250)
	f("codex command exiting 3 is an error though PostToolUse says nothing of it", []ev{
		pre("Bash", "c1", bash("exit 3")),
		post("Bash", "c1", bash("exit 3"), "bad\n").with("_exit_code", 3),
	}, "c1", StatusError, "exit code 3", 250)
	f("codex interrupt leaves other turns alone", []ev{
		pre("Bash", "c1", bash("sleep 30")).with("turn_id", "u0"),
		ev{"hook_event_name": "Interrupt", "turn_id": "u1"},
	}, "c1", StatusPending, "", -1)
}

// TestPatchFiles: an apply_patch call lists the files it touches, from the
// whole patch or from the headers the privacy rules keep of it.
func TestPatchFiles(t *testing.T) {
	whole := map[string]any{"command": "*** Begin Patch\n*** Add File: notes.md\n+# Notes\n*** Update File: a.go\n@@\n-x\n+y\n*** End Patch\n"}
	headers := map[string]any{"command": "*** Begin Patch\n*** Add File: notes.md\n*** Update File: a.go\n*** End Patch\n", "hookwatch_capture": "patch", "bytes": 70}
	s := only(t, Build(stream(t,
		pre("apply_patch", "c1", whole),
		post("apply_patch", "c1", whole, "Exit code: 0"),
		pre("apply_patch", "c2", headers),
		pre("Bash", "c3", bash("*** Add File: x")),
	)))
	want := []event.PatchFile{{Op: event.PatchAdd, Path: "notes.md"}, {Op: event.PatchUpdate, Path: "a.go"}}
	for _, id := range []string{"c1", "c2"} {
		if c := callOf(t, s, id); !slices.Equal(c.Files, want) || c.ExitCode != nil {
			t.Errorf("%s: files %+v exit %v", id, c.Files, c.ExitCode)
		}
	}
	if c := callOf(t, s, "c3"); c.Files != nil {
		t.Errorf("Bash files %+v", c.Files)
	}
}

func TestToolCallDecision(t *testing.T) {
	const allowAudit = `{"action":"allow","rule_ids":["r1"],"enforced":true}`
	const rewrite = `{"action":"rewrite_output","rule_ids":["iso"],"enforced":true}`
	s := only(t, Build(stream(t,
		pre("mcp__pay__refund", "t1", map[string]any{"amount": 10}).with("_decision", allowAudit),
		post("mcp__pay__refund", "t1", map[string]any{"amount": 10}, "ok").with("_decision", rewrite),
		pre("Bash", "t2", bash("ls")).with("_decision", "{not json"),
	)))
	c := callOf(t, s, "t1")
	if string(c.Decision) != allowAudit || len(c.Decisions) != 2 || c.Decisions[1].Event != "PostToolUse" || c.Family != classify.FamilyMCPCall {
		t.Fatalf("decision %s, decisions %+v", c.Decision, c.Decisions)
	}
	if c2 := callOf(t, s, "t2"); c2.Decision != nil || c2.Decisions != nil {
		t.Fatalf("an invalid decision was kept: %s", c2.Decision)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatal(err)
	}
}

func TestPermissionRequestMatching(t *testing.T) {
	a, b := bash("make a"), bash("make b")
	s := only(t, Build(stream(t,
		pre("Bash", "t1", a),
		pre("Bash", "t2", b),
		pre("Bash", "t3", a).in("x1", "worker"), // same tool and input, another agent
		// Keys in another order: still the same input.
		ev{"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": map[string]any{"command": "make a"}},
		ev{"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": bash("make c (rewritten)")},
		pre("Bash", "t4", b),
		// Codex adds a description to the input.
		ev{"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": map[string]any{"command": "make b", "description": "why"}},
		post("Bash", "t1", a, "x"),
		ev{"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": a}, // t1 is done: nothing open
		ev{"hook_event_name": "PermissionRequest", "tool_name": "Read", "tool_input": a},
	)))
	f := func(id, matchedBy string) {
		t.Helper()
		c := callOf(t, s, id)
		switch {
		case matchedBy == "" && c.PermissionRequest != nil:
			t.Fatalf("%s: unexpected permission request %+v", id, c.PermissionRequest)
		case matchedBy != "" && (c.PermissionRequest == nil || c.PermissionRequest.MatchedBy != matchedBy):
			t.Fatalf("%s: permission request %+v, want matched by %s", id, c.PermissionRequest, matchedBy)
		}
	}
	f("t1", "input")
	f("t2", "tool")
	f("t3", "")
	f("t4", "input")
	if s.Counts.PermissionRequests != 5 {
		t.Fatalf("%d permission requests", s.Counts.PermissionRequests)
	}
}

func TestToolCallsWithoutID(t *testing.T) {
	// Clients before 2.0.43 send no tool_use_id: PreToolUse and PostToolUse
	// pair by agent, tool and input, oldest first.
	a := bash("ls")
	s := only(t, Build(stream(t,
		pre("Bash", "", a),
		pre("Bash", "", a),
		post("Bash", "", a, "1"),
		post("Bash", "", bash("pwd"), "2"), // no PreToolUse
	)))
	if len(s.ToolCalls) != 3 {
		t.Fatalf("%d calls, want 3", len(s.ToolCalls))
	}
	first, second, orphan := s.ToolCalls[0], s.ToolCalls[1], s.ToolCalls[2]
	if !first.SyntheticID || first.ToolUseID != "nouse:"+envID(0) || first.Status != StatusOK || !first.EndedAt.Equal(at(2)) {
		t.Fatalf("first %+v", first)
	}
	if second.Status != StatusPending || orphan.Status != StatusOK || orphan.ToolUseID != "nouse:"+envID(3) {
		t.Fatalf("second %+v, orphan %+v", second, orphan)
	}
}

// TestSameInstant: events received in the same instant are ordered by
// envelope id, not by content.
func TestSameInstant(t *testing.T) {
	envs := stream(t,
		pre("Bash", "t1", bash("ls")),
		ev{"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": bash("ls")},
	)
	for i := range envs {
		envs[i].ReceivedAt = t0
	}
	// By content the PermissionRequest would sort first ("Pe" < "Pr") and
	// find no open call.
	c := callOf(t, only(t, Build(envs)), "t1")
	if c.PermissionRequest == nil || c.PermissionRequest.MatchedBy != "input" {
		t.Fatalf("permission request %+v", c.PermissionRequest)
	}
}
