package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// The session model (agents, tool calls, lineage, status, counts) is
// computed from the event log by one package and kept by the store as rows,
// so that the query API and the live stream page through it in the database
// instead of decoding a whole session. The store never looks inside a row's
// JSON document: it keeps it as given and indexes only the columns beside it.

// SessionModel is the model of one session id, without its agents and tool
// calls (those are AgentRow and ToolCallRow).
type SessionModel struct {
	SessionID string
	// GroupKey names the sessions lineage can link: the same host, user
	// and project. GroupSessions selects on it.
	GroupKey string
	// Seq is the largest event Seq of the session the model was computed
	// from. The model is stale while Seq is below the session's LastSeq
	// (StaleModels).
	Seq int64
	// Version names the derivation that computed the model
	// (attribution.ModelVersion), which the store only compares: a model
	// of an older version is stale (StaleModels).
	Version int
	// UpdatedSeq is the model position of the latest change to this row,
	// increasing with every write of the model; a stream resumes on it
	// (ChangedSessionModels with UpdatedAfter). The store only compares it.
	UpdatedSeq int64
	// FirstEventAt and LastEventAt bound the session's events as the model
	// saw them. GroupSessions selects on them.
	FirstEventAt time.Time
	LastEventAt  time.Time
	// AliasOf is set for a throwaway session id whose events were folded
	// into that session (a continue, claude -c): the model to show is that
	// session's.
	AliasOf string
	// Project is the project the session is listed under: the one its
	// model names (attribution.Session.Project; an alias's, that of the
	// session it was folded into), else the one its events' transcript
	// path and directory give. SessionFilter.Project selects on it.
	Project string
	// Summary is a JSON object, nil when empty.
	Summary json.RawMessage
}

// AgentRow is one agent of a session's model. The main agent has AgentID "".
type AgentRow struct {
	SessionID string
	AgentID   string
	// ParentAgentID is nil for the main agent, a pointer to "" for a
	// subagent the main agent spawned.
	ParentAgentID *string
	// Depth is 0 for the main agent, 1 for its subagents, and so on.
	Depth     int
	StartedAt time.Time
	// UpdatedSeq is the model position of the row's latest change (see
	// SessionModel.UpdatedSeq).
	UpdatedSeq int64
	// Doc is the agent as a JSON object, nil when empty.
	Doc json.RawMessage
}

// ToolCallRow is one tool call of a session's model.
type ToolCallRow struct {
	SessionID string
	ToolUseID string
	// AgentID is the agent that made the call; "" is the main agent.
	AgentID  string
	ToolName string
	Status   string
	// Subtype and Effect are the call's meaning (package classify:
	// run_test, modify_file …; read_only … destructive), "" when not
	// classified. They are also in Doc; the columns serve the filters.
	Subtype string
	Effect  string
	// StartedAt is when the call started. With SessionID and ToolUseID it
	// is the row's key: the key grows with time, so a new call's entry is
	// written at the end of the key's index, next to the last one, where
	// a key by the random tool use id alone would write a page of that
	// index for each new call.
	StartedAt time.Time
	// MovedFrom are starts the call may have been stored with before (the
	// time of its first event, when its PreToolUse came later and moved
	// its start): the rows at those starts are deleted before this one is
	// written, whether they are stored or not; StartedAt among them is
	// ignored. Listings leave it nil.
	MovedFrom []time.Time
	// UpdatedSeq is the model position of the row's latest change (see
	// SessionModel.UpdatedSeq).
	UpdatedSeq int64
	// Doc is the call as a JSON object, nil when empty.
	Doc json.RawMessage
}

// ModelBatch is a change to the model, applied by PutModel in one
// transaction, in the order of its fields.
type ModelBatch struct {
	// Reset lists sessions whose agent and tool call rows are deleted
	// before the rows below are written: a full rebuild of those sessions.
	// Their SessionModel rows are kept (a rebuild rewrites them). A
	// deleted row leaves no trace for readers following UpdatedAfter, so a
	// writer that resets a session also writes its SessionModel with a new
	// UpdatedSeq, which tells such a reader to read the session again.
	Reset []string
	// Sessions are upserted by SessionID.
	Sessions []SessionModel
	// Agents are upserted by (SessionID, AgentID).
	Agents []AgentRow
	// ToolCalls are upserted by (SessionID, StartedAt, ToolUseID), each
	// after the rows at its MovedFrom are deleted. A call's rows at other
	// starts are kept: the writer, which moves a call's start, names the
	// starts it moves from (or resets the session). A call (SessionID,
	// ToolUseID) given twice is written once, with its last row.
	ToolCalls []ToolCallRow
}

// Empty reports whether b changes nothing.
func (b ModelBatch) Empty() bool {
	return len(b.Reset) == 0 && len(b.Sessions) == 0 && len(b.Agents) == 0 && len(b.ToolCalls) == 0
}

// MaxFilterIDs is the most AgentIDs (or ToolUseIDs) a filter holds; a
// listing returns an error for more.
const MaxFilterIDs = 10000

// ModelOrder is the order of a model listing.
type ModelOrder int

const (
	// ByStart lists a session's rows in the order they started: tool calls
	// by (StartedAt, ToolUseID); agents with the main agent first, then by
	// (StartedAt, AgentID). Without a SessionID the rows come session by
	// session, in SessionID order.
	ByStart ModelOrder = iota
	// ByChange lists rows by (UpdatedSeq, SessionID, then ToolUseID or
	// AgentID), the order a stream resuming after a seq needs: a row that
	// changes while a reader pages moves behind the reader's cursor and is
	// read again with its new state, never skipped.
	ByChange
)

// ToolCallFilter selects a page of tool call rows.
type ToolCallFilter struct {
	// SessionID, when not empty, keeps only that session's calls; "" means
	// every session (the live stream without a session filter).
	SessionID string
	// AgentIDs, when not nil, keeps only calls made by one of those agents
	// (a subtree's ids); an empty non-nil slice matches nothing. It holds
	// at most MaxFilterIDs ids.
	AgentIDs []string
	// ToolUseIDs, when not nil, keeps only the calls with one of those
	// ids (the calls a page of events speaks of); an empty non-nil slice
	// matches nothing. It holds at most MaxFilterIDs ids.
	ToolUseIDs []string
	// Tool and Status, when not empty, keep only calls with that tool name
	// and status.
	Tool   string
	Status string
	// Subtype and Effect, when not empty, keep only calls with that
	// subtype and effect.
	Subtype string
	Effect  string
	// Since, when not zero, keeps only calls started at or after it.
	Since time.Time
	// UpdatedAfter keeps only rows whose UpdatedSeq is greater (0 keeps
	// all): the live stream's resume point.
	UpdatedAfter int64
	Order        ModelOrder
	// Cursor is ToolCallPage.Next of the previous page with the same
	// filter; "" starts at the top.
	Cursor string
	// Limit is the page size: 0 means DefaultLimit, more than MaxLimit
	// means MaxLimit.
	Limit int
}

// ToolCallPage is one page of tool call rows.
type ToolCallPage struct {
	ToolCalls []ToolCallRow
	// Next is the cursor of the following page, "" when no more rows
	// matched at the time of the query.
	Next string
}

// AgentFilter selects a page of agent rows.
type AgentFilter struct {
	// SessionID, when not empty, keeps only that session's agents; ""
	// means every session.
	SessionID string
	// AgentIDs, when not nil, keeps only those agents; an empty non-nil
	// slice matches nothing. It holds at most MaxFilterIDs ids.
	AgentIDs []string
	// UpdatedAfter keeps only rows whose UpdatedSeq is greater (0 keeps
	// all).
	UpdatedAfter int64
	Order        ModelOrder
	// Cursor is AgentPage.Next of the previous page with the same filter;
	// "" starts at the top.
	Cursor string
	// Limit is the page size: 0 means DefaultLimit, more than MaxLimit
	// means MaxLimit.
	Limit int
}

// AgentPage is one page of agent rows.
type AgentPage struct {
	Agents []AgentRow
	// Next is the cursor of the following page, "" when no more rows
	// matched at the time of the query.
	Next string
}

// SessionModelFilter selects a page of session models changed after a seq,
// in (UpdatedSeq, SessionID) order: what a stream reads to learn which
// sessions' models changed since it last looked.
type SessionModelFilter struct {
	// UpdatedAfter keeps only models whose UpdatedSeq is greater (0 keeps
	// all).
	UpdatedAfter int64
	// Users, when not nil, keeps only the models of the sessions of those
	// users (Session.User), as SessionFilter.Users does.
	Users []string
	// Cursor is SessionModelPage.Next of the previous page with the same
	// filter; "" starts at the top.
	Cursor string
	// Limit is the page size: 0 means DefaultLimit, more than MaxLimit
	// means MaxLimit.
	Limit int
}

// SessionModelPage is one page of session models.
type SessionModelPage struct {
	Sessions []SessionModel
	// Next is the cursor of the following page, "" when no more models
	// matched at the time of the query.
	Next string
}

// EventLog is the append-only log of hook events and the per-session
// summaries every insert maintains. Implementations are safe for concurrent
// use; store/storetest.RunEventLog pins the contract down.
type EventLog interface {
	// Insert stores the events whose ID is not stored yet, in one
	// transaction, in slice order, and updates their sessions' summaries.
	// An ID already stored, or repeated within events, is skipped (the
	// first occurrence wins). It sets Seq on every event it stored and
	// leaves Seq 0 on the skipped ones, and returns how many it stored.
	// When it returns an error nothing was stored.
	Insert(ctx context.Context, events []Event) (inserted int, err error)

	// Sessions returns a page of sessions, most recently active first.
	Sessions(ctx context.Context, f SessionFilter) (SessionPage, error)

	// Session returns one session, or ErrNotFound.
	Session(ctx context.Context, id string) (Session, error)

	// Events returns a page of events in increasing Seq order.
	Events(ctx context.Context, f EventFilter) (EventPage, error)

	// LastSeq returns the largest Seq stored, 0 when the store is empty.
	LastSeq(ctx context.Context) (int64, error)
}

// ModelStore keeps the session model as rows written by the one package
// that computes it. It keeps each row's JSON document as given and answers
// from the columns beside it. Implementations are safe for concurrent use;
// store/storetest.RunModelStore pins the contract down.
type ModelStore interface {
	// PutModel applies b in one transaction: a reader sees all of it or
	// none. Rows need not have events or a SessionModel stored: the model
	// is kept apart from the log, and a later PutModel corrects it. It
	// keeps nothing of b once it returns: the caller reuses its room.
	PutModel(ctx context.Context, b ModelBatch) error

	// SessionModels returns the model of each of ids that has one, keyed by
	// session id.
	SessionModels(ctx context.Context, ids []string) (map[string]SessionModel, error)

	// ChangedSessionModels returns a page of session models in
	// (UpdatedSeq, SessionID) order.
	ChangedSessionModels(ctx context.Context, f SessionModelFilter) (SessionModelPage, error)

	// GroupSessions returns the session models of group key whose span
	// [FirstEventAt, LastEventAt] meets [from, to], most recently active
	// first (LastEventAt descending, then SessionID descending), at most
	// limit of them (ClampLimit applies), without their Summary.
	GroupSessions(ctx context.Context, key string, from, to time.Time, limit int) ([]SessionModel, error)

	// StaleModels returns up to limit sessions of the event log
	// (ClampLimit applies) whose model is missing, older than their
	// events (SessionModel.Seq < Session.LastSeq) or of a version before
	// version (SessionModel.Version), in id order after the id after (""
	// starts at the first).
	StaleModels(ctx context.Context, version int, after string, limit int) ([]Session, error)

	// SubagentSession returns the session that has a row for the subagent
	// agentID (the least session id if several do), or ErrNotFound; the
	// main agent ("") is in every session and found in none.
	SubagentSession(ctx context.Context, agentID string) (string, error)

	// Agents returns a page of agent rows.
	Agents(ctx context.Context, f AgentFilter) (AgentPage, error)

	// ToolCalls returns a page of tool call rows.
	ToolCalls(ctx context.Context, f ToolCallFilter) (ToolCallPage, error)
}

// Cursor kinds of the model listings; see ModelCursor.
const (
	CallsByStart   = 'c'
	CallsByChange  = 'k'
	AgentsByStart  = 'a'
	AgentsByChange = 'g'
	ModelsByChange = 'm'
)

// ModelCursor is the position a model listing continues after: the sort key
// of the last row of a page. Key is the row's StartedAt (Unix nanoseconds)
// in ByStart order and its UpdatedSeq in ByChange order; Main is set for the
// main agent, which ByStart lists first.
type ModelCursor struct {
	Key       int64
	Main      bool
	SessionID string
	ID        string
}

// Encode returns the cursor of kind (CallsByStart, …) as an opaque string.
func (c ModelCursor) Encode(kind byte) string {
	b := []byte{kind}
	if c.Main {
		b = append(b, '!')
	}
	b = strconv.AppendInt(b, c.Key, 10)
	b = strconv.AppendQuote(append(b, ' '), c.SessionID)
	b = strconv.AppendQuote(append(b, ' '), c.ID)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseModelCursor returns the position a cursor of kind continues after; ok
// is false for "" (start at the top). A cursor of another kind is
// ErrInvalidCursor.
func ParseModelCursor(kind byte, s string) (c ModelCursor, ok bool, err error) {
	if s == "" {
		return ModelCursor{}, false, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 2 || b[0] != kind {
		return ModelCursor{}, false, ErrInvalidCursor
	}
	rest := string(b[1:])
	if r, found := strings.CutPrefix(rest, "!"); found {
		c.Main, rest = true, r
	}
	key, rest, found := strings.Cut(rest, " ")
	if !found {
		return ModelCursor{}, false, ErrInvalidCursor
	}
	if c.Key, err = strconv.ParseInt(key, 10, 64); err != nil {
		return ModelCursor{}, false, ErrInvalidCursor
	}
	for i, dst := range []*string{&c.SessionID, &c.ID} {
		if i > 0 {
			if rest, found = strings.CutPrefix(rest, " "); !found {
				return ModelCursor{}, false, ErrInvalidCursor
			}
		}
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return ModelCursor{}, false, ErrInvalidCursor
		}
		if *dst, err = strconv.Unquote(q); err != nil {
			return ModelCursor{}, false, ErrInvalidCursor
		}
		rest = rest[len(q):]
	}
	if rest != "" {
		return ModelCursor{}, false, ErrInvalidCursor
	}
	return c, true, nil
}

// EachAgent calls fn with every agent row f selects, page after page from
// f.Cursor, until the last page or an error (fn's is returned as it is).
func EachAgent(ctx context.Context, ms ModelStore, f AgentFilter, fn func(AgentRow) error) error {
	for {
		page, err := ms.Agents(ctx, f)
		if err != nil {
			return err
		}
		for _, r := range page.Agents {
			if err := fn(r); err != nil {
				return err
			}
		}
		if f.Cursor = page.Next; f.Cursor == "" || len(page.Agents) == 0 {
			return nil
		}
	}
}

// EachToolCall calls fn with every tool call row f selects, page after
// page from f.Cursor, until the last page or an error (fn's is returned as
// it is).
func EachToolCall(ctx context.Context, ms ModelStore, f ToolCallFilter, fn func(ToolCallRow) error) error {
	for {
		page, err := ms.ToolCalls(ctx, f)
		if err != nil {
			return err
		}
		for _, r := range page.ToolCalls {
			if err := fn(r); err != nil {
				return err
			}
		}
		if f.Cursor = page.Next; f.Cursor == "" || len(page.ToolCalls) == 0 {
			return nil
		}
	}
}
