// Command mcpclock is a tiny MCP server for the end-to-end policy tests: it
// speaks JSON-RPC 2.0 over stdio (one message per line) and offers one tool,
// "now", whose result is JSON text holding fixed times as Unix seconds, Unix
// milliseconds and an ISO 8601 time with an offset, so that a test can check
// what a PostToolUse rewrite made of them.
package main

import (
	"bufio"
	"encoding/json"
	"os"
)

// Result is the text "now" returns. 1717236000 is 2024-06-01T10:00:00Z.
const Result = `{"event":"deploy","created_at":1717236000,"updated_at_ms":1717236000123,"expires":"2024-06-01T12:30:00+02:00","count":3}`

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 16<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var m message
		if json.Unmarshal(in.Bytes(), &m) != nil || m.Method == "" {
			continue
		}
		if len(m.ID) == 0 {
			continue // a notification: notifications/initialized and the like
		}
		reply := message{JSONRPC: "2.0", ID: m.ID}
		switch m.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(m.Params, &p)
			if p.ProtocolVersion == "" {
				p.ProtocolVersion = "2025-06-18"
			}
			reply.Result = map[string]any{
				"protocolVersion": p.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "clock", "version": "1.0.0"},
			}
		case "ping":
			reply.Result = map[string]any{}
		case "tools/list":
			reply.Result = map[string]any{"tools": []any{map[string]any{
				"name":        "now",
				"description": "Returns the latest deployment event with its times.",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}},
			}}}
		case "tools/call":
			reply.Result = map[string]any{"content": []any{map[string]any{"type": "text", "text": Result}}}
		case "resources/list", "prompts/list":
			// Not offered, but answered empty so a client that asks anyway
			// moves on.
			key := "resources"
			if m.Method == "prompts/list" {
				key = "prompts"
			}
			reply.Result = map[string]any{key: []any{}}
		default:
			reply.Error = &rpcError{Code: -32601, Message: "method not found: " + m.Method}
		}
		if out.Encode(reply) != nil {
			return
		}
	}
}
