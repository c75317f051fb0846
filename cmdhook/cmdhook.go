// Package cmdhook is for Claude Code (and Codex) command hooks written in Go:
// it reads the payload on stdin into hookwatch's typed payload (package
// event), calls a Handler, and answers with the exact stdout and exit code
// of hookwatch's decision rendering (package decision). Replay runs a
// Handler over recorded payloads, for tests.
//
// A hook built with Main never breaks the agent: a payload that cannot be
// read, a handler error or a panic all answer nothing and exit 0 (the agent
// goes on as if no hook ran), with the reason on stderr.
//
//	func main() {
//		cmdhook.Main(func(ctx context.Context, p *event.Payload) (decision.Decision, error) {
//			var in struct{ Command string `json:"command"` }
//			tool, err := cmdhook.ToolInput(p, &in)
//			if p.Name() != event.PreToolUse || tool != "Bash" || err != nil {
//				return decision.Decision{}, err
//			}
//			if strings.Contains(in.Command, "rm -rf /") {
//				return decision.Decision{Verdict: decision.Deny, Reasons: []string{"not on this machine"}}, nil
//			}
//			return decision.Decision{}, nil
//		})
//	}
package cmdhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/lines"
)

// Handler answers one hook event. The zero Decision is "no opinion". Event
// and Runtime may be left empty: Run fills them from the payload, so that
// the answer is rendered in the shape that event and runtime honour.
type Handler func(ctx context.Context, p *event.Payload) (decision.Decision, error)

// Run answers one hook event: it reads the payload from stdin (at most
// hook.MaxPayloadBytes), calls h and writes the rendered answer to stdout.
// It returns the exit code to exit with. Any failure answers nothing, exits
// 0 and is reported on stderr.
func Run(ctx context.Context, h Handler, stdin io.Reader, stdout, stderr io.Writer) int {
	data, err := io.ReadAll(io.LimitReader(stdin, hook.MaxPayloadBytes+1))
	if err != nil {
		fmt.Fprintf(stderr, "cannot read the hook payload: %v\n", err)
		return 0
	}
	if len(data) > hook.MaxPayloadBytes {
		fmt.Fprintf(stderr, "cannot read the hook payload: larger than %d bytes\n", hook.MaxPayloadBytes)
		return 0
	}
	out, code, err := answer(ctx, h, data)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 0
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "cannot write the hook answer: %v\n", err)
	}
	return code
}

// Main is Run on the process's stdin, stdout and stderr; it exits the
// process with Run's exit code.
func Main(h Handler) {
	os.Exit(Run(context.Background(), h, os.Stdin, os.Stdout, os.Stderr))
}

// answer decodes data, calls h and renders its decision. A panic in h is an
// error, as it must not fail the agent's call.
func answer(ctx context.Context, h Handler, data []byte) (out []byte, code int, err error) {
	p, err := event.Decode(data)
	if err != nil {
		return nil, 0, fmt.Errorf("cannot decode the hook payload: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			out, code, err = nil, 0, fmt.Errorf("hook handler panicked: %v", r)
		}
	}()
	d, err := h(ctx, p)
	if err != nil {
		return nil, 0, fmt.Errorf("hook handler failed: %w", err)
	}
	if d.Event == "" {
		d.Event = p.Name()
	}
	if d.Runtime == "" {
		d.Runtime = event.DetectRuntime(p.TranscriptPath)
	}
	out, code = decision.Render(d)
	return out, code, nil
}

// ToolInput decodes the tool_input of a tool event (PreToolUse,
// PostToolUse, PermissionRequest, …) into v and returns the tool's name. For
// an event about no tool it returns "" and leaves v alone; an input that
// does not decode into v is an error.
func ToolInput(p *event.Payload, v any) (tool string, err error) {
	t := p.Tool()
	if t == nil {
		return "", nil
	}
	if len(t.ToolInput) > 0 {
		if err := json.Unmarshal(t.ToolInput, v); err != nil {
			return t.ToolName, fmt.Errorf("cannot decode the input of %s: %w", t.ToolName, err)
		}
	}
	return t.ToolName, nil
}

// Result is what the agent would receive from a hook for one payload.
type Result struct {
	// Line is the payload's line in the replayed file (from 1).
	Line    int
	Event   string
	Payload []byte
	// Stdout and ExitCode are the hook's answer; Err is what it reported on
	// stderr (nil when it failed nothing).
	Stdout   []byte
	ExitCode int
	Err      error
}

// Replay runs h over recorded payloads, one JSON object per line, exactly
// as Run would answer each, and returns the answers in order. A line is
// read as `hookwatch policy test` reads it (event.RecordedPayload): a raw
// payload, or an object wrapping one under "payload" — an envelope, a line
// of an audit trail's or an export's events.jsonl, a corpus line of
// testdata/payloads. The handler gets the payload, which is also the
// Result's Payload. A wrapped record no hook was sent (a statusline,
// transcript or rollout record) is not answered: its Result has the
// wrapper's line as Payload and an Err saying why, and so is a line longer
// than the hook reads (hook.MaxPayloadBytes), without its bytes. Blank
// lines are skipped. It fails only when r cannot be read.
func Replay(ctx context.Context, h Handler, r io.Reader) ([]Result, error) {
	var results []Result
	lr := lines.NewReader(r, 64<<10, hook.MaxPayloadBytes)
	for n := 1; ; n++ {
		line, flag, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return results, fmt.Errorf("cannot read recorded payloads: %w", err)
		}
		if flag&lines.Long != 0 {
			results = append(results, Result{Line: n,
				Err: fmt.Errorf("longer than the %d MiB a hook reads: not answered", hook.MaxPayloadBytes>>20)})
			continue
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		// A line that is no recorded payload at all goes to Run as it is,
		// which reports why it cannot be read.
		payload, kind, _, err := event.RecordedPayload(line)
		if err != nil {
			payload = line
		} else if kind != event.KindHook {
			results = append(results, Result{Line: n, Payload: bytes.Clone(line),
				Err: fmt.Errorf("a %s record, not a hook event: not answered", kind)})
			continue
		}
		var stdout, stderr bytes.Buffer
		code := Run(ctx, h, bytes.NewReader(payload), &stdout, &stderr)
		res := Result{Line: n, Payload: bytes.Clone(payload), Stdout: stdout.Bytes(), ExitCode: code}
		if p, err := event.Decode(payload); err == nil {
			res.Event = p.Name()
		}
		if stderr.Len() > 0 {
			res.Err = fmt.Errorf("%s", bytes.TrimSpace(stderr.Bytes()))
		}
		results = append(results, res)
	}
	return results, nil
}

// ReplayFile is Replay over the file at path.
func ReplayFile(ctx context.Context, h Handler, path string) ([]Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot replay payloads: %w", err)
	}
	defer f.Close()
	return Replay(ctx, h, f)
}
