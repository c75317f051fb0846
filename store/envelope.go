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
			return fmt.Errorf("contains %s at offset %d; only letters, digits and -_.: are allowed", quoteAt(id, i), i)
		}
	}
	return nil
}

// FromEnvelope validates an envelope and derives the stored event from it:
// the indexed fields come from its payload, read with the semantics of
// event.Decode; Envelope is its JSON encoding. It fails with a
// *ValidationError when the id is missing or malformed (see ValidateID),
// received_at is missing, or the payload is not a JSON object. Seq is left 0
// for the store to assign.
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
	d, payload, err := derive(env.Payload)
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
		SessionID: d.sessionID,
		Runtime:   env.Runtime,
		Kind:      kind,
		Event:     d.name,
		AgentID:   d.agentID,
		AgentType: d.agentType.Ptr(),
		ToolName:  d.toolName,
		ToolUseID: d.toolUseID,
		PromptID:  d.promptID,
		Time:      env.ReceivedAt,
		Facts: SessionFacts{
			CWD:            d.cwd,
			TranscriptPath: d.transcriptPath,
			Host:           env.Host,
			User:           env.User,
		},
	}
	e.Envelope, err = marshalEnvelope(env, payload)
	if err != nil {
		return Event{}, &ValidationError{Field: "envelope", Err: err}
	}
	e.Decoded = decodedAs(env, payload)
	return e, nil
}

// decodedAs returns what decoding the stored form of env (payload being its
// stored payload) gives, or nil when that takes decoding it: a string that
// is not valid UTF-8 is stored with replacement characters.
func decodedAs(env event.Envelope, payload []byte) *event.Envelope {
	for _, s := range []string{env.ID, env.Runtime, env.Kind, env.Host, env.User, env.HookwatchVersion} {
		if !utf8.ValidString(s) {
			return nil
		}
	}
	if m := env.Subagent; m != nil {
		if !utf8.ValidString(m.ToolUseID) || !utf8.ValidString(m.AgentType) || !utf8.ValidString(m.Description) {
			return nil
		}
		c := *m
		env.Subagent = &c
	}
	if len(env.Decision) > 0 {
		var buf bytes.Buffer
		if json.Compact(&buf, env.Decision) != nil || !utf8.Valid(buf.Bytes()) {
			return nil
		}
		env.Decision = buf.Bytes()
	}
	env.Payload = payload
	env.ReceivedAt = env.ReceivedAt.Round(0) // no monotonic reading, as decoded
	return &env
}

// marshalEnvelope encodes env for storage, with payload (already checked to
// be a JSON object) in place of env.Payload. It writes what json.Marshal
// would write, field for field (TestMarshalEnvelope holds it to that), but
// copies the payload as it is instead of re-scanning it, and does not
// HTML-escape: the JSON is read by jq and people, not embedded in HTML. The
// result is valid UTF-8 even when the envelope's strings were not.
func marshalEnvelope(env event.Envelope, payload []byte) (json.RawMessage, error) {
	b := make([]byte, 0, len(payload)+len(env.Decision)+256)
	b = append(b, `{"id":`...)
	b = appendString(b, env.ID)
	b = append(b, `,"runtime":`...)
	b = appendString(b, env.Runtime)
	if env.Kind != "" {
		b = append(b, `,"kind":`...)
		b = appendString(b, env.Kind)
	}
	t, err := env.ReceivedAt.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("received_at: %w", err)
	}
	b = append(b, `,"received_at":`...)
	b = append(b, t...)
	for _, f := range []struct{ name, v string }{
		{"host", env.Host}, {"user", env.User}, {"hookwatch_version", env.HookwatchVersion},
	} {
		if f.v != "" {
			b = append(b, `,"`...)
			b = append(b, f.name...)
			b = append(b, `":`...)
			b = appendString(b, f.v)
		}
	}
	if env.Subagent != nil {
		sub, err := jsonNoEscape(env.Subagent)
		if err != nil {
			return nil, fmt.Errorf("subagent: %w", err)
		}
		b = append(b, `,"subagent":`...)
		b = append(b, sub...)
	}
	if len(env.Decision) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, env.Decision); err != nil {
			return nil, fmt.Errorf("decision: %w", err)
		}
		b = append(b, `,"decision":`...)
		b = append(b, buf.Bytes()...)
	}
	b = append(b, `,"payload":`...)
	b = append(b, payload...)
	b = append(b, '}')
	if !utf8.Valid(b) {
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	return b, nil
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			q, _ := jsonNoEscape(s) // rare: let encoding/json escape it
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// jsonNoEscape is json.Marshal without HTML escaping.
func jsonNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// quoteAt quotes the character that starts at s[i] for an error message: a
// valid UTF-8 character as itself ('é'), anything else as its byte (0xff) —
// %q of a byte would show 0xc3, the first byte of 'é', as 'Ã'.
func quoteAt(s string, i int) string {
	r, n := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && n <= 1 {
		return fmt.Sprintf("byte 0x%02x", s[i])
	}
	return fmt.Sprintf("%q", r)
}
