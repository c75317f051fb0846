package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	if err := validate(env); err != nil {
		return Event{}, err
	}
	d, payload, err := derive(env.Payload)
	if err != nil {
		return Event{}, &ValidationError{Field: "payload", Err: err}
	}
	return fromDerived(env, d, payload)
}

// FromDecoded is FromEnvelope for an envelope whose payload the caller has
// decoded already: p must be event.Decode of env.Payload, or its typed views
// alone (event.Payload.DropRaw), and env.Payload as Decode reads it (no
// blanks around it, valid UTF-8), as the collector's admission makes them.
// The payload is not read again, and the event's Payload is p.
func FromDecoded(env event.Envelope, p *event.Payload) (Event, error) {
	if err := validate(env); err != nil {
		return Event{}, err
	}
	e, err := fromDerived(env, derivedOf(p), env.Payload)
	if err != nil {
		return Event{}, err
	}
	e.Payload = p
	return e, nil
}

// validate checks what FromEnvelope checks before reading the payload.
func validate(env event.Envelope) error {
	if err := ValidateID(env.ID); err != nil {
		return &ValidationError{Field: "id", Err: err}
	}
	if env.ReceivedAt.IsZero() {
		return &ValidationError{Field: "received_at", Err: errors.New("missing")}
	}
	if len(bytes.TrimSpace(env.Payload)) == 0 {
		return &ValidationError{Field: "payload", Err: errors.New("missing")}
	}
	return nil
}

// fromDerived builds the stored event of env, whose payload, as stored, is
// payload and gave d.
func fromDerived(env event.Envelope, d derived, payload []byte) (Event, error) {
	stored, err := storedForm(env, payload)
	if err != nil {
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
		Facts:     factsOf(env, d),
	}
	e.Envelope, err = encodeStored(stored)
	if err != nil {
		return Event{}, &ValidationError{Field: "envelope", Err: err}
	}
	e.Decoded = decodedAs(stored)
	return e, nil
}

// factsOf is what an event of env, whose payload gave d, tells about its
// session.
func factsOf(env event.Envelope, d derived) SessionFacts {
	return SessionFacts{CWD: d.cwd, TranscriptPath: d.transcriptPath, Host: env.Host, User: env.User}
}

// Redecode fills, of an event read back from a store (its Envelope as
// stored), what FromEnvelope filled beside it when it was inserted:
// Decoded, Payload and Facts, from one decoding of the envelope and of its
// payload. Decoded's payload and decision are slices of Envelope, which the
// caller must not change. On error the event is left as it was.
func Redecode(e *Event) error {
	env, err := StoredEnvelope(e)
	if err != nil {
		return err
	}
	p, err := event.Decode(env.Payload)
	if err != nil {
		return fmt.Errorf("cannot decode a stored payload: %w", err)
	}
	e.Decoded, e.Payload, e.Facts = &env, p, factsOf(env, derivedOf(p))
	return nil
}

// EnvelopeOf returns the envelope of e: Decoded, when FromEnvelope made it
// (an event just stored, in this process), else StoredEnvelope's decoding
// of its JSON. The same caveat holds: its payload and decision are not the
// caller's to change.
func EnvelopeOf(e *Event) (event.Envelope, error) {
	if e.Decoded != nil {
		return *e.Decoded, nil
	}
	return StoredEnvelope(e)
}

// StoredEnvelope decodes the envelope of an event read back from a store
// (its Envelope as stored). Its payload and decision are slices of
// e.Envelope, which the caller must not change: the store read those bytes
// for this event alone.
func StoredEnvelope(e *Event) (event.Envelope, error) {
	var env event.Envelope
	// Not through json.Unmarshal, which would scan the envelope once more
	// to validate it first: the decoder validates what it reads.
	if err := env.UnmarshalShared(e.Envelope); err != nil {
		return env, fmt.Errorf("cannot decode a stored envelope: %w", err)
	}
	return env, nil
}

// storedForm returns env as it is stored: payload (derive's) in place of
// env.Payload, and the decision compacted, which fails when it is not JSON.
func storedForm(env event.Envelope, payload []byte) (event.Envelope, error) {
	if len(env.Decision) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, env.Decision); err != nil {
			return env, err
		}
		env.Decision = buf.Bytes()
	}
	env.Payload = payload
	return env, nil
}

// decodedAs returns what decoding the encoding of env, in its stored form
// (storedForm), gives, or nil when that takes decoding it: a string that
// is not valid UTF-8 is stored with replacement characters.
func decodedAs(env event.Envelope) *event.Envelope {
	for _, s := range []string{env.ID, env.Runtime, env.Kind, env.Host, env.User, env.HookwatchVersion, env.ForkOf, env.Traceparent} {
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
	if x := env.ExitCode; x != nil {
		c := *x
		env.ExitCode = &c
	}
	for _, f := range env.Files {
		if !utf8.ValidString(f.Path) || !utf8.ValidString(f.Hash) {
			return nil
		}
	}
	env.Files = slices.Clone(env.Files) // its own, and nil when empty, as decoded (omitempty)
	if len(env.Files) == 0 {
		env.Files = nil
	}
	if !utf8.Valid(env.Decision) {
		return nil
	}
	env.ReceivedAt = env.ReceivedAt.Round(0) // no monotonic reading, as decoded
	return &env
}

// encodeStored encodes an envelope in its stored form (storedForm), in the
// one encoding of an envelope (event.Envelope.AppendJSON: what json.Marshal
// would write, field for field, as TestMarshalEnvelope holds it to, without
// HTML escaping). It refuses a time json.Marshal refuses; the result is
// valid UTF-8 even when the envelope's strings were not.
func encodeStored(env event.Envelope) (json.RawMessage, error) {
	if y := env.ReceivedAt.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("received_at: year %d outside of [0,9999]", y)
	}
	b := env.AppendJSON(make([]byte, 0, len(env.Payload)+len(env.Decision)+256))
	if !utf8.Valid(b) {
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	return b, nil
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
