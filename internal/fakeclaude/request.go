package fakeclaude

import (
	"encoding/json"
	"strings"
	"time"
)

// Kind classifies a recorded request by how the fake answered it.
type Kind string

// The kinds of requests.
const (
	// KindTurn is a request of a scripted conversation.
	KindTurn Kind = "turn"
	// KindUnscripted offers tools but matches no conversation of the script.
	KindUnscripted Kind = "unscripted"
	// KindSide offers no tools the client runs: title generation, the
	// nested request behind WebSearch, and similar side calls.
	KindSide Kind = "side"
	// KindCompact asks for a summary of the conversation (compaction).
	KindCompact Kind = "compact"
	// KindCountTokens is a POST to /v1/messages/count_tokens.
	KindCountTokens Kind = "count_tokens"
	// KindOther is anything else: other paths, methods, unreadable bodies.
	KindOther Kind = "other"
)

// Request is one request the fake received, with what it answered.
type Request struct {
	// Seq numbers the requests of a server from 0 in arrival order.
	Seq int
	// Method and Path are the HTTP method and URL path.
	Method, Path string
	// Body is the raw request body.
	Body []byte
	// Model is the requested model, Stream whether SSE was asked for.
	Model  string
	Stream bool
	// System is the system prompt, its text blocks joined with newlines.
	System string
	// Tools lists the names of the tools offered, in request order.
	Tools []string
	// ServerTools counts the offered tools that the API runs itself (a
	// "type" such as "web_search_20250305"), which the client never runs.
	ServerTools int
	// Messages is the conversation as sent.
	Messages []Message
	// SessionID is the client's session id from metadata.user_id, if any.
	SessionID string
	// Kind says how the request was classified.
	Kind Kind
	// Conversation is the script key the request matched (KindTurn only).
	Conversation string
	// Turn is the number of assistant messages already present: the index
	// of the turn played.
	Turn int
	// Reply is what the fake answered, with generated tool_use ids filled in;
	// a request answered with an API error holds that error block alone.
	Reply []Block
	// Received is when the request arrived, Answered when its answer was
	// written (zero for a request answered without a message): the time
	// between one turn's Answered and the next turn's Received is the
	// client's, running the tools and their hooks.
	Received, Answered time.Time
}

// Message is one message of a conversation. A message whose content is a
// plain string holds one text block.
type Message struct {
	Role    string
	Content []Content
}

// Content is one content block of a message, any type. Only the fields of
// its type are set.
type Content struct {
	Type string `json:"type"`
	// Text of a text block.
	Text string `json:"text,omitempty"`
	// ID, Name and Input of a tool_use block.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID, Content and IsError of a tool_result block. Content is
	// either a JSON string or an array of blocks; see ResultText.
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// ResultText returns the text of a tool_result block: its string content,
// or the text blocks of its array content joined with newlines.
func (c Content) ResultText() string {
	var s string
	if json.Unmarshal(c.Content, &s) == nil {
		return s
	}
	var blocks []Content
	if json.Unmarshal(c.Content, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Text returns the text blocks of m joined with newlines.
func (m Message) Text() string {
	var parts []string
	for _, c := range m.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// FirstUserText returns the text of the first user message, the text the
// script keys are matched against.
func (r *Request) FirstUserText() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Text()
		}
	}
	return ""
}

// LastUserText returns the text of the last user message.
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text()
		}
	}
	return ""
}

// ToolResults returns the tool_result blocks of the last user message: the
// results of the previous turn's tool calls.
func (r *Request) ToolResults() []Content {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role != "user" {
			continue
		}
		var out []Content
		for _, c := range r.Messages[i].Content {
			if c.Type == "tool_result" {
				out = append(out, c)
			}
		}
		return out
	}
	return nil
}

// ToolResult returns the tool_result block answering the tool call id,
// searching the whole conversation.
func (r *Request) ToolResult(id string) (Content, bool) {
	for _, m := range r.Messages {
		for _, c := range m.Content {
			if c.Type == "tool_result" && c.ToolUseID == id {
				return c, true
			}
		}
	}
	return Content{}, false
}

// ToolUses returns the tool_use blocks of the whole conversation in order.
func (r *Request) ToolUses() []Content {
	var out []Content
	for _, m := range r.Messages {
		for _, c := range m.Content {
			if c.Type == "tool_use" {
				out = append(out, c)
			}
		}
	}
	return out
}

// Offers reports whether the request offers the named tool.
func (r *Request) Offers(tool string) bool {
	for _, t := range r.Tools {
		if t == tool {
			return true
		}
	}
	return false
}

// AllText returns every piece of text the model sees in the messages (not
// the system prompt): text blocks, string contents, tool_result texts and
// tool_use inputs, one per line. It is what a test searches to prove that
// something reached the model.
func (r *Request) AllText() string {
	var b strings.Builder
	for _, m := range r.Messages {
		for _, c := range m.Content {
			switch c.Type {
			case "text":
				b.WriteString(c.Text)
			case "tool_result":
				b.WriteString(c.ResultText())
			case "tool_use":
				b.Write(c.Input)
			default:
				continue
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// assistantCount returns the number of assistant messages of r.
func (r *Request) assistantCount() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// compactMarkers are phrases of the client's compaction instruction; the
// request that carries one in its last user message asks for a summary.
var compactMarkers = []string{
	"detailed summary of the conversation",
	"summary of the conversation so far",
}

// isCompaction reports whether r asks for a summary of the conversation.
func (r *Request) isCompaction() bool {
	last := strings.ToLower(r.LastUserText())
	for _, m := range compactMarkers {
		if strings.Contains(last, m) {
			return true
		}
	}
	return false
}

// parseBody fills r from a Messages API request body. It is lenient: a
// field of an unexpected shape is skipped, never fatal, because the body
// comes from a client whose format evolves. It reports whether the body
// was a JSON object at all.
func (r *Request) parseBody(body []byte) bool {
	var top struct {
		Model    json.RawMessage   `json:"model"`
		Stream   json.RawMessage   `json:"stream"`
		System   json.RawMessage   `json:"system"`
		Tools    []json.RawMessage `json:"tools"`
		Messages []json.RawMessage `json:"messages"`
		Metadata json.RawMessage   `json:"metadata"`
	}
	if err := json.Unmarshal(body, &top); err != nil {
		// A field of the wrong type fails the whole decode; retry field by
		// field so that one odd field does not hide the others.
		var fields map[string]json.RawMessage
		if json.Unmarshal(body, &fields) != nil {
			return false
		}
		_ = json.Unmarshal(fields["model"], &top.Model)
		_ = json.Unmarshal(fields["stream"], &top.Stream)
		_ = json.Unmarshal(fields["system"], &top.System)
		_ = json.Unmarshal(fields["tools"], &top.Tools)
		_ = json.Unmarshal(fields["messages"], &top.Messages)
		_ = json.Unmarshal(fields["metadata"], &top.Metadata)
	}
	_ = json.Unmarshal(top.Model, &r.Model)
	_ = json.Unmarshal(top.Stream, &r.Stream)
	r.System = textOf(top.System)
	for _, raw := range top.Tools {
		var t struct {
			Name string `json:"name"`
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &t) == nil && t.Name != "" {
			r.Tools = append(r.Tools, t.Name)
			if t.Type != "" && t.Type != "custom" {
				r.ServerTools++
			}
		}
	}
	for _, raw := range top.Messages {
		var m struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		r.Messages = append(r.Messages, Message{Role: m.Role, Content: contentOf(m.Content)})
	}
	var meta struct {
		UserID string `json:"user_id"`
	}
	if json.Unmarshal(top.Metadata, &meta) == nil {
		// The client packs a JSON object into the user_id string.
		var uid struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal([]byte(meta.UserID), &uid) == nil {
			r.SessionID = uid.SessionID
		}
	}
	return true
}

// contentOf decodes a message content: a string or an array of blocks.
func contentOf(raw json.RawMessage) []Content {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []Content{{Type: "text", Text: s}}
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	out := make([]Content, 0, len(items))
	for _, it := range items {
		var c Content
		if json.Unmarshal(it, &c) != nil {
			// Keep at least the type so positions stay meaningful.
			var t struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(it, &t)
			c = Content{Type: t.Type}
		}
		out = append(out, c)
	}
	return out
}

// textOf returns the text of a system prompt: a string or text blocks.
func textOf(raw json.RawMessage) string {
	var parts []string
	for _, c := range contentOf(raw) {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}
