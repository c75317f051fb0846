// Command timestamps is an agent's tool executor with a post hook that
// normalises every timestamp a tool returns to ISO 8601 UTC before the
// model sees it: Unix seconds and milliseconds under time-like keys, and
// date-times with an offset, also inside the JSON text an MCP tool returns
// as a string. It is the in-process form of the policy rule
//
//	rules:
//	  - id: utc-clock
//	    events: [PostToolUse]
//	    tool: mcp__clock__.*
//	    transform: [timestamps]
//
// and uses the same function (policy.NormalizeTimestamps), so an agent in Go
// and Claude Code under that rule show the model the same times.
//
//	go run ./examples/timestamps
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/hookwatch/hookwatch/policy"
	"github.com/hookwatch/hookwatch/toolhook"
)

// clockResult is what the clock tool answers: an MCP tool's text, JSON
// with an epoch in seconds, one in milliseconds and a time at +02:00.
const clockResult = `{"event":"deploy","created_at":1717236000,"updated_at_ms":1717236000123,"expires":"2024-06-01T12:30:00+02:00","count":3}`

// normaliser registers the post hook on the tools matched by pattern
// (Claude Code's matcher syntax).
func normaliser(r *toolhook.Registry, pattern string) error {
	return r.Post(pattern, func(_ context.Context, c *toolhook.Call) toolhook.PostResult {
		if c.Err != nil {
			return toolhook.PostResult{}
		}
		out, changed := policy.NormalizeTimestamps(c.Output, policy.TimestampOptions{})
		if !changed {
			return toolhook.PostResult{}
		}
		return toolhook.PostResult{Output: out, Metadata: map[string]any{"timestamps": "normalised"}}
	})
}

// newExecutor returns the agent's executor: a clock tool behind the
// normaliser, and a tool it leaves alone.
func newExecutor(rec toolhook.Recorder) (*toolhook.Executor, error) {
	var hooks toolhook.Registry
	if err := normaliser(&hooks, "mcp__clock__.*"); err != nil {
		return nil, err
	}
	return &toolhook.Executor{
		Registry:  &hooks,
		SessionID: "timestamps-example",
		Recorder:  rec,
		Tools: map[string]toolhook.Tool{
			"mcp__clock__now": func(context.Context, map[string]any) (any, error) { return clockResult, nil },
			"echo":            func(_ context.Context, in map[string]any) (any, error) { return in, nil },
		},
	}, nil
}

func main() {
	x, err := newExecutor(nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for _, call := range []struct {
		tool  string
		input map[string]any
	}{
		{"mcp__clock__now", map[string]any{}},
		{"echo", map[string]any{"created_at": 1717236000}},
	} {
		out, err := x.Call(ctx, call.tool, call.input)
		if err != nil {
			log.Fatal(err)
		}
		b, _ := json.Marshal(out)
		fmt.Fprintf(os.Stdout, "%s -> %s\n", call.tool, b)
	}
}
