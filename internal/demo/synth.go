package demo

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

// BigSpec describes a synthetic session.
type BigSpec struct {
	// SessionID names the session.
	SessionID string
	// Start is the time of its first event.
	Start time.Time
	// Events is roughly how many hook events it has (within a few percent).
	Events int
	// Agents is how many subagents the main agent spawns, Wave at a time in
	// parallel (Wave 0 means 8).
	Agents, Wave int
	// Project is the working directory's base name ("" means "payments-api").
	Project string
	// Title is the session title ("" means "Idempotent refunds").
	Title string
	// Ended adds a SessionEnd after the last prompt.
	Ended bool
	// Seed makes a different but equally deterministic session.
	Seed uint64
}

// agentTypes are the subagent types a synthetic session spawns, in turn.
var agentTypes = []string{"Explore", "general-purpose", "code-reviewer", "test-runner", "ui-designer", "docs-writer", "security-auditor", "Plan"}

type stamped struct {
	t        time.Time
	order    int // tie-break: generation order
	payload  map[string]any
	decision map[string]any
	kind     string
}

// Sent returns a copy of envs stamped as a hook stamps the events it
// sends at now: received_at now, a microsecond apart in their order, and
// the id a UUIDv7 of it (ingest.Pipeline). Big's ids are of its own
// clock: sessions replayed side by side would insert them at as many
// places inside the events' id index, where hooks' ids append at its end.
func Sent(envs []event.Envelope, now time.Time) []event.Envelope {
	out := slices.Clone(envs)
	for j := range out {
		out[j].ReceivedAt = now.Add(time.Duration(j) * time.Microsecond)
		out[j].ID = event.NewID(out[j].ReceivedAt)
	}
	return out
}

// Big returns the events of a synthetic session: a main agent that works
// through a few prompts and spawns spec.Agents subagents in parallel waves,
// every agent making tool calls of every family (some failing, some denied
// by a policy, some in parallel), statusLine snapshots with a growing
// context window and cost, and a compaction. The events are in time order.
func Big(spec BigSpec) []event.Envelope {
	if spec.Wave <= 0 {
		spec.Wave = 8
	}
	if spec.Project == "" {
		spec.Project = "payments-api"
	}
	if spec.Title == "" {
		spec.Title = "Idempotent refunds"
	}
	r := rand.New(rand.NewPCG(spec.Seed, 0x5eed))
	cwd := "/home/dev/src/" + spec.Project
	var evs []stamped
	add := func(t time.Time, p map[string]any, decision map[string]any) {
		p["session_id"] = spec.SessionID
		p["transcript_path"] = "/home/dev/.claude/projects/-home-dev-src-" + spec.Project + "/" + spec.SessionID + ".jsonl"
		p["cwd"] = cwd
		evs = append(evs, stamped{t: t, order: len(evs), payload: p, decision: decision, kind: event.KindHook})
	}
	// Per subagent, (Events - main agent's share) / Agents events; a tool
	// call is two events.
	mainCalls := max(6, spec.Events/40)
	perAgent := 0
	if spec.Agents > 0 {
		perAgent = max(4, (spec.Events-2*mainCalls-4*spec.Agents-30)/spec.Agents)
	}
	// Tool call ids have the real clients' shape: "toolu_01" and 22 random
	// letters and digits (public captures), not a counter. Their order is
	// what the model's store meets in a real session: a new call's id lands
	// anywhere in an index by id, not at its end. A generator of their own
	// keeps the rest of the session as it was.
	idr := rand.New(rand.NewPCG(spec.Seed, 0x1d5))
	nextID := func() string {
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		id := []byte("toolu_01")
		for range 22 {
			id = append(id, alphabet[idr.IntN(len(alphabet))])
		}
		return string(id)
	}

	// calls emits one agent's tool calls from t on, about n events, and
	// returns when the agent's last call ended.
	calls := func(t time.Time, n int, agentID, agentType, promptID string, g *gen) time.Time {
		end := t
		for n > 0 {
			t = t.Add(time.Duration(300+r.IntN(2500)) * time.Millisecond) // the model thinks
			par := 1
			if r.IntN(6) == 0 {
				par = 2 + r.IntN(3) // a batch of parallel calls
			}
			batchEnd := t
			for range par {
				c := g.call(r)
				id := nextID()
				base := func(name string) map[string]any {
					p := map[string]any{"hook_event_name": name, "tool_name": c.tool, "tool_use_id": id, "tool_input": c.input, "prompt_id": promptID, "permission_mode": "acceptEdits"}
					if agentID != "" {
						p["agent_id"], p["agent_type"] = agentID, agentType
					}
					return p
				}
				start := t.Add(time.Duration(r.IntN(40)) * time.Millisecond)
				if c.denied {
					add(start, base(event.PreToolUse), map[string]any{"action": "deny", "rule_ids": []string{"no-force-push"}, "reason": "force pushes are not allowed; open a pull request instead", "enforced": true})
					n--
					continue
				}
				add(start, base(event.PreToolUse), nil)
				stop := start.Add(c.dur)
				p := base(event.PostToolUse)
				if c.err != "" {
					p = base(event.PostToolUseFailure)
					p["error"] = c.err
					p["is_interrupt"] = false
				} else {
					p["tool_response"] = c.output
				}
				p["duration_ms"] = c.dur.Milliseconds()
				add(stop, p, nil)
				n -= 2
				if stop.After(batchEnd) {
					batchEnd = stop
				}
			}
			t = batchEnd
			end = t
		}
		return end
	}

	t := spec.Start
	mainAgent := &gen{cwd: cwd}
	add(t, map[string]any{"hook_event_name": event.SessionStart, "source": "startup", "model": "claude-opus-5"}, nil)
	turns := []string{
		"Add idempotency keys to the refund endpoint and cover them with tests",
		"Review the whole codebase for places that retry payments without a key",
		"Fix every finding and make the test suite pass",
		"Write the changelog entry and update the API docs",
	}
	spawned := 0
	var stat statusLine
	for ti, prompt := range turns {
		pid := fmt.Sprintf("prompt-%04d", ti+1)
		t = t.Add(2 * time.Second)
		add(t, map[string]any{"hook_event_name": event.UserPromptSubmit, "prompt": prompt, "prompt_id": pid, "session_title": spec.Title}, nil)
		t = calls(t, 2*mainCalls/len(turns), "", "", pid, mainAgent)
		// This turn's share of the subagents, in waves.
		share := (spec.Agents - spawned) / (len(turns) - ti)
		if ti == 1 {
			share = max(share, min(spec.Agents-spawned, spec.Wave))
		}
		for share > 0 {
			w := min(share, spec.Wave)
			waveEnd := t
			spawnAt := t
			for k := range w {
				n := spawned + k
				aid := fmt.Sprintf("a%016x", uint64(n+1)*0x9e3779b97f4a7c15>>4)
				atype := agentTypes[n%len(agentTypes)]
				tid := nextID()
				at := spawnAt.Add(time.Duration(k*120) * time.Millisecond)
				add(at, map[string]any{"hook_event_name": event.PreToolUse, "tool_name": "Agent", "tool_use_id": tid, "prompt_id": pid,
					"tool_input": map[string]any{"description": fmt.Sprintf("%s pass %d", atype, n+1), "prompt": "Look at the refund flow, part " + fmt.Sprint(n+1), "subagent_type": atype}}, nil)
				st := at.Add(80 * time.Millisecond)
				add(st, map[string]any{"hook_event_name": event.SubagentStart, "agent_id": aid, "agent_type": atype, "prompt_id": pid}, nil)
				g := &gen{cwd: cwd, bias: n}
				end := calls(st, perAgent, aid, atype, pid, g).Add(time.Duration(400+r.IntN(900)) * time.Millisecond)
				add(end, map[string]any{"hook_event_name": event.SubagentStop, "agent_id": aid, "agent_type": atype, "prompt_id": pid, "stop_hook_active": false,
					"last_assistant_message": fmt.Sprintf("Checked part %d: %d findings", n+1, r.IntN(5))}, nil)
				done := end.Add(60 * time.Millisecond)
				add(done, map[string]any{"hook_event_name": event.PostToolUse, "tool_name": "Agent", "tool_use_id": tid, "prompt_id": pid,
					"duration_ms": done.Sub(at).Milliseconds(), "tool_input": map[string]any{"subagent_type": atype},
					"tool_response": map[string]any{"status": "completed", "agentId": aid, "agentType": atype, "content": []any{map[string]any{"type": "text", "text": "done"}}}}, nil)
				if done.After(waveEnd) {
					waveEnd = done
				}
			}
			// The main agent's context grows with every wave.
			stat.tick(waveEnd, 9000*w, w, r)
			spawned += w
			share -= w
			t = waveEnd
		}
		t = calls(t, 2*mainCalls/len(turns), "", "", pid, mainAgent)
		if ti == 2 {
			t = t.Add(time.Second)
			add(t, map[string]any{"hook_event_name": event.PreCompact, "trigger": "auto", "prompt_id": pid}, nil)
			t = t.Add(4 * time.Second)
			add(t, map[string]any{"hook_event_name": event.SubagentStop, "agent_id": "acompact0000001", "agent_type": "", "prompt_id": pid, "last_assistant_message": "summary"}, nil)
			add(t.Add(50*time.Millisecond), map[string]any{"hook_event_name": event.SessionStart, "source": "compact", "prompt_id": pid}, nil)
			add(t.Add(90*time.Millisecond), map[string]any{"hook_event_name": event.PostCompact, "trigger": "auto", "compact_summary": "refund work so far", "prompt_id": pid}, nil)
			stat.compact()
		}
		t = t.Add(800 * time.Millisecond)
		add(t, map[string]any{"hook_event_name": event.Stop, "prompt_id": pid, "stop_hook_active": false, "last_assistant_message": "Done with: " + prompt}, nil)
		stat.tick(t, 4000, 1, r)
	}
	if spec.Ended {
		add(t.Add(3*time.Second), map[string]any{"hook_event_name": event.SessionEnd, "reason": "prompt_input_exit"}, nil)
	}
	// statusLine snapshots: every few seconds of the session.
	for _, s := range stat.snaps {
		p := s.payload(spec.SessionID, cwd, spec.Title)
		evs = append(evs, stamped{t: s.t, order: len(evs), payload: p, kind: event.KindStatusLine})
	}
	slices.SortStableFunc(evs, func(a, b stamped) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		return a.order - b.order
	})
	tag := spec.SessionID
	if len(tag) > 8 {
		tag = tag[:8]
	}
	out := make([]event.Envelope, len(evs))
	for i, e := range evs {
		p, _ := json.Marshal(e.payload)
		var d json.RawMessage
		if e.decision != nil {
			d, _ = json.Marshal(e.decision)
		}
		out[i] = envelope(tag, e.t, i, p, d)
		out[i].Kind = e.kind
	}
	return out
}

// gen picks tool calls.
type gen struct {
	cwd  string
	bias int
	n    int
}

type call struct {
	tool   string
	input  map[string]any
	output any
	err    string
	denied bool
	dur    time.Duration
}

var files = []string{"refund/handler.go", "refund/handler_test.go", "refund/store.go", "payments/retry.go", "payments/client.go", "api/openapi.yaml", "CHANGELOG.md", "internal/idem/key.go", "web/src/RefundForm.tsx", "docs/refunds.md"}

func (g *gen) call(r *rand.Rand) call {
	g.n++
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+r.IntN(hi-lo+1)) * time.Millisecond }
	file := g.cwd + "/" + files[(g.n*7+g.bias)%len(files)]
	switch k := r.IntN(100); {
	case k < 28:
		return call{tool: "Read", input: map[string]any{"file_path": file}, dur: ms(3, 40),
			output: map[string]any{"type": "text", "file": map[string]any{"filePath": file, "numLines": 120 + r.IntN(300)}}}
	case k < 40:
		return call{tool: "Grep", input: map[string]any{"pattern": "Retry|Idempotency", "path": g.cwd}, dur: ms(20, 260),
			output: map[string]any{"mode": "files_with_matches", "numFiles": r.IntN(9)}}
	case k < 44:
		return call{tool: "Glob", input: map[string]any{"pattern": "**/*_test.go"}, dur: ms(5, 60), output: map[string]any{"numFiles": 14}}
	case k < 56:
		c := call{tool: "Bash", input: map[string]any{"command": "go test ./refund/... ./payments/...", "description": "Run the tests"}, dur: ms(1800, 16000),
			output: map[string]any{"stdout": "ok  \texample.com/payments-api/refund\t1.2s", "stderr": "", "interrupted": false}}
		if r.IntN(4) == 0 {
			c.output, c.err = nil, "Exit code 1\n--- FAIL: TestRefundIdempotent (0.01s)\n    handler_test.go:88: second refund went through"
		}
		return c
	case k < 62:
		c := call{tool: "Bash", input: map[string]any{"command": "go build ./... && go vet ./...", "description": "Build"}, dur: ms(900, 6000),
			output: map[string]any{"stdout": "", "stderr": ""}}
		if r.IntN(6) == 0 {
			c.output, c.err = nil, "Exit code 1\nrefund/handler.go:41:2: undefined: idem.Key"
		}
		return c
	case k < 67:
		return call{tool: "Bash", input: map[string]any{"command": "git status --short && git diff --stat", "description": "Status"}, dur: ms(30, 300),
			output: map[string]any{"stdout": " M refund/handler.go\n M refund/store.go"}}
	case k < 68:
		return call{tool: "Bash", input: map[string]any{"command": "git push --force origin HEAD:main"}, denied: true}
	case k < 80:
		return call{tool: "Edit", input: map[string]any{"file_path": file, "old_string": "retry(req)", "new_string": "retry(req, idem.Key(req))"}, dur: ms(5, 35),
			output: map[string]any{"filePath": file, "structuredPatch": []any{}}}
	case k < 84:
		return call{tool: "Write", input: map[string]any{"file_path": file, "content": "// generated\n"}, dur: ms(4, 25), output: map[string]any{"type": "create"}}
	case k < 89:
		c := call{tool: "WebFetch", input: map[string]any{"url": "https://docs.stripe.example/api/idempotent_requests", "prompt": "How do keys expire?"}, dur: ms(400, 3500),
			output: map[string]any{"code": 200, "result": "Keys expire after 24 hours."}}
		if r.IntN(8) == 0 {
			c.output, c.err = nil, "Request failed with status code 503"
		}
		return c
	case k < 95:
		return call{tool: "mcp__github__get_issue", input: map[string]any{"owner": "acme", "repo": "payments-api", "issue_number": 412 + r.IntN(20)}, dur: ms(150, 1200),
			output: []any{map[string]any{"type": "text", "text": "Refunds are retried twice on timeout"}}}
	default:
		return call{tool: "TodoWrite", input: map[string]any{"todos": []any{map[string]any{"content": "add idempotency key", "status": "in_progress", "activeForm": "Adding keys"}}}, dur: ms(2, 10),
			output: map[string]any{"oldTodos": []any{}, "newTodos": []any{}}}
	}
}

// statusLine accumulates the main agent's statusLine snapshots.
type statusLine struct {
	tokens int
	cost   float64
	start  time.Time
	snaps  []snap
}

type snap struct {
	t      time.Time
	tokens int
	cost   float64
	durMS  int64
}

func (s *statusLine) tick(t time.Time, tokens, steps int, r *rand.Rand) {
	if s.start.IsZero() {
		s.start = t.Add(-time.Minute)
	}
	for i := range steps * 3 {
		s.tokens = min(s.tokens+tokens/(steps*3)+r.IntN(2000), 195000)
		s.cost += float64(tokens)/float64(steps*3)*0.000015 + 0.002
		st := t.Add(time.Duration(i-steps*3) * 700 * time.Millisecond)
		s.snaps = append(s.snaps, snap{t: st, tokens: s.tokens, cost: s.cost, durMS: st.Sub(s.start).Milliseconds()})
	}
}

func (s *statusLine) compact() { s.tokens = 18000 }

func (s snap) payload(sessionID, cwd, title string) map[string]any {
	return map[string]any{
		"session_id":      sessionID,
		"session_name":    title,
		"transcript_path": "/home/dev/.claude/projects/x/" + sessionID + ".jsonl",
		"cwd":             cwd,
		"model":           map[string]any{"id": "claude-opus-5", "display_name": "Opus 5"},
		"workspace":       map[string]any{"current_dir": cwd, "project_dir": cwd, "added_dirs": []any{}},
		"version":         "2.1.197",
		"cost":            map[string]any{"total_cost_usd": float64(int(s.cost*10000)) / 10000, "total_duration_ms": s.durMS, "total_api_duration_ms": s.durMS / 3, "total_lines_added": s.tokens / 900, "total_lines_removed": s.tokens / 2400},
		"context_window": map[string]any{
			"total_input_tokens": s.tokens, "total_output_tokens": s.tokens / 12, "context_window_size": 200000,
			"used_percentage": float64(s.tokens) / 2000, "remaining_percentage": 100 - float64(s.tokens)/2000,
		},
	}
}

// projects are the project names Sessions spreads sessions over.
var projects = []string{"payments-api", "web-console", "infra-terraform", "mobile-app", "data-pipeline", "auth-service", "docs-site", "search-indexer", "billing-worker", "cli-tools", "ml-features", "design-system"}

var titles = []string{"Fix flaky refund test", "Add pagination to invoices", "Upgrade Go toolchain", "Migrate to structured logging", "Investigate p95 latency regression",
	"Write onboarding docs", "Refactor auth middleware", "Add dark mode", "Remove dead feature flags", "Speed up CI cache", "Audit dependencies", "Port cron jobs to queues"}

// Sessions returns n small sessions spread over a week before end, each
// with a start, a prompt, a few tool calls (some failing or denied), a stop
// and usually an end; some are resumes or forks of an earlier session, and
// some are still running. Sessions are returned oldest first.
func Sessions(n int, end time.Time, seed uint64) []event.Envelope {
	r := rand.New(rand.NewPCG(seed, 0x5e55))
	var out []event.Envelope
	span := 7 * 24 * time.Hour
	var prev []string
	for i := range n {
		id := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", r.Uint32(), r.IntN(1<<16), r.IntN(1<<12), r.IntN(1<<12), r.Uint64()&(1<<48-1))
		t := end.Add(-span + time.Duration(int64(span)/int64(max(n, 1))*int64(i)))
		proj := projects[r.IntN(len(projects))]
		cwd := "/home/dev/src/" + proj
		source := "startup"
		if len(prev) > 0 && r.IntN(6) == 0 {
			source = "resume"
			if r.IntN(3) == 0 {
				source = "fork"
			}
		}
		title := titles[r.IntN(len(titles))]
		common := func(name string) map[string]any {
			return map[string]any{"session_id": id, "cwd": cwd, "hook_event_name": name, "transcript_path": "/home/dev/.claude/projects/-home-dev-src-" + proj + "/" + id + ".jsonl"}
		}
		k := 0
		emit := func(p map[string]any, d map[string]any) {
			b, _ := json.Marshal(p)
			var db json.RawMessage
			if d != nil {
				db, _ = json.Marshal(d)
			}
			out = append(out, envelope(id[:8], t, k, b, db))
			k++
			t = t.Add(time.Duration(200+r.IntN(4000)) * time.Millisecond)
		}
		ss := common(event.SessionStart)
		ss["source"] = source
		emit(ss, nil)
		up := common(event.UserPromptSubmit)
		up["prompt"], up["session_title"], up["prompt_id"] = strings.ToLower(title[:1])+title[1:], title, "p1"
		emit(up, nil)
		for c := range 1 + r.IntN(5) {
			tid := fmt.Sprintf("toolu_%s_%d", id[:8], c)
			tool := []string{"Read", "Bash", "Edit", "Grep"}[r.IntN(4)]
			pre := common(event.PreToolUse)
			pre["tool_name"], pre["tool_use_id"], pre["tool_input"] = tool, tid, map[string]any{"file_path": cwd + "/main.go"}
			if r.IntN(25) == 0 {
				emit(pre, map[string]any{"action": "deny", "rule_ids": []string{"protect-main"}, "reason": "not on main", "enforced": true})
				continue
			}
			emit(pre, nil)
			post := common(event.PostToolUse)
			if r.IntN(8) == 0 {
				post = common(event.PostToolUseFailure)
				post["error"] = "Exit code 1"
			}
			post["tool_name"], post["tool_use_id"], post["tool_input"] = tool, tid, map[string]any{"file_path": cwd + "/main.go"}
			emit(post, nil)
		}
		if i < n-3 || r.IntN(2) == 0 {
			emit(common(event.Stop), nil)
			se := common(event.SessionEnd)
			se["reason"] = "prompt_input_exit"
			emit(se, nil)
		}
		prev = append(prev, id)
	}
	slices.SortStableFunc(out, func(a, b event.Envelope) int { return a.ReceivedAt.Compare(b.ReceivedAt) })
	return out
}
