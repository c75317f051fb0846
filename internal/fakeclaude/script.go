// Package fakeclaude is a scripted stand-in for the Anthropic Messages API.
//
// It lets an end-to-end test run the real Claude Code client on a closed
// machine: the client sends its model requests here, the test decides what
// "the model" answers (text and tool calls), the client runs real tools and
// fires real hooks, and every request body is recorded so the test can check
// what the model saw (tool results, hook reasons, additional context).
//
// The behaviour of the model is a [Script]: conversations keyed by a
// substring of their first user message, each a list of [Turn]s. Turn i is
// played when i assistant messages are already present in the request.
package fakeclaude

import "strings"

// Block is one content block of a scripted assistant message: a text block
// when Tool is empty, a tool_use block otherwise; or, when Status is set,
// an API error in place of the whole message (see [APIError]).
type Block struct {
	// Text is the text of a text block, or the message of an API error. It
	// is ignored for tool_use blocks.
	Text string
	// Tool is the name of the tool to call, e.g. "Bash" or "Agent".
	Tool string
	// Input is the tool input; it is marshalled to JSON. Nil means {}.
	Input any
	// ID is the tool_use id. Empty means a fresh id of the form "toolu_…",
	// unique across all servers of the process.
	ID string
	// Status, when not zero, makes the block an API error: the HTTP status
	// the request is answered with. ErrorType is the error's type in the
	// body, e.g. "invalid_request_error".
	Status    int
	ErrorType string
}

// IsToolUse reports whether b is a tool_use block.
func (b Block) IsToolUse() bool { return b.Tool != "" && b.Status == 0 }

// IsAPIError reports whether b is an API error (see [APIError]).
func (b Block) IsAPIError() bool { return b.Status != 0 }

// APIError returns a block that makes its turn fail as the Messages API
// fails: the request is answered with the HTTP status and the body
// {"type":"error","error":{"type":errType,"message":message}}, not with a
// message; the turn's other blocks are dropped. The client retries a 429,
// a 529 and a 5xx with backoff, and gives up at once on a 400, so a test
// that wants no wait answers 400 "invalid_request_error".
func APIError(status int, errType, message string) Block {
	return Block{Status: status, ErrorType: errType, Text: message}
}

// Text returns a text block.
func Text(s string) Block { return Block{Text: s} }

// ToolUse returns a tool_use block calling tool name with the given input
// (typically a map[string]any; anything encoding/json can marshal).
func ToolUse(name string, input any) Block { return Block{Tool: name, Input: input} }

// Turn computes one assistant message from the request it answers. A turn
// that returns no blocks answers with the text [DoneText]. A turn must not
// modify the request.
type Turn func(r *Request) []Block

// Reply returns a Turn that always answers with the given blocks: the usual
// way to write a static turn.
func Reply(blocks ...Block) Turn {
	return func(*Request) []Block { return blocks }
}

// Script describes the model's behaviour. Each key selects the conversations
// whose first user message (all its text blocks joined) contains the key;
// when several keys match, the longest wins, so the choice never depends on
// map order. The empty key matches every conversation that offers tools.
//
// The value lists the conversation's turns: turn i answers a request that
// already holds i assistant messages. A request beyond the last turn gets
// the text [DoneText] with stop_reason end_turn, so a script whose last
// turn calls a tool still ends.
//
// The first user message of a subagent's conversation holds the prompt of
// the spawning Agent tool call; that of a resumed or forked session is
// still the original one, so its turns continue the same list. After a
// compaction it holds the summary, which contains [CompactedKey]; the
// client (2.1.197) keeps the last assistant message and adds a synthetic
// one, so the numbering of that conversation does not restart at 0.
type Script map[string][]Turn

// match returns the longest key of s contained in text.
func (s Script) match(text string) (key string, turns []Turn, ok bool) {
	for k, t := range s {
		if !strings.Contains(text, k) {
			continue
		}
		if !ok || len(k) > len(key) || (len(k) == len(key) && k < key) {
			key, turns, ok = k, t, true
		}
	}
	return key, turns, ok
}

const (
	// DoneText is the answer to a request beyond the last scripted turn of
	// its conversation.
	DoneText = "done"
	// SideText is the answer to a request that offers no tools (title
	// generation and similar side calls of the client).
	SideText = "ok"
	// UnscriptedText is the answer to a request that offers tools but
	// matches no conversation of the script.
	UnscriptedText = "fakeclaude: no scripted conversation matches this request"
	// CompactedKey is part of every compaction summary the fake writes, so
	// a script can key the conversation that continues after a compaction.
	CompactedKey = "fakeclaude-compacted-conversation"
)
