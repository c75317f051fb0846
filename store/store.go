// Package store holds the domain types hookwatch keeps about hook events and
// sessions, and the interfaces every storage backend implements: the event
// log (EventLog) and the session model computed from it (ModelStore).
//
// Backends live in subpackages named after their dependency (store/sqlite,
// later store/postgres) and all pass the conformance suites in
// store/storetest, one per interface, which is where the contract below is
// pinned down.
//
// The envelope of every event is kept whole, so the model (agent trees, tool
// calls, lineage) can be rebuilt from stored events; the indexed columns here
// are only what the query API filters on.
package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hookwatch/hookwatch/event"
	"strconv"
	"strings"
	"time"
)

// ErrNotFound is returned when the requested object does not exist.
var ErrNotFound = errors.New("not found")

// ErrInvalidCursor is returned by the paging methods when a cursor was not
// made by this package (edited, truncated, or from another listing).
var ErrInvalidCursor = errors.New("invalid cursor")

// Paging limits shared by every backend.
const (
	// DefaultLimit is the page size when a filter's Limit is 0.
	DefaultLimit = 100
	// MaxLimit is the largest page a backend returns; larger limits are
	// clamped to it.
	MaxLimit = 1000
)

// Event is one stored hook event: the envelope as delivered plus the fields
// the query API filters on, derived from its payload by FromEnvelope.
type Event struct {
	// Seq is assigned by the store when the event is first inserted. It
	// increases in ingest order (not in event time) and never repeats, which
	// makes it the cursor of the event stream.
	Seq int64 `json:"seq"`
	// ID is the envelope id (a UUIDv7 made by the hook); a store keeps at
	// most one event per ID.
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	// Runtime is the agent runtime (event.RuntimeClaudeCode, event.RuntimeCodex).
	Runtime string `json:"runtime"`
	// Kind is the envelope kind: event.KindHook, event.KindStatusLine,
	// event.KindRollout or event.KindTranscript.
	Kind string `json:"kind"`
	// Event is the hook event name (event.PreToolUse, …, event.StatusLine),
	// "" when the payload names none.
	Event string `json:"event"`
	// AgentID is the subagent that fired the event; "" is the main agent.
	AgentID string `json:"agent_id"`
	// AgentType is nil when the payload had no agent_type; a pointer to ""
	// is the compaction agent, which is a different thing.
	AgentType *string `json:"agent_type"`
	ToolName  string  `json:"tool_name,omitempty"`
	ToolUseID string  `json:"tool_use_id,omitempty"`
	PromptID  string  `json:"prompt_id,omitempty"`
	// Time is when the hook read the payload (the envelope's received_at).
	Time time.Time `json:"time"`
	// Envelope is the whole envelope as JSON: an object with the fields of
	// event.Envelope, the payload included.
	Envelope json.RawMessage `json:"envelope"`

	// Facts is what the event tells about its session. FromEnvelope fills
	// it and Insert folds it into the session summary; backends do not
	// store it per event, so events read back have it zero.
	Facts SessionFacts `json:"-"`
	// Decoded is Envelope decoded, as FromEnvelope made it, for a reader
	// in the same process that would otherwise decode Envelope again; nil
	// on events read back, and when FromEnvelope could not tell.
	Decoded *event.Envelope `json:"-"`
	// Payload, when not nil, is event.Decode of Decoded.Payload, as the
	// collector's admission decoded it, possibly without its map of
	// members (Raw nil, event.Payload.DropRaw: what the collector's
	// admission hands on); nil on events read back.
	Payload *event.Payload `json:"-"`
}

// SessionFacts is what one event says about its session; empty strings say
// nothing.
type SessionFacts struct {
	CWD            string
	TranscriptPath string
	Host           string
	User           string
}

// Session is what the event log keeps for each session id, updated by every
// inserted event of that session: where its events come from and how many
// there are. What the session is — its title, model, status, end — is the
// session model's (package attribution), computed in one place whatever the
// order the events arrived in.
type Session struct {
	ID string `json:"id"`
	// Runtime is the runtime of the session's first stored event.
	Runtime string `json:"runtime"`
	// CWD and TranscriptPath are the latest non-empty values the session's
	// events carried, which name its project (the group lineage links in)
	// before its model exists. "Latest" is by event time, decided per
	// insert batch: a batch whose newest event is older than the session's
	// last event only fills values still empty.
	CWD            string `json:"cwd"`
	TranscriptPath string `json:"transcript_path"`
	// Host and User are where the session's first stored event came from.
	Host string `json:"host"`
	User string `json:"user"`
	// FirstEventAt and LastEventAt are the earliest and latest event times.
	FirstEventAt time.Time `json:"first_event_at"`
	LastEventAt  time.Time `json:"last_event_at"`
	// EventCount is the number of distinct events stored for the session,
	// records read from Codex rollouts and Claude Code transcripts aside
	// (SessionDelta.Count).
	EventCount int64 `json:"event_count"`
	// LastSeq is the Seq of the session's latest inserted event.
	LastSeq int64 `json:"last_seq"`
}

// SessionFilter selects a page of sessions, most recently active first
// (LastEventAt descending, then ID descending).
type SessionFilter struct {
	// Runtime, when not empty, keeps only sessions of that runtime.
	Runtime string
	// Project, when not empty, keeps only the sessions whose model names
	// that project (SessionModel.Project): a session not modelled yet is
	// in no project.
	Project string
	// Probes includes the sessions of hookwatch's own checks
	// (event.IsProbe), which the list leaves out by default.
	Probes bool
	// Users, when not nil, keeps only the sessions of those users
	// (Session.User); an empty non-nil slice matches nothing. It holds at
	// most MaxFilterIDs users.
	Users []string
	// Cursor is SessionPage.Next of the previous page; "" starts at the top.
	Cursor string
	// Limit is the page size: 0 means DefaultLimit, more than MaxLimit
	// means MaxLimit.
	Limit int
}

// SessionPage is one page of sessions.
type SessionPage struct {
	Sessions []Session
	// Next is the cursor of the following page, "" when this page is the last.
	Next string
}

// EventFilter selects a page of events in Seq order.
type EventFilter struct {
	// SessionID, when not empty, keeps only that session's events; "" means
	// every session (what the live stream replays).
	SessionID string
	// AgentID, when not nil, keeps only the events of that agent; a pointer
	// to "" selects the main agent.
	AgentID *string
	// Event, when not empty, keeps only events with that name.
	Event string
	// Tool, when not empty, keeps only events with that tool_name.
	Tool string
	// ToolUseIDs, when not nil, keeps only the events of those calls (by
	// tool_use_id), and PromptIDs those of those prompts (by prompt_id);
	// an empty slice matches nothing. Each holds at most MaxFilterIDs ids.
	ToolUseIDs []string
	PromptIDs  []string
	// IDs, when not nil, keeps only the events of those envelope ids
	// (Event.ID); an empty slice matches nothing. It holds at most
	// MaxFilterIDs ids.
	IDs []string
	// Users, when not nil, keeps only the events of the sessions of those
	// users (Session.User), as SessionFilter.Users does.
	Users []string
	// Cursor is EventPage.Next of the previous page, or EventCursor(seq) to
	// start after a known Seq; "" starts at the first event.
	Cursor string
	// Limit is the page size: 0 means DefaultLimit, more than MaxLimit
	// means MaxLimit.
	Limit int
}

// EventPage is one page of events.
type EventPage struct {
	Events []Event
	// Next is the cursor of the following page, "" when no more events
	// matched at the time of the query. A caller following a live store
	// keeps the cursor of the last event it saw instead (EventCursor).
	Next string
}

// Store is what a storage backend implements: the event log and the
// session model. Implementations are safe for concurrent use.
type Store interface {
	EventLog
	ModelStore

	// Close releases the store. Calls after Close fail.
	Close() error
}

// ClampLimit returns the page size a filter's limit stands for.
func ClampLimit(limit int) int {
	switch {
	case limit <= 0:
		return DefaultLimit
	case limit > MaxLimit:
		return MaxLimit
	}
	return limit
}

// Cursors are opaque to API clients but shared by every backend, so that a
// client can move between a collector's backends and the live stream can
// turn a Seq into a cursor. They are base64 (URL alphabet) of a short text
// form with a one-letter kind, so a cursor of one listing is rejected by
// another.

// EventCursor returns the cursor that continues an event listing after seq.
func EventCursor(seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("e" + strconv.FormatInt(seq, 10)))
}

// ParseEventCursor returns the seq an event cursor continues after; "" is 0.
func ParseEventCursor(c string) (int64, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 2 || b[0] != 'e' {
		return 0, ErrInvalidCursor
	}
	seq, err := strconv.ParseInt(string(b[1:]), 10, 64)
	if err != nil || seq < 0 {
		return 0, ErrInvalidCursor
	}
	return seq, nil
}

// SessionCursor returns the cursor that continues a session listing after
// the session with the given last event time and id.
func SessionCursor(lastEventAt time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString(
		[]byte("s" + strconv.FormatInt(lastEventAt.UnixNano(), 10) + ":" + id))
}

// ParseSessionCursor returns the position a session cursor continues after.
// ok is false for "" (start at the top).
func ParseSessionCursor(c string) (lastEventAt time.Time, id string, ok bool, err error) {
	if c == "" {
		return time.Time{}, "", false, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 3 || b[0] != 's' {
		return time.Time{}, "", false, ErrInvalidCursor
	}
	ts, id, found := strings.Cut(string(b[1:]), ":")
	if !found {
		return time.Time{}, "", false, ErrInvalidCursor
	}
	ns, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return time.Time{}, "", false, ErrInvalidCursor
	}
	return time.Unix(0, ns).UTC(), id, true, nil
}

// ValidationError reports why an envelope cannot be stored.
type ValidationError struct {
	// Field is the envelope field at fault ("id", "payload", …).
	Field string
	Err   error
}

func (e *ValidationError) Error() string { return fmt.Sprintf("%s: %v", e.Field, e.Err) }

func (e *ValidationError) Unwrap() error { return e.Err }

// Shared is implemented by a backend that several collectors may use at
// once (store/postgres): each process commits its own events, and learns of
// the others' through Watch; one of them at a time holds the lease of the
// session model (Lead), which only that one computes and writes.
type Shared interface {
	// Watch calls changed whenever another process (or this one) may have
	// committed events or model rows, with the UpdatedSeq of a model write
	// (0 for events), until ctx ends. It also calls changed(0) after each
	// (re)connection, since what was committed while it was not listening
	// is not announced: callers read what is new from their own position.
	Watch(ctx context.Context, changed func(modelSeq int64))
	// Lead blocks until this process holds the model lease, or ctx ends
	// (then it returns ctx's error). The lease is held until the returned
	// channel is closed: when ctx ends or the lease cannot be kept (the
	// connection holding it broke), and then another process may take it.
	// waiting, when not nil, is called at most once per call, when Lead
	// finds the lease held by another process and waits for it.
	Lead(ctx context.Context, waiting func()) (lost <-chan struct{}, err error)
}

// Migrated is implemented by a backend whose Open brings the database's
// schema up to date, so that a collector can say what an upgrade did.
type Migrated interface {
	// Migrated returns the schema version Open found (0: a new
	// database), the one it left, and how long the migrations took.
	Migrated() (from, to int, took time.Duration)
}

// Retention is implemented by a backend that can forget old data, whole
// sessions at a time: a session's events, its summary and its model rows go
// together, so that what is left is consistent.
type Retention interface {
	// PruneSessions deletes, in one transaction, up to limit sessions
	// (ClampLimit applies) whose latest event is older than before, the
	// least recently active first, and up to limit events older than
	// before that belong to no session. It returns how many sessions and
	// events it deleted; 0 sessions and 0 events means nothing is left
	// to prune before that time.
	PruneSessions(ctx context.Context, before time.Time, limit int) (sessions, events int, err error)
	// Prunable returns how many sessions and events PruneSessions would
	// delete before that time, all its batches together, deleting
	// nothing: what a dry run says.
	Prunable(ctx context.Context, before time.Time) (sessions, events int, err error)
}

// Sizer is implemented by a backend that can tell how much of its storage
// its data takes, for a size cap.
type Sizer interface {
	// UsedBytes returns the bytes the stored data takes, not counting
	// space freed by deletes and kept for reuse.
	UsedBytes(ctx context.Context) (int64, error)
}
