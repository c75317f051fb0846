package demo

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

// StoryProject is the working directory's base name of the Story session.
const StoryProject = "hookwatch-demo"

// Story returns the session `hookwatch demo` plays: one prompt to a main
// agent that reads the code, runs three subagents in parallel (one of which
// starts a chain three deep), sees a test run fail and pass again, has a
// force-push denied by a policy, is compacted, and finishes; with statusLine
// snapshots of a growing context window and cost. It lasts about 20 s at
// speed 1; speed 2 halves every interval and duration (duration_ms
// included), so that the times of the events stay consistent.
//
// The payloads have the shapes Claude Code 2.1.332 sends (asynchronous
// parallel subagents, a synchronous nested one, the compaction agent with
// agent_type ""), and each subagent's events carry the sidecar metadata the
// hook reads, as the hook's envelopes do. Envelope ids are UUIDv7 of their
// times. The events are in time order.
func Story(sessionID string, start time.Time, speed float64) []event.Envelope {
	if speed <= 0 {
		speed = 1
	}
	s := &story{id: sessionID, start: start, speed: speed, cwd: "/home/dev/src/" + StoryProject}
	s.play()
	slices.SortStableFunc(s.evs, func(a, b stamped) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		return a.order - b.order
	})
	out := make([]event.Envelope, len(s.evs))
	for i, e := range s.evs {
		p, _ := json.Marshal(e.payload)
		var d json.RawMessage
		if e.decision != nil {
			d, _ = json.Marshal(e.decision)
		}
		out[i] = envelope("story", e.t, i, p, d)
		out[i].ID = event.NewID(e.t)
		out[i].Kind = e.kind
		if id, ok := e.payload["agent_id"].(string); ok {
			out[i].Subagent = s.meta[id]
		}
	}
	return out
}

// story builds the Story session. Times are in milliseconds of the
// session at speed 1.
type story struct {
	id    string
	start time.Time
	speed float64
	cwd   string
	evs   []stamped
	calls int
	meta  map[string]*event.SubagentMeta // by agent id
	// began is when the session started, for statusLine's total duration.
	began time.Time
}

// agent is one agent of the story: "" is the main agent.
type agent struct {
	id, typ string
}

func (s *story) at(ms int) time.Time {
	return s.start.Add(time.Duration(float64(ms) / s.speed * float64(time.Millisecond)))
}

func (s *story) add(ms int, a agent, p map[string]any, decision map[string]any) {
	p["session_id"] = s.id
	p["transcript_path"] = "/home/dev/.claude/projects/-home-dev-src-" + StoryProject + "/" + s.id + ".jsonl"
	p["cwd"] = s.cwd
	if _, ok := p["prompt_id"]; !ok {
		p["prompt_id"] = "prompt-0001"
	}
	p["permission_mode"] = "acceptEdits"
	if a.id != "" {
		p["agent_id"], p["agent_type"] = a.id, a.typ
	}
	s.evs = append(s.evs, stamped{t: s.at(ms), order: len(s.evs), payload: p, decision: decision, kind: event.KindHook})
}

// call records one tool call of a from ms to ms+dur, and returns its end.
// A non-empty fail makes it a PostToolUseFailure with that error.
func (s *story) call(ms int, a agent, tool string, input map[string]any, dur int, response any, fail string) int {
	s.calls++
	id := fmt.Sprintf("toolu_demo%04d", s.calls)
	base := func(name string) map[string]any {
		return map[string]any{"hook_event_name": name, "tool_name": tool, "tool_use_id": id, "tool_input": input}
	}
	s.add(ms, a, base(event.PreToolUse), nil)
	post := base(event.PostToolUse)
	if fail != "" {
		post = base(event.PostToolUseFailure)
		post["error"], post["is_interrupt"] = fail, false
	} else {
		post["tool_response"] = response
	}
	post["duration_ms"] = int64(float64(dur) / s.speed)
	s.add(ms+dur, a, post, nil)
	return ms + dur
}

// read records a Read of the file name (relative to the project) of lines
// lines by a from ms on, and returns its end.
func (s *story) read(ms int, a agent, name string, lines int) int {
	path := s.cwd + "/" + name
	return s.call(ms, a, "Read", map[string]any{"file_path": path}, 40,
		map[string]any{"type": "text", "file": map[string]any{"filePath": path, "numLines": lines}}, "")
}

// denied records a call that a policy denied: Claude Code does not run it.
func (s *story) denied(ms int, a agent, tool string, input map[string]any, rule, reason string) {
	s.calls++
	s.add(ms, a, map[string]any{"hook_event_name": event.PreToolUse, "tool_name": tool, "tool_use_id": fmt.Sprintf("toolu_demo%04d", s.calls), "tool_input": input},
		map[string]any{"action": "deny", "rule_ids": []string{rule}, "reason": reason, "enforced": true})
}

// spawn records the Agent call by parent that starts child at ms, and the
// child's start. An async spawn (parallel subagents) returns at once; a
// synchronous one is finished by finish.
func (s *story) spawn(ms int, parent, child agent, description string, async bool) string {
	s.calls++
	id := fmt.Sprintf("toolu_demo%04d", s.calls)
	input := map[string]any{"description": description, "prompt": strings.ToUpper(description[:1]) + description[1:], "subagent_type": child.typ}
	s.add(ms, parent, map[string]any{"hook_event_name": event.PreToolUse, "tool_name": "Agent", "tool_use_id": id, "tool_input": input}, nil)
	depth := 1
	if m := s.meta[parent.id]; m != nil {
		depth = m.SpawnDepth + 1
	}
	if s.meta == nil {
		s.meta = map[string]*event.SubagentMeta{}
	}
	s.meta[child.id] = &event.SubagentMeta{AgentType: child.typ, Description: description, ToolUseID: id, SpawnDepth: depth}
	s.add(ms+40, child, map[string]any{"hook_event_name": event.SubagentStart}, nil)
	if async {
		s.add(ms+60, parent, map[string]any{"hook_event_name": event.PostToolUse, "tool_name": "Agent", "tool_use_id": id, "tool_input": input, "duration_ms": 12,
			"tool_response": map[string]any{"isAsync": true, "status": "async_launched", "agentId": child.id, "description": description, "canReadOutputFile": true}}, nil)
	}
	return id
}

// stop records the end of child at ms; for a synchronous spawn, also the
// end of the Agent call that ran it.
func (s *story) stop(ms int, parent, child agent, spawnID, summary string, began int) {
	s.add(ms, child, map[string]any{"hook_event_name": event.SubagentStop, "stop_hook_active": false, "last_assistant_message": summary,
		"agent_transcript_path": "/home/dev/.claude/projects/-home-dev-src-" + StoryProject + "/" + s.id + "/subagents/agent-" + child.id + ".jsonl"}, nil)
	if spawnID == "" {
		return
	}
	m := s.meta[child.id]
	s.add(ms+30, parent, map[string]any{"hook_event_name": event.PostToolUse, "tool_name": "Agent", "tool_use_id": spawnID,
		"tool_input":  map[string]any{"description": m.Description, "subagent_type": child.typ},
		"duration_ms": int64(float64(ms+30-began) / s.speed),
		"tool_response": map[string]any{"status": "completed", "agentId": child.id, "agentType": child.typ,
			"content": []any{map[string]any{"type": "text", "text": summary}}}}, nil)
}

func (s *story) play() {
	main := agent{}
	explore := agent{"a1d3m0e7x9p1o2r3e", "Explore"}
	reviewer := agent{"a2d3m0c7o9d1e2r3v", "code-reviewer"}
	fixer := agent{"a3d3m0g7e9n1e2r3a", "general-purpose"}
	tester := agent{"a4d3m0t7e9s1t2e3r", "test-runner"}
	digger := agent{"a5d3m0e7x9p1l2o3r", "Explore"}
	file := func(name string) string { return s.cwd + "/" + name }
	goTest := map[string]any{"command": "go test ./refund/...", "description": "Run the refund tests"}

	s.add(0, main, map[string]any{"hook_event_name": event.SessionStart, "source": "startup", "model": "claude-opus-5"}, nil)
	s.add(600, main, map[string]any{"hook_event_name": event.UserPromptSubmit, "session_title": "Idempotent refunds",
		"prompt": "Add idempotency keys to the refund endpoint: map the flow, review the retries, fix it and prove it with tests"}, nil)
	s.began = s.at(0)
	s.snap(700, 14000, 0.02)

	// The main agent looks around, two reads in parallel.
	t := s.call(1500, main, "Grep", map[string]any{"pattern": "Refund", "path": s.cwd}, 180, map[string]any{"mode": "files_with_matches", "numFiles": 4}, "")
	s.read(t+150, main, "refund/handler.go", 212)
	t = s.read(t+170, main, "refund/store.go", 140)

	// Three subagents in parallel.
	t += 400
	s.spawn(t, main, explore, "map the refund flow", true)
	s.spawn(t+150, main, reviewer, "review payment retries", true)
	s.spawn(t+300, main, fixer, "add idempotency keys and test them", true)
	s.snap(t+500, 38000, 0.11)

	// Explore: reads and searches.
	e := s.call(t+500, explore, "Glob", map[string]any{"pattern": "refund/**/*.go"}, 60, map[string]any{"numFiles": 6}, "")
	e = s.read(e+300, explore, "refund/handler.go", 212)
	e = s.call(e+250, explore, "Grep", map[string]any{"pattern": "Retry|retry", "path": file("payments")}, 220, map[string]any{"mode": "content", "numLines": 9}, "")
	e = s.read(e+300, explore, "payments/retry.go", 96)
	s.stop(e+400, main, explore, "", "The refund flow: handler → store → payments.Retry, which retries twice on timeout", 0)

	// The reviewer: reads, a web fetch, an MCP call.
	r := s.read(t+700, reviewer, "payments/retry.go", 96)
	r = s.call(r+400, reviewer, "WebFetch", map[string]any{"url": "https://docs.stripe.example/api/idempotent_requests", "prompt": "How long do keys live?"}, 1400,
		map[string]any{"code": 200, "result": "Keys expire after 24 hours."}, "")
	r = s.call(r+300, reviewer, "mcp__github__get_issue", map[string]any{"owner": "acme", "repo": "payments-api", "issue_number": 412}, 600,
		[]any{map[string]any{"type": "text", "text": "Refunds are applied twice when the first attempt times out"}}, "")
	s.stop(r+500, main, reviewer, "", "Two retry paths send a refund without a key: payments/retry.go:41 and refund/handler.go:88", 0)

	// The fixer edits, then runs a chain: a test runner, which starts an
	// explorer of its own (main → fixer → tester → digger: depth 3).
	f := s.read(t+800, fixer, "refund/handler.go", 212)
	f = s.call(f+500, fixer, "Edit", map[string]any{"file_path": file("refund/handler.go"), "old_string": "retry(req)", "new_string": "retry(req, idem.Key(req))"}, 30,
		map[string]any{"filePath": file("refund/handler.go"), "structuredPatch": []any{}}, "")
	f = s.call(f+300, fixer, "Write", map[string]any{"file_path": file("internal/idem/key.go"), "content": "package idem\n"}, 25, map[string]any{"type": "create"}, "")
	f += 300
	testerSpawn := s.spawn(f, fixer, tester, "run the refund tests and find any failure", false)
	s.snap(f+100, 61000, 0.24)
	x := s.call(f+300, tester, "Bash", goTest, 2600, nil,
		"Exit code 1\n--- FAIL: TestRefundIdempotent (0.01s)\n    handler_test.go:88: second refund went through\nFAIL\texample.com/payments-api/refund\t0.412s")
	x += 300
	diggerSpawn := s.spawn(x, tester, digger, "find why the second refund goes through", false)
	d := s.read(x+200, digger, "refund/store.go", 140)
	d = s.call(d+250, digger, "Grep", map[string]any{"pattern": "idem.Key", "path": s.cwd}, 160, map[string]any{"mode": "content", "numLines": 2}, "")
	s.stop(d+400, tester, digger, diggerSpawn, "store.Insert ignores the key: refund/store.go:57 needs a unique index on it", x)
	x = d + 700
	x = s.call(x, tester, "Edit", map[string]any{"file_path": file("refund/store.go"), "old_string": "INSERT INTO refunds", "new_string": "INSERT OR IGNORE INTO refunds"}, 30,
		map[string]any{"filePath": file("refund/store.go"), "structuredPatch": []any{}}, "")
	x = s.call(x+300, tester, "Bash", goTest, 2200, map[string]any{"stdout": "ok  \texample.com/payments-api/refund\t0.398s", "stderr": "", "interrupted": false}, "")
	s.stop(x+300, fixer, tester, testerSpawn, "The tests pass: a repeated refund with the same key is ignored", f)
	f = x + 700
	s.snap(f, 92000, 0.41)
	// The fixer wants to ship it its way: the policy says no.
	s.denied(f+200, fixer, "Bash", map[string]any{"command": "git push --force origin HEAD:main", "description": "Ship the fix"},
		"no-force-push", "force pushes are not allowed; open a pull request instead")
	f = s.call(f+700, fixer, "Bash", map[string]any{"command": "git switch -c idempotent-refunds && git commit -am 'refund: idempotency keys'", "description": "Commit on a branch"}, 300,
		map[string]any{"stdout": "[idempotent-refunds 4f2c1ab] refund: idempotency keys\n 3 files changed", "stderr": ""}, "")
	s.stop(f+400, main, fixer, "", "Idempotency keys added and tested; committed on branch idempotent-refunds", 0)

	// The context is nearly full: Claude Code compacts it.
	c := max(e, r, f) + 900
	s.snap(c, 171000, 0.63)
	s.add(c, main, map[string]any{"hook_event_name": event.PreCompact, "trigger": "auto", "custom_instructions": ""}, nil)
	s.add(c+1500, agent{"a6d3m0c7o9m1p2a3c", ""}, map[string]any{"hook_event_name": event.SubagentStop, "stop_hook_active": false, "last_assistant_message": "summary of the refund work"}, nil)
	s.add(c+1550, main, map[string]any{"hook_event_name": event.SessionStart, "source": "compact"}, nil)
	s.add(c+1600, main, map[string]any{"hook_event_name": event.PostCompact, "trigger": "auto", "compact_summary": "Idempotency keys added to refunds; tests pass; fix on branch idempotent-refunds"}, nil)
	s.snap(c+1700, 24000, 0.66)

	// The main agent wraps up.
	m := s.call(c+2200, main, "Edit", map[string]any{"file_path": file("CHANGELOG.md"), "old_string": "## Unreleased\n", "new_string": "## Unreleased\n\n- Refunds are idempotent.\n"}, 30,
		map[string]any{"filePath": file("CHANGELOG.md"), "structuredPatch": []any{}}, "")
	s.add(m+700, main, map[string]any{"hook_event_name": event.Stop, "stop_hook_active": false,
		"last_assistant_message": "Refunds now carry an idempotency key; a retried refund is applied once. Tests pass; the change is on branch idempotent-refunds."}, nil)
	s.snap(m+800, 31000, 0.71)
	s.add(m+1800, main, map[string]any{"hook_event_name": event.SessionEnd, "reason": "prompt_input_exit"}, nil)
}

// snap records a statusLine snapshot with the given context and cost.
func (s *story) snap(ms, tokens int, cost float64) {
	t := s.at(ms)
	p := snap{t: t, tokens: tokens, cost: cost, durMS: t.Sub(s.began).Milliseconds()}.payload(s.id, s.cwd, "Idempotent refunds")
	s.evs = append(s.evs, stamped{t: t, order: len(s.evs), payload: p, kind: event.KindStatusLine})
}
