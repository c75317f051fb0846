package fakeopenai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// answer posts a Responses request and returns the items of its
// response.completed event, and the event types in order.
func answer(t *testing.T, url string, body map[string]any) (items []map[string]any, types []string) {
	t.Helper()
	b, _ := json.Marshal(body)
	res, err := http.Post(url+"/responses", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(res.Body)
	var kind string
	for sc.Scan() {
		line := sc.Text()
		if k, ok := strings.CutPrefix(line, "event: "); ok {
			kind = k
			types = append(types, k)
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type     string `json:"type"`
			Response struct {
				Output []map[string]any `json:"output"`
			} `json:"response"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil || ev.Type != kind {
			t.Fatalf("event %s data %s", kind, data)
		}
		if kind == "response.completed" {
			items = ev.Response.Output
		}
	}
	return items, types
}

func user(text string) map[string]any {
	return map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text}}}
}

var tools = []any{
	map[string]any{"type": "function", "name": "exec_command"},
	map[string]any{"type": "custom", "name": "apply_patch"},
	map[string]any{"type": "namespace", "name": "multi_agent_v1", "tools": []any{map[string]any{"name": "spawn_agent"}, map[string]any{"name": "wait_agent"}}},
}

func TestScript(t *testing.T) {
	s := New(Script{
		"Create":                     {{Text("ok"), Exec("ls")}, {Patch("*** Begin Patch\n*** End Patch\n")}},
		"Create the longer key wins": {{Text("longer")}},
		"Delegate":                   {{Call("spawn_agent", map[string]any{"message": "x"})}, {Call("wait_agent", map[string]any{"targets": []any{Agent}})}},
	})
	url := s.Start(t)
	env := map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "<environment_context>Create</environment_context>"}}}

	items, types := answer(t, url, map[string]any{"model": "m", "tools": tools, "input": []any{env, user("Create it")}})
	if len(items) != 2 || items[0]["type"] != "message" || items[1]["name"] != "exec_command" || items[1]["arguments"] != `{"cmd":"ls"}` {
		t.Fatalf("first turn %v", items)
	}
	if types[0] != "response.created" || types[len(types)-1] != "response.completed" {
		t.Fatalf("events %v", types)
	}
	// The second answer follows the first run of model items.
	items, _ = answer(t, url, map[string]any{"model": "m", "tools": tools, "input": []any{env, user("Create it"), items[0], items[1],
		map[string]any{"type": "function_call_output", "call_id": items[1]["call_id"], "output": "x"}}})
	if len(items) != 1 || items[0]["type"] != "custom_tool_call" || items[0]["name"] != "apply_patch" {
		t.Fatalf("second turn %v", items)
	}
	if items, _ = answer(t, url, map[string]any{"model": "m", "tools": tools, "input": []any{user("Create the longer key wins")}}); items[0]["content"].([]any)[0].(map[string]any)["text"] != "longer" {
		t.Fatalf("longest key %v", items)
	}
	// The latest spawned agent's id, namespaced tools, compaction, no tools.
	spawned := map[string]any{"type": "function_call_output", "call_id": "c1", "output": `{"agent_id":"01a1fec1-e859-7292-8494-bb0d2081b260","nickname":"G"}`}
	items, _ = answer(t, url, map[string]any{"model": "m", "tools": tools, "input": []any{user("Delegate"), map[string]any{"type": "function_call", "call_id": "c1", "name": "spawn_agent"}, spawned}})
	if len(items) != 1 || items[0]["namespace"] != "multi_agent_v1" || items[0]["arguments"] != `{"targets":["01a1fec1-e859-7292-8494-bb0d2081b260"]}` {
		t.Fatalf("wait_agent %v", items)
	}
	if items, _ = answer(t, url, map[string]any{"model": "m", "input": []any{user("CONTEXT CHECKPOINT COMPACTION")}}); items[0]["content"].([]any)[0].(map[string]any)["text"] != CompactionSummary {
		t.Fatalf("compaction %v", items)
	}
	if items, _ = answer(t, url, map[string]any{"model": "m", "tools": tools, "input": []any{user("unscripted")}}); items[0]["content"].([]any)[0].(map[string]any)["text"] != DoneText {
		t.Fatalf("unscripted %v", items)
	}
	if n := len(s.Requests()); n != 6 {
		t.Fatalf("%d requests recorded", n)
	}
	// A scripted failure.
	s.SetScript(Script{"fail": {{{HTTPError: 500}}}})
	res, err := http.Post(url+"/responses", "application/json", strings.NewReader(`{"tools":[{"type":"function","name":"x"}],"input":[{"type":"message","role":"user","content":"fail"}]}`))
	if err != nil || res.StatusCode != 500 {
		t.Fatalf("failure: %v %v", res, err)
	}
	res.Body.Close()
}
