package fakeclaude

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// maxBody bounds the request bodies the fake reads; the client's requests
// are a few hundred KiB at most.
const maxBody = 64 << 20

// idCounter makes generated ids unique across all servers of the process.
var idCounter atomic.Uint64

// idPrefix makes generated ids unique across processes, so that two test
// binaries writing to the same HOME never produce the same tool_use id.
var idPrefix = func() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

func newID(kind string) string {
	return fmt.Sprintf("%s_%s%08d", kind, idPrefix, idCounter.Add(1))
}

// Server is an http.Handler speaking the Anthropic Messages API, answering
// from a [Script] and recording every request. It is safe for concurrent
// use: parallel subagents send concurrent requests.
type Server struct {
	mu     sync.Mutex
	script Script
	reqs   []*Request
}

// New returns a server playing script. The script may be nil (every
// conversation is then unscripted) and replaced later with SetScript.
func New(script Script) *Server {
	return &Server{script: script}
}

// SetScript replaces the script for the requests that follow, e.g. before
// resuming a session with new turns.
func (s *Server) SetScript(script Script) {
	s.mu.Lock()
	s.script = script
	s.mu.Unlock()
}

// Requests returns copies of the requests received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = *r
	}
	return out
}

// Reset forgets the recorded requests; the script stays.
func (s *Server) Reset() {
	s.mu.Lock()
	s.reqs = nil
	s.mu.Unlock()
}

// Start serves s on a loopback port until the test ends and returns its
// base URL, the value for ANTHROPIC_BASE_URL.
func (s *Server) Start(tb testing.TB) string {
	tb.Helper()
	ts := httptest.NewServer(s)
	tb.Cleanup(ts.Close)
	return ts.URL
}

// ServeHTTP answers one request. It never blocks on anything but writing
// the answer, and it answers anything it does not understand with a
// well-formed response, so the client never hangs on the fake.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	received := time.Now()
	body, _ := io.ReadAll(io.LimitReader(hr.Body, maxBody))
	r := &Request{Method: hr.Method, Path: hr.URL.Path, Body: body, Received: received}
	isMessages := hr.Method == http.MethodPost && strings.Contains(hr.URL.Path, "/messages")
	parsed := isMessages && r.parseBody(body)
	if !parsed {
		// An unreadable body still came from a client that waits for an
		// answer: assume the streaming form it always asks for.
		r.Stream = true
	}

	var turn Turn
	s.mu.Lock()
	r.Seq = len(s.reqs)
	r.Turn = r.assistantCount()
	switch {
	case !isMessages:
		r.Kind = KindOther
	case strings.HasSuffix(hr.URL.Path, "/count_tokens"):
		r.Kind = KindCountTokens
	case !parsed:
		r.Kind = KindOther
	case len(r.Tools) == r.ServerTools:
		// Checked before compaction: a side call never continues a
		// conversation, whatever its text says. A request offering only
		// server tools (WebSearch's) is one too.
		r.Kind = KindSide
	case r.isCompaction():
		r.Kind = KindCompact
	default:
		key, turns, ok := s.script.match(r.FirstUserText())
		if !ok {
			r.Kind = KindUnscripted
			break
		}
		r.Kind, r.Conversation = KindTurn, key
		if r.Turn < len(turns) {
			turn = turns[r.Turn]
		}
	}
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()

	switch r.Kind {
	case KindOther:
		if isMessages {
			break // answered as a message below
		}
		if strings.HasPrefix(hr.URL.Path, "/v1/") || strings.HasPrefix(hr.URL.Path, "/api/") {
			writeJSON(w, map[string]any{})
			return
		}
		// Anything else is a web page, e.g. for the WebFetch tool.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, Page)
		return
	case KindCountTokens:
		writeJSON(w, map[string]any{"input_tokens": len(body)/4 + 1})
		return
	}

	var blocks []Block
	switch r.Kind {
	case KindSide:
		blocks = []Block{Text(SideText)}
	case KindCompact:
		blocks = []Block{Text(compactSummary)}
	case KindUnscripted:
		blocks = []Block{Text(UnscriptedText)}
	case KindTurn:
		if turn != nil {
			blocks = play(turn, r)
		}
	default:
		blocks = []Block{Text(SideText)}
	}
	if len(blocks) == 0 {
		blocks = []Block{Text(DoneText)}
	}
	if i := slices.IndexFunc(blocks, Block.IsAPIError); i >= 0 {
		s.mu.Lock()
		r.Reply = []Block{blocks[i]}
		s.mu.Unlock()
		writeError(w, blocks[i])
		s.mu.Lock()
		r.Answered = time.Now()
		s.mu.Unlock()
		return
	}
	reply, content := render(blocks)

	s.mu.Lock()
	r.Reply = reply
	s.mu.Unlock()

	model := r.Model
	if model == "" {
		model = "claude-fake"
	}
	if r.Stream {
		writeStream(w, model, content)
	} else {
		writeMessage(w, model, content)
	}
	s.mu.Lock()
	r.Answered = time.Now()
	s.mu.Unlock()
}

// Page is the HTML page the server answers to a GET outside the API paths
// (/v1/, /api/), so that a WebFetch of the server's URL stays on loopback.
const Page = "<!doctype html><html><head><title>fakeclaude</title></head>" +
	"<body><h1>fakeclaude</h1><p>A page served by the scripted model.</p></body></html>\n"

// compactSummary is the answer to a compaction request, in the shape the
// client's compaction prompt asks for.
const compactSummary = "<analysis>\nScripted compaction.\n</analysis>\n\n<summary>\n" +
	CompactedKey + ": the earlier conversation was summarised by the fake model.\n</summary>"

// play runs a turn; a panicking turn answers with the panic as text rather
// than killing the connection, which the client would only retry.
func play(turn Turn, r *Request) (blocks []Block) {
	defer func() {
		if p := recover(); p != nil {
			blocks = []Block{Text(fmt.Sprintf("fakeclaude: turn %d of %q panicked: %v", r.Turn, r.Conversation, p))}
		}
	}()
	return turn(r)
}

// render fills in tool_use ids and marshals inputs. It returns the blocks
// as answered and their wire form.
func render(blocks []Block) ([]Block, []map[string]any) {
	reply := make([]Block, 0, len(blocks))
	content := make([]map[string]any, 0, len(blocks))
	for _, b := range blocks {
		if !b.IsToolUse() {
			reply = append(reply, Block{Text: b.Text})
			content = append(content, map[string]any{"type": "text", "text": b.Text})
			continue
		}
		input := json.RawMessage("{}")
		if b.Input != nil {
			raw, err := json.Marshal(b.Input)
			if err != nil {
				msg := fmt.Sprintf("fakeclaude: cannot marshal the input of %s: %v", b.Tool, err)
				reply = append(reply, Text(msg))
				content = append(content, map[string]any{"type": "text", "text": msg})
				continue
			}
			input = raw
		}
		if b.ID == "" {
			b.ID = newID("toolu")
		}
		reply = append(reply, b)
		content = append(content, map[string]any{"type": "tool_use", "id": b.ID, "name": b.Tool, "input": input})
	}
	return reply, content
}

func stopReason(content []map[string]any) string {
	for _, c := range content {
		if c["type"] == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// writeError answers with the API error b, in the form of the Messages
// API's errors; a streaming request gets it as plain JSON too, as the API
// sends an error found before the stream starts.
func writeError(w http.ResponseWriter, b Block) {
	errType := b.ErrorType
	if errType == "" {
		errType = "api_error"
	}
	raw, _ := json.Marshal(map[string]any{
		"type":  "error",
		"error": map[string]any{"type": errType, "message": b.Text},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", newID("req"))
	w.WriteHeader(b.Status)
	_, _ = w.Write(raw)
}

// writeMessage answers a non-streaming request with the whole message.
func writeMessage(w http.ResponseWriter, model string, content []map[string]any) {
	writeJSON(w, map[string]any{
		"id": newID("msg"), "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stopReason(content), "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 5},
	})
}

// writeStream answers a streaming request with the SSE sequence of the
// Messages API: message_start, per block content_block_start, one delta and
// content_block_stop, then message_delta and message_stop.
func writeStream(w http.ResponseWriter, model string, content []map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	event := func(name string, data map[string]any) {
		data["type"] = name
		b, _ := json.Marshal(data)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	event("message_start", map[string]any{"message": map[string]any{
		"id": newID("msg"), "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 1},
	}})
	for i, c := range content {
		if c["type"] == "tool_use" {
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{
				"type": "tool_use", "id": c["id"], "name": c["name"], "input": map[string]any{},
			}})
			event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{
				"type": "input_json_delta", "partial_json": string(c["input"].(json.RawMessage)),
			}})
		} else {
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": c["text"]}})
		}
		event("content_block_stop", map[string]any{"index": i})
	}
	event("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stopReason(content), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 5},
	})
	event("message_stop", map[string]any{})
	_ = http.NewResponseController(w).Flush()
}
