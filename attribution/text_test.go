package attribution

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTitle(t *testing.T) {
	f := func(prompt, want string) {
		t.Helper()
		if got := title(prompt); got != want {
			t.Fatalf("title(%q) = %q, want %q", prompt, got, want)
		}
	}
	f("tidy the project", "tidy the project")
	f("  fix\n\tthe   build \n", "fix the build")
	f("", "")
	words := strings.Repeat("word ", 40)
	f(words, strings.TrimSpace(strings.Repeat("word ", 20))+"…")
	long := strings.Repeat("x", 150)
	f(long, strings.Repeat("x", 100)+"…")
	f(strings.Repeat("é", 120), strings.Repeat("é", 100)+"…")
}

func TestSpawnedAgentID(t *testing.T) {
	f := func(resp, want string) {
		t.Helper()
		if got := spawnedAgentID(json.RawMessage(resp)); got != want {
			t.Fatalf("spawnedAgentID(%s) = %q, want %q", resp, got, want)
		}
	}
	f(`{"status":"completed","agentId":"a0b378cebfb773646","content":[]}`, "a0b378cebfb773646")
	f(`{"isAsync":true,"status":"async_launched","agentId":"a7f7074a6963e4174"}`, "a7f7074a6963e4174")
	f(`"{\"agent_id\":\"01a1fec1-e859-7292-8494-bb0d2081b260\",\"nickname\":\"Godel\"}"`, "01a1fec1-e859-7292-8494-bb0d2081b260")
	f(`{"hookwatch_capture":"preview","bytes":90000,"head":"{\"status\":\"completed\",\"agentId\":\"a1\",\"content\":[{\"te"}`, "a1")
	f(`{"hookwatch_capture":"preview","head":"{\"prompt\":\"mention agentId here\"","tail":"\"agentId\": \"a2\"}"}`, "a2")
	// The head may end inside the id: a prefix would name another agent.
	f(`{"hookwatch_capture":"preview","bytes":721,"head":"{\"status\":\"completed\",\"agentId\":\"a43b7af8","tail":"0}}"}`, "")
	// A preview that kept agentId as a member is read first.
	f(`{"hookwatch_capture":"preview","bytes":9000,"agentId":"a5","head":"{\"status\":\"completed\",\"prompt\":\"long"}`, "a5")
	// A Codex response is JSON text: its preview head is that text encoded.
	f(`{"hookwatch_capture":"preview","bytes":80,"head":"\"{\\\"agent_id\\\":\\\"01a1fec1-e859\\\",\\\"nick"}`, "01a1fec1-e859")
	f(`"Async agent launched successfully.\nagentId: a3 (use it to check progress)"`, "a3")
	f(`{"status":"completed","content":[{"type":"text","text":"agentId: not-this"}]}`, "") // only the key, not the text
	f(`{"agentId":42}`, "")
	f(`"no id here"`, "")
	f(`[1,2]`, "")
	f(``, "")
	f(`{`, "")
}

func TestToolUseError(t *testing.T) {
	f := func(resp, want string, ok bool) {
		t.Helper()
		got, isErr := toolUseError(json.RawMessage(resp))
		if got != want || isErr != ok {
			t.Fatalf("toolUseError(%s) = %q, %v", resp, got, isErr)
		}
	}
	f(`"<tool_use_error>Error: No such tool available: Glob</tool_use_error>"`, "Error: No such tool available: Glob", true)
	f(`[{"type":"text","text":"<tool_use_error>bad input</tool_use_error>"}]`, "bad input", true)
	// hookwatch's privacy preview of the text, whole or cut (even inside
	// an escape).
	f(`{"hookwatch_capture":"preview","bytes":71,"head":"\"<tool_use_error>Error: No such tool available: Glob</tool_use_error>\""}`,
		"Error: No such tool available: Glob", true)
	f(`{"hookwatch_capture":"preview","bytes":9000,"head":"\"<tool_use_error>Error: \\\"Glob\\\" is not","tail":"x\""}`,
		`Error: "Glob" is not`, true)
	f(`{"hookwatch_capture":"preview","bytes":9000,"head":"\"<tool_use_error>Error: \\u00e","tail":"x\""}`, "Error:", true)
	f(`{"hookwatch_capture":"preview","bytes":9000,"head":"\"<tool_use_error>Error: \\","tail":"x\""}`, "Error:", true)
	f(`{"hookwatch_capture":"preview","bytes":20,"head":"\"1\\tpackage main\""}`, "", false)
	f(`{"hookwatch_capture":"none","bytes":71}`, "", false)
	f(`{"hookwatch_capture":"preview","bytes":20,"head":"{\"<tool_use_error>\":1}"}`, "", false)
	f(`"1\tpackage main"`, "", false)
	f(`{"stdout":""}`, "", false)
	f(`[]`, "", false)
	f(``, "", false)
}
