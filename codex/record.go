package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

// Record is one line of a rollout: {"timestamp","ordinal","type","payload"}.
type Record struct {
	Timestamp time.Time       `json:"timestamp"`
	Ordinal   *int64          `json:"ordinal"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// RecordSessionMeta is the Type of a rollout's first record, which says
// what the thread is (Meta).
const RecordSessionMeta = "session_meta"

// Meta is what a session_meta record's payload says of its thread.
type Meta struct {
	// ID is the thread's id; SessionID its root session's (a subagent's
	// thread is its own, within its root's session).
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	CWD       string `json:"cwd"`
	// Parent is the thread that spawned a subagent's thread (Codex also
	// writes it inside Source).
	Parent string `json:"parent_thread_id"`
	// ForkedFrom is the session a fork was made of (thread/fork,
	// codex fork); "" for a thread that is not a fork.
	ForkedFrom string `json:"forked_from_id"`
	// Source is what started the thread: a name ("cli", "exec", "vscode",
	// …) or an object naming a subagent's spawn.
	Source json.RawMessage `json:"source"`
	// Nickname is the name Codex shows for a subagent's thread
	// ("Maxwell"), which the spawn call's response gives too; "" for a
	// session's own thread. Codex also writes it inside Source.
	Nickname string `json:"agent_nickname"`
}

// A record's envelope and a session_meta's payload are read with
// jsonscan rather than encoding/json: a session_meta record carries
// Codex's whole base instructions (some 20 KB) that nothing reads, and a
// listing of sessions reads the session_meta of every rollout — four
// passes of encoding/json over them cost ~0.45 ms a rollout, these two
// ~0.07 ms. Each reads what encoding/json would (the last of a repeated
// key, null as it treats it) and refuses what it would refuse (a value
// of the wrong type), but for keys, which must be written as Codex writes
// them (encoding/json also takes "Type" for "type"); FuzzDecodeRecord
// holds them to it.

// DecodeRecord reads a rollout line's record; its payload is a slice of
// line.
func DecodeRecord(line []byte) (rec Record, ok bool) {
	ok = true
	_, valid := jsonscan.Members(line, func(key, val []byte) {
		null := string(val) == "null"
		var err error
		switch string(jsonscan.Name(key)) {
		case "timestamp":
			err = rec.Timestamp.UnmarshalJSON(val)
		case "ordinal":
			var n int64
			switch err = json.Unmarshal(val, &n); {
			case null:
				rec.Ordinal = nil
			case err == nil:
				rec.Ordinal = &n
			}
		case "type":
			if s, good := jsonscan.Unquote(val); good {
				rec.Type = s
			} else if !null {
				err = errNotString
			}
		case "payload":
			rec.Payload = val
		}
		if err != nil {
			ok = false
		}
	})
	return rec, valid && ok
}

// DecodeMeta reads the members of a session_meta record's payload that
// Meta has; the others are not read, whatever their type.
func DecodeMeta(payload []byte) (m Meta, ok bool) {
	if !bytes.HasPrefix(bytes.TrimLeft(payload, " \t\r\n"), []byte("{")) {
		return m, json.Unmarshal(payload, &m) == nil // refused as encoding/json refuses it
	}
	ok = true
	_, valid := jsonscan.Members(payload, func(key, val []byte) {
		var dst *string
		switch string(jsonscan.Name(key)) {
		case "id":
			dst = &m.ID
		case "session_id":
			dst = &m.SessionID
		case "cwd":
			dst = &m.CWD
		case "parent_thread_id":
			dst = &m.Parent
		case "forked_from_id":
			dst = &m.ForkedFrom
		case "agent_nickname":
			dst = &m.Nickname
		case "source":
			m.Source = append(json.RawMessage(nil), val...)
			return
		default:
			return
		}
		if string(val) == "null" {
			return
		}
		s, good := jsonscan.Unquote(val)
		ok = ok && good
		*dst = s
	})
	return m, valid && ok
}

// errNotString is a record's type that is not a string.
var errNotString = errors.New("not a string")
