// Package privacy applies hookwatch's edge rules to a hook payload before it
// leaves the hook (for the spool or the network) and again in the collector:
// keep what the agent did (tool inputs, prompts — with secrets redacted), not
// what it read (tool output is cut to a preview unless the user opts in).
//
// Apply is idempotent, so the collector can run it on envelopes the hook
// already treated.
package privacy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/redact"
)

// Capture says how much tool output is kept.
type Capture string

// Capture modes.
const (
	CaptureNone    Capture = "none"    // size only
	CapturePreview Capture = "preview" // size, head and tail (the default)
	CaptureFull    Capture = "full"    // everything, redacted
)

// ParseCapture reads a capture mode; "" is the default, preview.
func ParseCapture(s string) (Capture, error) {
	switch c := Capture(strings.ToLower(strings.TrimSpace(s))); c {
	case "":
		return CapturePreview, nil
	case CaptureNone, CapturePreview, CaptureFull:
		return c, nil
	}
	return CapturePreview, fmt.Errorf("invalid capture mode %q: want none, preview or full", s)
}

// Options are the edge rules in force.
type Options struct {
	Capture Capture
	// HeadBytes and TailBytes size a preview (defaults 512 and 256).
	HeadBytes, TailBytes int
	// Redact replaces secrets in prompts and tool inputs (default true).
	Redact bool
}

// DefaultOptions are the rules when nothing is configured.
func DefaultOptions() Options {
	return Options{Capture: CapturePreview, HeadBytes: 512, TailBytes: 256, Redact: true}
}

// OptionsFromEnv reads HOOKWATCH_CAPTURE (none, preview, full) and
// HOOKWATCH_REDACT (0, false or off disables redaction). On a bad value it
// returns the defaults for that setting and an error saying why.
func OptionsFromEnv(getenv func(string) string) (Options, error) {
	o := DefaultOptions()
	var err error
	o.Capture, err = ParseCapture(getenv("HOOKWATCH_CAPTURE"))
	if err != nil {
		err = fmt.Errorf("HOOKWATCH_CAPTURE: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(getenv("HOOKWATCH_REDACT"))) {
	case "0", "false", "off", "no":
		o.Redact = false
	}
	return o, err
}

// redactedFields are the top-level fields whose strings are what the agent
// or the user wrote, and so where secrets appear.
var redactedFields = [...]string{
	"prompt", "tool_input", "command_args", "last_assistant_message", "error",
	"error_details", "compact_summary", "custom_instructions", "message",
	"delta", "reason", "task_description", "task_subject", "content",
}

// Apply enforces o on the payload object p in place and reports whether it
// changed anything. Values of an unexpected type are left as they are; it
// never fails.
func Apply(p map[string]json.RawMessage, o Options) (changed bool) {
	o = o.withDefaults()
	if v, ok := p["tool_response"]; ok {
		if nv, c := o.output(v); c {
			p["tool_response"], changed = nv, true
		}
	}
	if v, ok := p["tool_calls"]; ok {
		if nv, c := o.batch(v); c {
			p["tool_calls"], changed = nv, true
		}
	}
	if !o.Redact {
		return changed
	}
	for _, k := range redactedFields {
		if v, ok := p[k]; ok {
			if nv, n := redact.JSON(v); n > 0 {
				p[k], changed = nv, true
			}
		}
	}
	return changed
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Capture == "" {
		o.Capture = d.Capture
	}
	if o.HeadBytes <= 0 {
		o.HeadBytes = d.HeadBytes
	}
	if o.TailBytes < 0 {
		o.TailBytes = 0
	}
	return o
}

// captured is the replacement of a tool output that was not kept whole.
type captured struct {
	Capture Capture `json:"hookwatch_capture"`
	Bytes   int     `json:"bytes"`
	Head    string  `json:"head,omitempty"`
	Tail    string  `json:"tail,omitempty"`
}

// output applies the capture mode to one tool output value.
func (o Options) output(v json.RawMessage) (json.RawMessage, bool) {
	if isCaptured(v) {
		return v, false
	}
	switch o.Capture {
	case CaptureFull:
		if !o.Redact {
			return v, false
		}
		nv, n := redact.JSON(v)
		return nv, n > 0
	case CaptureNone:
		b, _ := json.Marshal(captured{Capture: CaptureNone, Bytes: len(v)})
		return b, true
	}
	text := string(bytes.TrimSpace(v))
	c := captured{Capture: CapturePreview, Bytes: len(v)}
	if len(text) <= o.HeadBytes+o.TailBytes {
		c.Head = text
	} else {
		c.Head = cutEnd(text, o.HeadBytes)
		c.Tail = cutStart(text, o.TailBytes)
	}
	if o.Redact {
		c.Head, _ = redact.String(c.Head)
		c.Tail, _ = redact.String(c.Tail)
	}
	b, _ := json.Marshal(c)
	return b, true
}

// batch applies the capture mode and redaction to PostToolBatch.tool_calls.
func (o Options) batch(v json.RawMessage) (json.RawMessage, bool) {
	var calls []map[string]json.RawMessage
	if json.Unmarshal(v, &calls) != nil {
		return v, false
	}
	changed := false
	for _, c := range calls {
		if r, ok := c["tool_response"]; ok {
			if nr, ch := o.output(r); ch {
				c["tool_response"], changed = nr, true
			}
		}
		if in, ok := c["tool_input"]; ok && o.Redact {
			if nin, n := redact.JSON(in); n > 0 {
				c["tool_input"], changed = nin, true
			}
		}
	}
	if !changed {
		return v, false
	}
	b, err := json.Marshal(calls)
	if err != nil {
		return v, false
	}
	return b, true
}

// isCaptured recognises an output already replaced by Apply.
func isCaptured(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || v[0] != '{' || !bytes.Contains(v, []byte(`"hookwatch_capture"`)) {
		return false
	}
	var c captured
	return json.Unmarshal(v, &c) == nil && c.Capture != ""
}

// cutEnd returns the first n bytes of s, cut on a rune boundary.
func cutEnd(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// cutStart returns the last n bytes of s, cut on a rune boundary.
func cutStart(s string, n int) string {
	if n >= len(s) {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

