package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

// derived is what FromEnvelope takes from a payload.
type derived struct {
	sessionID, name, agentID, promptID string
	agentType                          event.OptString
	toolName, toolUseID                string
	cwd, transcriptPath                string
}

// derive reads the fields FromEnvelope needs from a payload, with exactly the
// semantics of event.Decode (which deriveSlow uses, and FuzzDerive checks
// this against): the same inputs fail, and every field gets the value the
// typed view would give it.
//
// It exists for speed. The collector derives every envelope it ingests, and
// event.Decode builds a map of every field and a typed view of every modelled
// one; at tens of thousands of envelopes a second on two cores that was a
// third of the collector's CPU. derive makes one pass over the top level of
// the payload and converts only the dozen fields it needs. The statusLine
// payload, whose fields are nested, goes through event.Decode.
//
// It returns the payload as it must be stored: trimmed, with invalid UTF-8
// replaced as event.Decode does.
func derive(data []byte) (derived, []byte, error) {
	data = jsonscan.TrimBlank(data)
	if len(data) == 0 || data[0] != '{' {
		return derived{}, nil, event.ErrNotObject
	}
	if !utf8.Valid(data) {
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	if !json.Valid(data) {
		// Let encoding/json say what is wrong.
		var v map[string]json.RawMessage
		err := json.Unmarshal(data, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return derived{}, nil, fmt.Errorf("cannot decode payload: %w", err)
	}
	var (
		d                                                  derived
		hasName, hasContextWindow, hasCost, statusLineName bool
		turnID                                             string
	)
	depth := event.ScanObject(data, func(key []byte, val []byte) {
		str := func() string { return lenientString(val) }
		switch string(key) {
		case "session_id":
			d.sessionID = str()
		case "hook_event_name":
			hasName = true
			d.name = str()
		case "agent_id":
			d.agentID = str()
		case "agent_type":
			d.agentType = lenientOpt(val)
		case "prompt_id":
			d.promptID = str()
		case "turn_id":
			turnID = str()
		case "tool_name":
			d.toolName = str()
		case "tool_use_id":
			d.toolUseID = str()
		case "cwd":
			d.cwd = str()
		case "transcript_path":
			d.transcriptPath = str()
		case "context_window":
			hasContextWindow = true
		case "cost":
			hasCost = true
		}
	})
	if depth > event.MaxDepth {
		return derived{}, nil, fmt.Errorf("cannot decode payload: nested %d levels deep, more than %d", depth, event.MaxDepth)
	}
	name := d.name
	if name == "" && !hasName && (hasContextWindow || hasCost) {
		name = event.StatusLine
	}
	statusLineName = name == event.StatusLine
	if statusLineName {
		// Nested fields: take the reference path.
		return deriveSlow(data)
	}
	d.name = name
	d.promptID = event.PromptOf(d.promptID, turnID, d.agentID)
	// The event-specific fields belong to the typed view of the event only.
	if !toolEvents()[name] {
		d.toolName, d.toolUseID = "", ""
	}
	return d, data, nil
}

// deriveSlow is derive through event.Decode: the reference semantics.
func deriveSlow(data []byte) (derived, []byte, error) {
	data = jsonscan.TrimBlank(data)
	p, err := event.Decode(data)
	if err != nil {
		return derived{}, nil, err
	}
	if p.InvalidUTF8 {
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	return derivedOf(p), data, nil
}

// derivedOf reads the fields FromEnvelope needs from a decoded payload.
func derivedOf(p *event.Payload) derived {
	d := derived{
		sessionID:      p.SessionID,
		name:           p.Name(),
		agentID:        p.AgentID,
		agentType:      p.AgentType,
		promptID:       p.PromptID,
		cwd:            p.CWD,
		transcriptPath: p.TranscriptPath,
	}
	if t := p.Tool(); t != nil {
		d.toolName, d.toolUseID = t.ToolName, t.ToolUseID
	}
	if v, ok := p.Event.(*event.StatusLineInput); ok && d.cwd == "" {
		d.cwd = v.Workspace.CurrentDir
	}
	return d
}

// toolEvents is the set of event names whose typed view has tool fields,
// asked of the event package rather than copied from it, so that a tool event
// it learns about is derived here too.
var toolEvents = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, names := range [][]string{event.ClaudeCodeEvents, event.CodexEvents} {
		for _, name := range names {
			p, err := event.Decode([]byte(`{"hook_event_name":"` + name + `"}`))
			if err == nil && p.Tool() != nil {
				m[name] = true
			}
		}
	}
	return m
})

// lenientString reads a field the way event.Decode reads a string field: a
// JSON string, or the literal text of a number or boolean; null, an object
// or an array give "".
func lenientString(v []byte) string {
	if len(v) == 0 {
		return ""
	}
	switch v[0] {
	case '"':
		if bytes.IndexByte(v, '\\') < 0 && len(v) >= 2 {
			return string(v[1 : len(v)-1])
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			return ""
		}
		return s
	case '{', '[':
		return ""
	}
	if string(v) == "null" {
		return ""
	}
	return string(v)
}

// lenientOpt is lenientString that remembers presence, as event.OptString.
func lenientOpt(v []byte) event.OptString {
	if len(v) == 0 || v[0] == '{' || v[0] == '[' || string(v) == "null" {
		return event.OptString{}
	}
	return event.OptString{Value: lenientString(v), Set: true}
}
