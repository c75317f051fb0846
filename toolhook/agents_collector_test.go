package toolhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// modelView is what the collector at url shows of a session: the session,
// its agents (by id) and calls (by tool_use_id), the API's shapes of the
// model's own types, and the status of the subagent's own view (its
// virtual session).
type modelView struct {
	session  map[string]any
	agents   map[string]attribution.Agent
	calls    map[string]attribution.ToolCall
	subagent string
}

func readModel(t *testing.T, url, sid, subagent string) modelView {
	t.Helper()
	m := modelView{agents: map[string]attribution.Agent{}, calls: map[string]attribution.ToolCall{}}
	get := func(path string, v any) {
		t.Helper()
		if code := testbin.GetJSON(t, url+"/v1/sessions/"+path, v); code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
	}
	get(sid, &m.session)
	var agents struct{ Agents []attribution.Agent }
	get(sid+"/agents", &agents)
	for _, a := range agents.Agents {
		m.agents[a.AgentID] = a
	}
	var calls struct {
		ToolCalls []attribution.ToolCall `json:"tool_calls"`
	}
	get(sid+"/tool-calls", &calls)
	for _, c := range calls.ToolCalls {
		m.calls[c.ToolUseID] = c
	}
	var sub struct{ Status string }
	get(attribution.VirtualPrefix+sid+"--"+subagent, &sub)
	m.subagent = sub.Status
	return m
}

// TestCollectorSeesSubagentsAsClaudeCodes runs a session in Go whose
// delegating call's tool spawns a sub-agent that makes calls, ends it, and
// reads it from a real collector (in process, SQLite) beside a Claude Code
// session of the same shape, from captured payloads: a main call, an Agent
// call, SubagentStart, the subagent's calls, SubagentStop, the Agent
// call's end, SessionEnd. The SDK's sub-agent shows as Claude Code's does:
// started when SpawnAgent started it, stopped when its spawning call
// ended, under that call at depth 1, its own view ended; the sessions'
// counts are the same.
func TestCollectorSeesSubagentsAsClaudeCodes(t *testing.T) {
	url, _ := realCollector(t, collector.DefaultMaxBodyBytes, nil, nil)
	// Each session's subagent has its own id, though its view
	// (sub--<session_id>--<agent_id>) names its session too.
	const worker, sdkWorker, workerType = "worker-cc", "worker-sdk", "Explore"

	// Claude Code's session, through the envelopes its hook sends: the
	// subagent's name the spawning call, read from the sidecar file.
	ccID := event.NewID(time.Now())
	kind := func(name, tool string, sub bool) func(p map[string]any) bool {
		return func(p map[string]any) bool {
			_, isSub := p["agent_id"]
			return p["hook_event_name"] == name && (tool == "" || p["tool_name"] == tool) && isSub == sub
		}
	}
	agentPost := capture(t, func(p map[string]any) bool {
		r, _ := p["tool_response"].(map[string]any)
		return p["hook_event_name"] == "PostToolUse" && p["tool_name"] == "Agent" && r != nil && r["status"] == "completed"
	})
	agentPre := capture(t, func(p map[string]any) bool {
		return p["hook_event_name"] == "PreToolUse" && p["tool_use_id"] == agentPost["tool_use_id"]
	})
	readPre, readPost := capture(t, kind("PreToolUse", "Read", true)), capture(t, kind("PostToolUse", "Read", true))
	start, stop := capture(t, kind("SubagentStart", "", true)), capture(t, kind("SubagentStop", "", true))
	end := capture(t, kind("SessionEnd", "", false))
	const task = "toolu_cc_task"
	t0 := time.Now().Add(-time.Minute).UTC().Truncate(time.Millisecond)
	var envs [][]byte
	send := func(captured map[string]any, agent, id string) time.Time {
		p := map[string]any{}
		for k, v := range captured {
			p[k] = v
		}
		p["session_id"] = ccID
		delete(p, "background_tasks")
		delete(p, "session_crons")
		delete(p, "agent_id")
		delete(p, "agent_type")
		if id != "" {
			p["tool_use_id"] = id
		}
		at := t0.Add(time.Duration(len(envs)) * 10 * time.Millisecond)
		e := event.Envelope{ID: event.NewID(at), Runtime: event.RuntimeClaudeCode, Kind: event.KindHook, ReceivedAt: at}
		if agent != "" {
			p["agent_id"], p["agent_type"] = agent, workerType
			e.Subagent = &event.SubagentMeta{AgentType: workerType, ToolUseID: task, SpawnDepth: 1}
		}
		if r, ok := p["tool_response"].(map[string]any); ok && p["tool_name"] == "Agent" {
			r = map[string]any{"status": r["status"], "agentId": worker, "content": r["content"]}
			p["tool_response"] = r
		}
		e.Payload, _ = json.Marshal(p)
		envs = append(envs, e.AppendJSON(nil))
		return at
	}
	send(readPre, "", "toolu_cc_r1")
	send(readPost, "", "toolu_cc_r1")
	send(agentPre, "", task)
	ccStart := send(start, worker, "")
	send(readPre, worker, "toolu_cc_r2")
	send(readPost, worker, "toolu_cc_r2")
	send(readPre, worker, "toolu_cc_r3")
	send(readPost, worker, "toolu_cc_r3")
	ccStop := send(stop, worker, "")
	send(agentPost, "", task)
	send(end, "", "")
	if err := postEnvelopes(url, envs); err != nil {
		t.Fatal(err)
	}

	// The agent in Go: the same shape.
	fw, err := NewForwarder(ForwardOptions{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	sdkID := event.NewID(time.Now())
	var x *Executor
	var spawnedFrom, spawnedTo time.Time
	read := func(context.Context, map[string]any) (any, error) { return "notes", nil }
	x = &Executor{SessionID: sdkID, Recorder: fw, Tools: map[string]Tool{
		"Read": read,
		"Agent": func(ctx context.Context, in map[string]any) (any, error) {
			time.Sleep(5 * time.Millisecond)
			spawnedFrom = time.Now()
			sub := SpawnAgent(ctx, sdkWorker, workerType)
			spawnedTo = time.Now()
			time.Sleep(5 * time.Millisecond)
			for _, f := range []string{"/p/a.txt", "/p/b.txt"} {
				if _, err := x.Call(sub, "Read", map[string]any{"file_path": f}); err != nil {
					return nil, err
				}
			}
			time.Sleep(5 * time.Millisecond)
			return "done", nil
		},
	}}
	ctx := context.Background()
	if _, err := x.Call(ctx, "Read", map[string]any{"file_path": "/p/notes.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := x.CallID(ctx, "Agent", "toolu_sdk_task", agentPre["tool_input"].(map[string]any)); err != nil {
		t.Fatal(err)
	}
	x.EndSession(ctx, "")
	if err := fw.Close(); err != nil || fw.Dropped() != 0 {
		t.Fatalf("close: %v, %d dropped", err, fw.Dropped())
	}

	cc, sdk := readModel(t, url, ccID, worker), readModel(t, url, sdkID, sdkWorker)
	ccAgent, sdkAgent := cc.agents[worker], sdk.agents[sdkWorker]

	// Claude Code's subagent: its SubagentStart and SubagentStop.
	if ccAgent.StoppedAt == nil || !ccAgent.StartedAt.Equal(ccStart) || !ccAgent.StoppedAt.Equal(ccStop) ||
		ccAgent.SpawnToolUseID != task || cc.subagent != "ended" {
		t.Fatalf("Claude Code's subagent: %+v, its view %s", ccAgent, cc.subagent)
	}

	// The SDK's: started by SpawnAgent, stopped as its spawning call ended.
	taskCall := sdk.calls["toolu_sdk_task"]
	if sdkAgent.StartedAt.Before(spawnedFrom) || sdkAgent.StartedAt.After(spawnedTo) {
		t.Errorf("the sub-agent started at %v, SpawnAgent ran from %v to %v", sdkAgent.StartedAt, spawnedFrom, spawnedTo)
	}
	if sdkAgent.StoppedAt == nil || taskCall.EndedAt == nil || !sdkAgent.StoppedAt.Equal(*taskCall.EndedAt) {
		t.Errorf("the sub-agent stopped at %v, its spawning call ended at %v", sdkAgent.StoppedAt, taskCall.EndedAt)
	}
	for id, c := range sdk.calls {
		if c.AgentID == sdkWorker && (c.StartedAt.Before(sdkAgent.StartedAt) || c.EndedAt == nil ||
			sdkAgent.StoppedAt != nil && c.EndedAt.After(*sdkAgent.StoppedAt) || c.ParentToolUseID != "toolu_sdk_task" || c.Depth != 1) {
			t.Errorf("the sub-agent's call %s: %+v, outside the agent's run %v to %v", id, c, sdkAgent.StartedAt, sdkAgent.StoppedAt)
		}
	}

	// Alike but for their ids and times, and what only Claude Code has: the
	// subagent's transcript and last message.
	sdkAgent.AgentID, sdkAgent.VirtualSessionID = worker, ccAgent.VirtualSessionID
	ccAgent.StartedAt, sdkAgent.StartedAt = time.Time{}, time.Time{}
	ccAgent.StoppedAt, sdkAgent.StoppedAt = nil, nil
	ccAgent.LastEventAt, sdkAgent.LastEventAt = time.Time{}, time.Time{}
	ccAgent.TranscriptPath, ccAgent.LastMessage = "", ""
	if sdkAgent.SpawnToolUseID == "toolu_sdk_task" {
		sdkAgent.SpawnToolUseID = task
	}
	if j, k := asJSON(sdkAgent), asJSON(ccAgent); j != k || sdk.subagent != cc.subagent {
		t.Errorf("the sub-agent\n%s (its view %s)\nClaude Code's\n%s (its view %s)", j, sdk.subagent, k, cc.subagent)
	}
	if j, k := asJSON(sdk.session["counts"]), asJSON(cc.session["counts"]); j != k {
		t.Errorf("the session's counts\n%s\nClaude Code's\n%s", j, k)
	}
	for _, k := range []string{"status", "shape"} {
		if j, l := asJSON(sdk.session[k]), asJSON(cc.session[k]); j != l {
			t.Errorf("the session's %s: %s, Claude Code's %s", k, j, l)
		}
	}
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// postEnvelopes posts envelopes to the collector at url, as the hook does.
func postEnvelopes(url string, envs [][]byte) error {
	resp, err := http.Post(url+"/v1/events", "application/json", bytes.NewReader(hook.BatchBody(envs)))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /v1/events: %s", resp.Status)
	}
	return nil
}
