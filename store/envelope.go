package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/event"
)

// MaxIDLen is the longest envelope id accepted. The hook makes 36-character
// UUIDv7s; the margin leaves room for other producers, not for payloads
// smuggled into an indexed column.
const MaxIDLen = 128

// ValidateID reports whether id can be an envelope id: 1 to MaxIDLen bytes
// of ASCII letters, digits and "-_.:".
func ValidateID(id string) error {
	if id == "" {
		return errors.New("missing")
	}
	if len(id) > MaxIDLen {
		return fmt.Errorf("longer than %d bytes", MaxIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == ':':
		default:
			return fmt.Errorf("contains byte %q at offset %d; only letters, digits and -_.: are allowed", c, i)
		}
	}
	return nil
}

// FromEnvelope validates an envelope and derives the stored event from it:
// the indexed fields come from its payload (read with event.Decode), Envelope
// is its JSON encoding. It fails with a *ValidationError when the id is
// missing or malformed (see ValidateID), received_at is missing, or the
// payload is not a JSON object. Seq is left 0 for the store to assign.
func FromEnvelope(env event.Envelope) (Event, error) {
	if err := ValidateID(env.ID); err != nil {
		return Event{}, &ValidationError{Field: "id", Err: err}
	}
	if env.ReceivedAt.IsZero() {
		return Event{}, &ValidationError{Field: "received_at", Err: errors.New("missing")}
	}
	if len(bytes.TrimSpace(env.Payload)) == 0 {
		return Event{}, &ValidationError{Field: "payload", Err: errors.New("missing")}
	}
	p, err := event.Decode(env.Payload)
	if err != nil {
		return Event{}, &ValidationError{Field: "payload", Err: err}
	}
	if len(env.Decision) > 0 && !json.Valid(env.Decision) {
		return Event{}, &ValidationError{Field: "decision", Err: errors.New("not valid JSON")}
	}
	kind := env.Kind
	if kind == "" {
		kind = event.KindHook
	}
	e := Event{
		ID:        env.ID,
		SessionID: p.SessionID,
		Runtime:   env.Runtime,
		Kind:      kind,
		Event:     p.Name(),
		AgentID:   p.AgentID,
		AgentType: p.AgentType.Ptr(),
		PromptID:  p.PromptID,
		Time:      env.ReceivedAt,
		Facts: SessionFacts{
			CWD:            p.CWD,
			TranscriptPath: p.TranscriptPath,
			Model:          p.Model,
			PermissionMode: p.PermissionMode,
			Host:           env.Host,
			User:           env.User,
		},
	}
	if t := p.Tool(); t != nil {
		e.ToolName, e.ToolUseID = t.ToolName, t.ToolUseID
	}
	switch v := p.Event.(type) {
	case *event.SessionStartInput:
		e.Facts.Source, e.Facts.Title = v.Source, v.SessionTitle
	case *event.UserPromptSubmitInput:
		e.Facts.Title = v.SessionTitle
	case *event.SessionEndInput:
		e.Facts.EndReason = v.Reason
	case *event.StatusLineInput:
		if e.Facts.Model == "" {
			e.Facts.Model = v.Model.ID
		}
		if e.Facts.CWD == "" {
			e.Facts.CWD = v.Workspace.CurrentDir
		}
		if e.Facts.Title == "" {
			e.Facts.Title = v.SessionName
		}
	}
	e.Envelope, err = marshalEnvelope(env)
	if err != nil {
		return Event{}, &ValidationError{Field: "envelope", Err: err}
	}
	return e, nil
}

// marshalEnvelope encodes env for storage: compact, without the HTML escaping
// encoding/json does by default (the JSON is read by jq and people, not
// embedded in HTML), and valid UTF-8 even when the payload held invalid
// bytes, which can only sit inside strings and become U+FFFD.
func marshalEnvelope(env event.Envelope) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if !utf8.Valid(b) {
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	return b, nil
}
