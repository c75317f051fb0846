package fakeclaude

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// answer is a decoded response of the fake.
type answer struct {
	events  []string // SSE event names in order
	content []Content
	stop    string
}

// post sends body to path of the server at url and decodes the answer,
// streamed or not.
func post(t *testing.T, url, path string, body any) answer {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case []byte:
		raw = b
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(body); err != nil {
			t.Fatalf("cannot marshal the request: %s", err)
		}
	}
	resp, err := http.Post(url+path, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("cannot post: %s", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m struct {
			Content    []Content `json:"content"`
			StopReason string    `json:"stop_reason"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatalf("cannot decode the message: %s", err)
		}
		return answer{content: m.Content, stop: m.StopReason}
	}
	return decodeStream(t, resp.Body)
}

// decodeStream rebuilds the message from an SSE stream the way a client
// does, checking that every data line is JSON of the announced type.
func decodeStream(t *testing.T, r io.Reader) answer {
	t.Helper()
	var a answer
	var name string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
			a.events = append(a.events, name)
		case strings.HasPrefix(line, "data: "):
			var d struct {
				Type         string  `json:"type"`
				Index        int     `json:"index"`
				ContentBlock Content `json:"content_block"`
				Delta        struct {
					Type        string `json:"type"`
					Text        string `json:"text"`
					PartialJSON string `json:"partial_json"`
					StopReason  string `json:"stop_reason"`
				} `json:"delta"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("bad data line %q: %s", line, err)
			}
			if d.Type != name {
				t.Fatalf("data type %q under event %q", d.Type, name)
			}
			switch name {
			case "content_block_start":
				if d.Index != len(a.content) {
					t.Fatalf("block index %d, want %d", d.Index, len(a.content))
				}
				a.content = append(a.content, d.ContentBlock)
			case "content_block_delta":
				c := &a.content[d.Index]
				switch d.Delta.Type {
				case "text_delta":
					c.Text += d.Delta.Text
				case "input_json_delta":
					c.Input = json.RawMessage(d.Delta.PartialJSON)
				}
			case "message_delta":
				a.stop = d.Delta.StopReason
			}
		}
	}
	return a
}

// conversation builds a Messages API request body.
func conversation(tools []string, msgs ...map[string]any) map[string]any {
	ts := make([]map[string]any, 0, len(tools))
	for _, n := range tools {
		ts = append(ts, map[string]any{"name": n, "input_schema": map[string]any{"type": "object"}})
	}
	return map[string]any{"model": "claude-test", "stream": true, "tools": ts, "messages": msgs,
		"system": []map[string]any{{"type": "text", "text": "You are a test."}}}
}

func user(content any) map[string]any { return map[string]any{"role": "user", "content": content} }
func assistant(content any) map[string]any {
	return map[string]any{"role": "assistant", "content": content}
}
func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
func toolResult(id, s string) map[string]any {
	return map[string]any{"type": "tool_result", "tool_use_id": id, "content": s}
}

var tools = []string{"Agent", "Bash", "Read"}

func TestScriptedConversation(t *testing.T) {
	srv := New(Script{
		"tidy the project": {
			Reply(Text("looking"), ToolUse("Bash", map[string]any{"command": "ls"}), ToolUse("Agent", map[string]any{"prompt": "explore it"})),
			Reply(Text("tidied")),
		},
	})
	url := srv.Start(t)

	first := []any{text("<system-reminder>context</system-reminder>"), text("please tidy the project now")}
	a := post(t, url, "/v1/messages?beta=true", conversation(tools, user(first)))
	wantEvents := "message_start content_block_start content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(a.events, " "); got != wantEvents {
		t.Fatalf("events\n got %s\nwant %s", got, wantEvents)
	}
	if a.stop != "tool_use" {
		t.Fatalf("stop_reason %q, want tool_use", a.stop)
	}
	if a.content[0].Type != "text" || a.content[0].Text != "looking" {
		t.Fatalf("block 0: %+v", a.content[0])
	}
	for i, name := range []string{"Bash", "Agent"} {
		c := a.content[i+1]
		if c.Type != "tool_use" || c.Name != name || !strings.HasPrefix(c.ID, "toolu_") {
			t.Fatalf("block %d: %+v", i+1, c)
		}
	}
	if a.content[1].ID == a.content[2].ID {
		t.Fatalf("duplicate tool_use id %s", a.content[1].ID)
	}
	if got := string(a.content[1].Input); got != `{"command":"ls"}` {
		t.Fatalf("Bash input %s", got)
	}

	bashID := a.content[1].ID

	// The answer comes back as one assistant message; turn 1 plays next.
	prev := assistant([]any{
		text("looking"),
		map[string]any{"type": "tool_use", "id": a.content[1].ID, "name": "Bash", "input": map[string]any{"command": "ls"}},
		map[string]any{"type": "tool_use", "id": a.content[2].ID, "name": "Agent", "input": map[string]any{"prompt": "explore it"}},
	})
	results := user([]any{toolResult(a.content[1].ID, "main.go"), toolResult(a.content[2].ID, "explored")})
	a = post(t, url, "/v1/messages", conversation(tools, user(first), prev, results))
	if a.stop != "end_turn" || len(a.content) != 1 || a.content[0].Text != "tidied" {
		t.Fatalf("turn 1: %+v", a)
	}

	// Beyond the script the conversation ends.
	a = post(t, url, "/v1/messages", conversation(tools, user(first), prev, results, assistant("tidied"), user("more?")))
	if a.stop != "end_turn" || a.content[0].Text != DoneText {
		t.Fatalf("turn 2: %+v", a)
	}

	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests recorded, want 3", len(reqs))
	}
	for i, r := range reqs {
		if r.Seq != i || r.Turn != i || r.Kind != KindTurn || r.Conversation != "tidy the project" {
			t.Fatalf("request %d: seq %d turn %d kind %s conversation %q", i, r.Seq, r.Turn, r.Kind, r.Conversation)
		}
	}
	if got := reqs[0].Reply[1].ID; got != bashID {
		t.Fatalf("recorded id %s, want %s", got, bashID)
	}
	res := reqs[1].ToolResults()
	if len(res) != 2 || res[1].ResultText() != "explored" {
		t.Fatalf("tool results of request 1: %+v", res)
	}
	if r, ok := reqs[2].ToolResult(reqs[0].Reply[1].ID); !ok || r.ResultText() != "main.go" {
		t.Fatalf("ToolResult: %+v %v", r, ok)
	}
	if !strings.Contains(reqs[1].AllText(), "explored") || !strings.Contains(reqs[1].AllText(), `"command":"ls"`) {
		t.Fatalf("AllText misses content: %q", reqs[1].AllText())
	}
	if got := reqs[0].System; got != "You are a test." {
		t.Fatalf("system %q", got)
	}
	if !reqs[0].Offers("Bash") || reqs[0].Offers("Glob") {
		t.Fatalf("tools %v", reqs[0].Tools)
	}
}

func TestConversationChoice(t *testing.T) {
	srv := New(Script{
		"":               {Reply(Text("default"))},
		"main task":      {Reply(Text("main"))},
		"main task: sub": {Reply(Text("sub"))},
		"other":          {Reply(Text("other"))},
	})
	url := srv.Start(t)
	f := func(first any, want string) {
		t.Helper()
		a := post(t, url, "/v1/messages", conversation(tools, user(first)))
		if len(a.content) != 1 || a.content[0].Text != want {
			t.Fatalf("first user message %v: answered %+v, want %q", first, a.content, want)
		}
	}
	f("do the main task", "main")
	f("main task: sub-agent work", "sub") // longest key wins
	f([]any{text("main"), text(" task")}, "default")
	f([]any{text("x"), text("other")}, "other") // text blocks are joined
	f("nothing known", "default")
}

func TestUnscripted(t *testing.T) {
	srv := New(Script{"known": {Reply(Text("k"))}})
	url := srv.Start(t)
	a := post(t, url, "/v1/messages", conversation(tools, user("something else")))
	if a.stop != "end_turn" || a.content[0].Text != UnscriptedText {
		t.Fatalf("answer %+v", a)
	}
	if k := srv.Requests()[0].Kind; k != KindUnscripted {
		t.Fatalf("kind %s", k)
	}
}

func TestTurnFunc(t *testing.T) {
	srv := New(Script{"react": {
		Reply(ToolUse("Bash", map[string]any{"command": "false"})),
		func(r *Request) []Block {
			res := r.ToolResults()
			if len(res) == 1 && res[0].IsError {
				return []Block{Text("saw error: " + res[0].ResultText())}
			}
			return []Block{Text("saw success")}
		},
		func(r *Request) []Block { return nil },
		func(r *Request) []Block { panic("boom") },
	}})
	url := srv.Start(t)
	f := func(result map[string]any, want string) {
		t.Helper()
		a := post(t, url, "/v1/messages", conversation(tools, user("react"), assistant([]any{
			map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{}},
		}), user([]any{result})))
		if a.content[0].Text != want {
			t.Fatalf("answered %q, want %q", a.content[0].Text, want)
		}
	}
	f(map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": []any{text("Exit code 1")}, "is_error": true}, "saw error: Exit code 1")
	f(toolResult("toolu_1", "fine"), "saw success")

	// A turn with no blocks says DoneText; a panicking turn says why.
	msgs := []map[string]any{user("react"), assistant("a"), user("b"), assistant("c"), user("d")}
	if a := post(t, url, "/v1/messages", conversation(tools, msgs...)); a.content[0].Text != DoneText {
		t.Fatalf("empty turn answered %+v", a)
	}
	msgs = append(msgs, assistant("e"), user("f"))
	if a := post(t, url, "/v1/messages", conversation(tools, msgs...)); !strings.Contains(a.content[0].Text, "panicked: boom") {
		t.Fatalf("panicking turn answered %+v", a)
	}
}

// TestAPIError checks that a turn answering an API error fails the request
// as the Messages API does, streamed or not, and that the conversation goes
// on with the next turn once the client asks again.
func TestAPIError(t *testing.T) {
	srv := New(Script{"fail": {
		Reply(Text("dropped"), APIError(http.StatusBadRequest, "invalid_request_error", "prompt is too long"), ToolUse("Bash", nil)),
		Reply(APIError(http.StatusTooManyRequests, "", "slow down")),
	}})
	url := srv.Start(t)
	f := func(stream bool, msgs []map[string]any, status int, errType, message string) {
		t.Helper()
		body := conversation(tools, msgs...)
		body["stream"] = stream
		raw, _ := json.Marshal(body)
		resp, err := http.Post(url+"/v1/messages", "application/json", bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("cannot post: %s", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != status {
			t.Fatalf("status %d, want %d", resp.StatusCode, status)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("Content-Type %q", ct)
		}
		if resp.Header.Get("Request-Id") == "" {
			t.Fatal("no Request-Id")
		}
		var e struct {
			Type  string `json:"type"`
			Error struct {
				Type, Message string
			} `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
			t.Fatalf("cannot decode the error: %s", err)
		}
		if e.Type != "error" || e.Error.Type != errType || e.Error.Message != message {
			t.Fatalf("error body %+v, want %s %q", e, errType, message)
		}
	}
	f(true, []map[string]any{user("fail")}, http.StatusBadRequest, "invalid_request_error", "prompt is too long")
	f(false, []map[string]any{user("fail")}, http.StatusBadRequest, "invalid_request_error", "prompt is too long")
	// An error with no type given says api_error, the API's generic one.
	f(true, []map[string]any{user("fail"), assistant("a"), user("b")}, http.StatusTooManyRequests, "api_error", "slow down")
	if a := post(t, url, "/v1/messages", conversation(tools, user("fail"), assistant("a"), user("b"), assistant("c"), user("d"))); a.content[0].Text != DoneText {
		t.Fatalf("after the errors: answered %+v", a)
	}

	reqs := srv.Requests()
	want := APIError(http.StatusBadRequest, "invalid_request_error", "prompt is too long")
	if len(reqs[0].Reply) != 1 || reqs[0].Reply[0] != want || !reqs[0].Reply[0].IsAPIError() || reqs[0].Reply[0].IsToolUse() {
		t.Fatalf("recorded reply %+v, want the error alone", reqs[0].Reply)
	}
	if reqs[0].Answered.IsZero() {
		t.Fatal("the error's answer time is not recorded")
	}
}

func TestSetScriptAndReset(t *testing.T) {
	srv := New(nil)
	url := srv.Start(t)
	if a := post(t, url, "/v1/messages", conversation(tools, user("x"))); a.content[0].Text != UnscriptedText {
		t.Fatalf("nil script answered %+v", a)
	}
	srv.SetScript(Script{"x": {Reply(Text("now scripted"))}})
	srv.Reset()
	if a := post(t, url, "/v1/messages", conversation(tools, user("x"))); a.content[0].Text != "now scripted" {
		t.Fatalf("answered %+v", a)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Seq != 0 {
		t.Fatalf("after Reset: %+v", reqs)
	}
}

func TestSideCompactAndOther(t *testing.T) {
	srv := New(Script{"": {Reply(ToolUse("Bash", map[string]any{"command": "ls"}))}})
	url := srv.Start(t)

	// No tools: a side call such as title generation.
	side := conversation(nil, user("Generate a title for: fix the bug"))
	if a := post(t, url, "/v1/messages", side); a.stop != "end_turn" || a.content[0].Text != SideText {
		t.Fatalf("side call answered %+v", a)
	}

	// The compaction request offers tools and repeats the conversation, but
	// must get a text summary, never the scripted tool call.
	compact := conversation(tools, user("tidy"), assistant("ok"), user([]any{
		text("CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\nYour task is to create a detailed summary of the conversation so far."),
	}))
	a := post(t, url, "/v1/messages", compact)
	if a.stop != "end_turn" || len(a.content) != 1 || !strings.Contains(a.content[0].Text, "<summary>") ||
		!strings.Contains(a.content[0].Text, CompactedKey) {
		t.Fatalf("compaction answered %+v", a)
	}

	// count_tokens answers a count.
	resp, err := http.Post(url+"/v1/messages/count_tokens?beta=true", "application/json", strings.NewReader(`{"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	var n struct {
		InputTokens int `json:"input_tokens"`
	}
	err = json.NewDecoder(resp.Body).Decode(&n)
	resp.Body.Close()
	if err != nil || n.InputTokens <= 0 {
		t.Fatalf("count_tokens: %+v %v", n, err)
	}

	// Non-streaming requests get the whole message as JSON.
	ns := conversation(tools, user("go"))
	ns["stream"] = false
	if a := post(t, url, "/v1/messages", ns); a.stop != "tool_use" || a.content[0].Name != "Bash" || string(a.content[0].Input) != `{"command":"ls"}` {
		t.Fatalf("non-streaming answer %+v", a)
	}

	// Garbage still gets a well-formed answer.
	if a := post(t, url, "/v1/messages", "not json"); a.stop != "end_turn" || len(a.content) != 1 {
		t.Fatalf("garbage answered %+v", a)
	}
	get := func(path, want string) {
		t.Helper()
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != want {
			t.Fatalf("GET %s answered %d %q, want %q", path, resp.StatusCode, b, want)
		}
	}
	get("/api/hello", "{}")
	get("/docs/page", Page)

	// WebSearch's nested request offers only the server-side search tool.
	search := conversation(nil, user("Perform a web search for the query: go"))
	search["tools"] = []any{map[string]any{"type": "web_search_20250305", "name": "web_search", "max_uses": 8}}
	if a := post(t, url, "/v1/messages", search); a.stop != "end_turn" || a.content[0].Text != SideText {
		t.Fatalf("web search answered %+v", a)
	}

	var kinds []string
	for _, r := range srv.Requests() {
		kinds = append(kinds, string(r.Kind))
	}
	if got, want := strings.Join(kinds, " "), "side compact count_tokens turn other other other side"; got != want {
		t.Fatalf("kinds %q, want %q", got, want)
	}
}

// TestRealRequest parses a request body Claude Code 2.1.197 really sent
// (descriptions trimmed): a role "system" message among the messages, the
// session id packed into metadata.user_id, three blocks in one assistant
// message.
func TestRealRequest(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "request-2.1.197.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r Request
	if !r.parseBody(body) {
		t.Fatal("cannot parse the request")
	}
	if r.SessionID != "91aa4495-08c7-4455-a2d0-8cbcd5b2b212" || r.Model != "claude-opus-4-8" || !r.Stream {
		t.Fatalf("session %q model %q stream %v", r.SessionID, r.Model, r.Stream)
	}
	if got := strings.Join(r.Tools, ","); !strings.Contains(got, "Agent,Bash,") || strings.Contains(got, "Glob") {
		t.Fatalf("tools %s", got)
	}
	if r.assistantCount() != 1 || len(r.Messages[2].Content) != 3 {
		t.Fatalf("messages %+v", r.Messages)
	}
	if !strings.HasSuffix(r.FirstUserText(), "hello MAIN") {
		t.Fatalf("first user text %q", r.FirstUserText())
	}
	if res := r.ToolResults(); len(res) != 2 || res[0].ResultText() != "CLAUDE.md" || res[1].ResultText() != "sub done" {
		t.Fatalf("tool results %+v", res)
	}
	if r.isCompaction() {
		t.Fatal("an ordinary turn taken for a compaction")
	}
}

// TestStreamGolden pins the wire form of a streamed answer.
func TestStreamGolden(t *testing.T) {
	srv := New(Script{"golden": {Reply(
		Text("I will run it."),
		Block{Tool: "Bash", Input: map[string]any{"command": "go test ./...", "description": "run the tests"}, ID: "toolu_fixed1"},
		Block{Tool: "Read", Input: map[string]any{"file_path": "/p/main.go"}, ID: "toolu_fixed2"},
	)}})
	url := srv.Start(t)
	raw, _ := json.Marshal(conversation(tools, user("golden")))
	resp, err := http.Post(url+"/v1/messages", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	got = regexp.MustCompile(`"msg_[0-9a-f]+"`).ReplaceAll(got, []byte(`"msg_ID"`))
	path := filepath.Join("testdata", "stream.golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("stream differs from %s (run with -update)\n got:\n%s", path, got)
	}
}

func TestInputMarshalError(t *testing.T) {
	srv := New(Script{"x": {Reply(ToolUse("Bash", map[string]any{"bad": func() {}}))}})
	url := srv.Start(t)
	a := post(t, url, "/v1/messages", conversation(tools, user("x")))
	if a.stop != "end_turn" || !strings.Contains(a.content[0].Text, "cannot marshal") {
		t.Fatalf("answered %+v", a)
	}
}

// FuzzServe feeds arbitrary bodies to the handler: it must never panic and
// always answer.
func FuzzServe(f *testing.F) {
	seed, _ := os.ReadFile(filepath.Join("testdata", "request-2.1.197.json"))
	f.Add(seed)
	f.Add([]byte(`{"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":[{"type":"text","text":5}]}]}`))
	f.Add([]byte(`{"tools":"x","messages":{"a":1},"system":7,"metadata":{"user_id":"{"}}`))
	f.Add([]byte(`{"tools":[{"name":"B"}],"messages":[{"role":"user","content":[{"type":"tool_result","content":[{"type":"text"}]}]}]}`))
	srv := New(Script{"": {Reply(ToolUse("Bash", nil))}, "a": {func(r *Request) []Block {
		_ = r.AllText()
		_ = r.ToolUses()
		return nil
	}}})
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range []string{"/v1/messages", "/v1/messages/count_tokens"} {
			req, _ := http.NewRequest(http.MethodPost, path, bytes.NewReader(body))
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, req)
			if w.Body.Len() == 0 {
				t.Fatalf("empty answer to %q", body)
			}
		}
		srv.Reset()
	})
}
