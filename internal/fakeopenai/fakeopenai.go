// Package fakeopenai is a scripted stand-in for the OpenAI Responses API
// (POST {base}/responses, streamed as Server-Sent Events), enough for the
// real Codex CLI to run headless on a closed machine against 127.0.0.1 and
// fire its hooks. It is to Codex what package fakeclaude is to Claude Code.
//
// Codex resends the whole conversation on every request (store: false), so
// the fake needs no state to know where a conversation is: it finds the
// latest message the user typed (a user message that does not start with
// "<", which <environment_context> and <hook_prompt> do), picks the turns of
// the first script key that message contains, and answers with the turn
// numbered by how many model answers follow that message. A subagent's
// conversation starts with the message its spawn_agent call sent, so the
// same rule scripts subagents.
package fakeopenai

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// maxBody bounds the request bodies the fake reads.
const maxBody = 64 << 20

// Item is one output item of a scripted answer: exactly one of Text, Tool,
// Custom or HTTPError is set.
type Item struct {
	// Text is an assistant message.
	Text string
	// Tool is a function call of that name with Args (encoded as JSON).
	// Shell calls the shell tool the request offers (exec_command with
	// {"cmd": Args["cmd"], …}). A namespaced tool (spawn_agent and its
	// siblings in multi_agent_v1) gets its namespace from the request. The
	// string value Agent in Args becomes the id the latest spawn_agent
	// call returned.
	Tool string
	Args map[string]any
	// Custom is a freeform (custom) tool call, such as apply_patch, with
	// Input as its text.
	Custom string
	Input  string
	// WebSearch is a web search the model ran itself (a hosted tool: a
	// web_search_call item, which the client does not run), with this
	// query.
	WebSearch string
	// HTTPError fails the request with that status instead of answering.
	HTTPError int
}

// Shell is the Tool name that stands for the request's shell tool.
const Shell = "@shell"

// Agent is the Args value that stands for the latest spawned agent's id.
const Agent = "@AGENT"

// Text returns a text item.
func Text(s string) Item { return Item{Text: s} }

// Call returns a function call item.
func Call(name string, args map[string]any) Item { return Item{Tool: name, Args: args} }

// Exec returns a call of the shell tool running cmd.
func Exec(cmd string) Item { return Item{Tool: Shell, Args: map[string]any{"cmd": cmd}} }

// Search returns a web search of the model's with the given query.
func Search(query string) Item { return Item{WebSearch: query} }

// Patch returns an apply_patch call with the given patch text.
func Patch(patch string) Item { return Item{Custom: "apply_patch", Input: patch} }

// Turn is the model's whole answer to one request.
type Turn []Item

// Script maps a substring of the user's latest message to the turns that
// answer it. Keys are tried longest first, so that a key that contains
// another wins. Past the last turn, or with no key matching, the model
// says DoneText.
type Script map[string][]Turn

// DoneText is what the model says when its script has nothing more.
const DoneText = "All done."

// CompactionSummary is the answer to a compaction request.
const CompactionSummary = "Summary: the user asked for a demo; the work is in progress."

// Request is one request the fake received.
type Request struct {
	Path   string
	Header http.Header
	Body   []byte
	Input  []map[string]any // the conversation
	Tools  []string         // tool names offered, namespaces flattened
	// Namespaces maps each namespaced tool to its namespace.
	Namespaces map[string]string
	Model      string
	Compact    bool // a compaction request
}

// Text returns every text of the conversation's messages and tool outputs,
// joined by newlines: what the model was shown.
func (r *Request) Text() string {
	var b strings.Builder
	for _, it := range r.Input {
		b.WriteString(itemText(it))
		if o, ok := it["output"].(string); ok {
			b.WriteString(o)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Offers reports whether the request offers the tool.
func (r *Request) Offers(tool string) bool {
	for _, t := range r.Tools {
		if t == tool {
			return true
		}
	}
	return false
}

// Server is an http.Handler speaking the Responses API from a Script and
// recording every request. It is safe for concurrent use.
type Server struct {
	mu     sync.Mutex
	script Script
	reqs   []*Request
	ids    atomic.Uint64
}

// New returns a server playing script.
func New(script Script) *Server { return &Server{script: script} }

// SetScript replaces the script for the requests that follow.
func (s *Server) SetScript(script Script) {
	s.mu.Lock()
	s.script = script
	s.mu.Unlock()
}

// Requests returns the requests received so far, in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// Start serves s on a loopback port until the test ends and returns the
// base URL a Codex provider's base_url takes (ending in /v1).
func (s *Server) Start(tb testing.TB) string {
	srv := httptest.NewServer(s)
	tb.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func (s *Server) id(kind string) string { return fmt.Sprintf("%s_%06d", kind, s.ids.Add(1)) }

// ServeHTTP answers POST …/responses; GET …/models lists nothing.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	if hr.Method == http.MethodGet && strings.HasSuffix(hr.URL.Path, "/models") {
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
		return
	}
	if hr.Method != http.MethodPost || !strings.HasSuffix(strings.TrimSuffix(hr.URL.Path, "/"), "/responses") {
		writeJSON(w, http.StatusNotFound, errorBody("fakeopenai: no route for "+hr.Method+" "+hr.URL.Path))
		return
	}
	body, err := io.ReadAll(io.LimitReader(hr.Body, maxBody))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody("cannot read the body: "+err.Error()))
		return
	}
	r := parse(hr, body)
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	script := s.script
	s.mu.Unlock()

	turn := pick(script, r)
	for _, it := range turn {
		if it.HTTPError != 0 {
			writeJSON(w, it.HTTPError, errorBody("fakeopenai: scripted failure"))
			return
		}
	}
	s.stream(w, r, turn)
}

func errorBody(msg string) map[string]any {
	return map[string]any{"error": map[string]any{"message": msg, "type": "server_error"}}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// parse reads what the fake needs of a request; a body that is not the
// expected JSON gives an empty conversation, answered with DoneText.
func parse(hr *http.Request, body []byte) *Request {
	r := &Request{Path: hr.URL.Path, Header: hr.Header.Clone(), Body: body}
	var b struct {
		Model string           `json:"model"`
		Input []map[string]any `json:"input"`
		Tools []struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"tools"`
	}
	if json.Unmarshal(body, &b) != nil {
		return r
	}
	r.Model, r.Input = b.Model, b.Input
	for _, t := range b.Tools {
		if t.Type == "namespace" {
			for _, sub := range t.Tools {
				r.Tools = append(r.Tools, sub.Name)
				if r.Namespaces == nil {
					r.Namespaces = map[string]string{}
				}
				r.Namespaces[sub.Name] = t.Name
			}
			continue
		}
		name := t.Name
		if name == "" {
			name = t.Type
		}
		r.Tools = append(r.Tools, name)
	}
	if m := lastMessage(r.Input, "user", "developer"); m != nil && strings.Contains(itemText(m), "CONTEXT CHECKPOINT COMPACTION") {
		r.Compact = true
	}
	return r
}

// pick chooses the answer to r.
func pick(script Script, r *Request) Turn {
	if r.Compact {
		return Turn{Text(CompactionSummary)}
	}
	if len(r.Tools) == 0 {
		return Turn{Text("ok")}
	}
	at := -1
	for i, it := range r.Input {
		if isMessage(it, "user") && !strings.HasPrefix(strings.TrimSpace(itemText(it)), "<") {
			at = i
		}
	}
	if at < 0 {
		return Turn{Text(DoneText)}
	}
	text := itemText(r.Input[at])
	keys := make([]string, 0, len(script))
	for k := range script {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return len(keys[i]) > len(keys[j]) || len(keys[i]) == len(keys[j]) && keys[i] < keys[j]
	})
	for _, k := range keys {
		if strings.Contains(text, k) {
			turns := script[k]
			if n := answers(r.Input[at:]); n < len(turns) {
				return turns[n]
			}
			return Turn{Text(DoneText)}
		}
	}
	return Turn{Text(DoneText)}
}

// modelItems are the input items the model produced.
var modelItems = map[string]bool{"reasoning": true, "function_call": true, "custom_tool_call": true,
	"local_shell_call": true, "web_search_call": true, "tool_search_call": true}

// answers counts the model's answers in items: maximal runs of items the
// model produced.
func answers(items []map[string]any) int {
	n, inside := 0, false
	for _, it := range items {
		t, _ := it["type"].(string)
		model := modelItems[t] || isMessage(it, "assistant")
		if model && !inside {
			n++
		}
		inside = model
	}
	return n
}

func isMessage(it map[string]any, role string) bool {
	t, _ := it["type"].(string)
	return (t == "" || t == "message") && it["role"] == role
}

func lastMessage(items []map[string]any, roles ...string) map[string]any {
	for i := len(items) - 1; i >= 0; i-- {
		for _, role := range roles {
			if isMessage(items[i], role) {
				return items[i]
			}
		}
	}
	return nil
}

// itemText is the text of a message item.
func itemText(it map[string]any) string {
	switch c := it["content"].(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, p := range c {
			if m, ok := p.(map[string]any); ok {
				if t, ok := m["text"].(string); ok {
					parts = append(parts, t)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// lastAgentID is the agent id the latest spawn_agent call returned.
func lastAgentID(r *Request) string {
	for i := len(r.Input) - 1; i >= 0; i-- {
		it := r.Input[i]
		if it["type"] != "function_call_output" {
			continue
		}
		out, _ := it["output"].(string)
		var o map[string]any
		if json.Unmarshal([]byte(out), &o) == nil {
			for _, k := range []string{"agent_id", "id"} {
				if s, ok := o[k].(string); ok && s != "" {
					return s
				}
			}
		}
		if m := uuidRE.FindString(out); m != "" {
			return m
		}
	}
	return "unknown-agent"
}

// stream writes turn as the Responses API's event stream.
func (s *Server) stream(w http.ResponseWriter, r *Request, turn Turn) {
	rid := s.id("resp")
	model := r.Model
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("x-request-id", rid)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(kind string, data map[string]any) {
		data["type"] = kind
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", kind, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send("response.created", map[string]any{"response": map[string]any{"id": rid, "object": "response", "status": "in_progress", "model": model, "output": []any{}}})
	var output []any
	for idx, it := range turn {
		iid := s.id("item")
		var added, done map[string]any
		switch {
		case it.Tool != "":
			name, args := it.Tool, it.Args
			if name == Shell {
				name = "exec_command"
				if !r.Offers(name) && r.Offers("shell_command") {
					name, args = "shell_command", map[string]any{"command": args["cmd"]}
				}
			}
			ab, _ := json.Marshal(withAgent(args, r))
			cid := s.id("call")
			added = map[string]any{"type": "function_call", "id": iid, "call_id": cid, "name": name, "arguments": "", "status": "in_progress"}
			if n := r.Namespaces[name]; n != "" {
				added["namespace"] = n
			}
			send("response.output_item.added", map[string]any{"output_index": idx, "item": added})
			send("response.function_call_arguments.delta", map[string]any{"item_id": iid, "output_index": idx, "delta": string(ab)})
			send("response.function_call_arguments.done", map[string]any{"item_id": iid, "output_index": idx, "arguments": string(ab)})
			done = clone(added)
			done["arguments"], done["status"] = string(ab), "completed"
		case it.WebSearch != "":
			added = map[string]any{"type": "web_search_call", "id": s.id("ws"), "status": "in_progress"}
			send("response.output_item.added", map[string]any{"output_index": idx, "item": added})
			done = clone(added)
			done["status"], done["action"] = "completed", map[string]any{"type": "search", "query": it.WebSearch}
		case it.Custom != "":
			cid := s.id("call")
			added = map[string]any{"type": "custom_tool_call", "id": iid, "call_id": cid, "name": it.Custom, "input": "", "status": "in_progress"}
			send("response.output_item.added", map[string]any{"output_index": idx, "item": added})
			send("response.custom_tool_call_input.delta", map[string]any{"item_id": iid, "output_index": idx, "delta": it.Input})
			send("response.custom_tool_call_input.done", map[string]any{"item_id": iid, "output_index": idx, "input": it.Input})
			done = clone(added)
			done["input"], done["status"] = it.Input, "completed"
		default:
			part := map[string]any{"type": "output_text", "text": it.Text, "annotations": []any{}}
			added = map[string]any{"type": "message", "id": iid, "role": "assistant", "status": "in_progress", "content": []any{}}
			send("response.output_item.added", map[string]any{"output_index": idx, "item": added})
			send("response.content_part.added", map[string]any{"item_id": iid, "output_index": idx, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			send("response.output_text.delta", map[string]any{"item_id": iid, "output_index": idx, "content_index": 0, "delta": it.Text})
			send("response.output_text.done", map[string]any{"item_id": iid, "output_index": idx, "content_index": 0, "text": it.Text})
			send("response.content_part.done", map[string]any{"item_id": iid, "output_index": idx, "content_index": 0, "part": part})
			done = clone(added)
			done["status"], done["content"] = "completed", []any{part}
		}
		send("response.output_item.done", map[string]any{"output_index": idx, "item": done})
		output = append(output, done)
	}
	// total_tokens is what model_auto_compact_token_limit compares against.
	usage := map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 110}
	send("response.completed", map[string]any{"response": map[string]any{"id": rid, "object": "response", "status": "completed", "model": model, "output": output, "usage": usage}})
}

// withAgent returns v with every Agent string in it, at any depth,
// replaced by the latest spawned agent's id.
func withAgent(v any, r *Request) any {
	switch x := v.(type) {
	case string:
		if x == Agent {
			return lastAgentID(r)
		}
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = withAgent(e, r)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = withAgent(e, r)
		}
		return a
	}
	return v
}

func clone(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
