package collector

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/store"
)

// SessionView is a session as GET /v1/sessions and GET /v1/sessions/{id}
// show it: the store's summary of its events, and what attribution derived
// from them. The derived fields are zero until the session's first
// derivation; DerivedSeq says which events they reflect.
type SessionView struct {
	store.Session
	// Title is the first prompt of the main agent (else the client's
	// session title).
	Title string `json:"title"`
	// Project is the client's project directory name (attribution.Project).
	Project string `json:"project"`
	// Status is StatusRunning, StatusEnded or StatusFailed.
	Status string `json:"status"`
	// ParentSessionID is the session this one continues and Lineage how:
	// attribution.LineageFork, LineageClear, LineageCompact, "subagent"
	// for a virtual session, "" for a root. A resume or a continue (-c)
	// keeps the session id: it shows as a run, not as lineage.
	ParentSessionID string   `json:"parent_session_id"`
	Lineage         string   `json:"lineage"`
	ChildSessionIDs []string `json:"child_session_ids"`
	// AliasSessionIDs are the throwaway ids of continues folded into this
	// session; AliasOf, on such a throwaway id, names the session.
	AliasSessionIDs []string                 `json:"alias_session_ids"`
	AliasOf         string                   `json:"alias_of,omitempty"`
	Phantom         bool                     `json:"phantom,omitempty"`
	Runs            []attribution.Run        `json:"runs"`
	Compactions     []attribution.Compaction `json:"compactions"`
	Counts          attribution.Counts       `json:"counts"`
	// DerivedSeq is the last_seq of the session the derived fields were
	// computed at: they are current when it equals last_seq.
	DerivedSeq int64 `json:"derived_seq"`
	// AgentID and Agent are set on a virtual session (sub--<agent_id>).
	AgentID *string            `json:"agent_id,omitempty"`
	Agent   *attribution.Agent `json:"agent,omitempty"`
}

// AgentsResponse is the body of GET /v1/sessions/{id}/agents: the main
// agent (agent_id "") first, then the subagents by start. For a virtual
// session, the subagent and those it spawned, at any depth.
type AgentsResponse struct {
	Agents     []json.RawMessage `json:"agents"`
	DerivedSeq int64             `json:"derived_seq"`
}

// ToolCallsResponse is the body of GET /v1/sessions/{id}/tool-calls: the
// calls by start, then tool_use_id.
type ToolCallsResponse struct {
	ToolCalls  []json.RawMessage `json:"tool_calls"`
	NextCursor string            `json:"next_cursor"`
	DerivedSeq int64             `json:"derived_seq"`
}

// view builds a SessionView from a stored session and its derived state
// (zero when none); target is the derived state of the session an alias
// was folded into, when sess is one.
func view(sess store.Session, d, target store.Derived) SessionView {
	v := SessionView{Session: sess, Title: sess.Title, Status: StatusRunning, DerivedSeq: d.Seq}
	if sess.EndedAt != nil {
		v.Status = StatusEnded
	}
	v.AliasOf = d.AliasOf
	sum := d.Summary
	if d.AliasOf != "" {
		sum = target.Summary
	}
	var s derivedSummary
	if len(sum) > 0 && json.Unmarshal(sum, &s) == nil && s.Session != nil {
		if s.Status != "" {
			v.Status = s.Status
		}
		v.Project = s.Project
		if d.AliasOf == "" {
			if s.Title != "" {
				v.Title = s.Title
			}
			v.ParentSessionID, v.Lineage = s.ParentSessionID, s.Lineage
			v.ChildSessionIDs, v.AliasSessionIDs, v.Phantom = s.ChildSessionIDs, s.AliasSessionIDs, s.Phantom
			v.Runs, v.Compactions, v.Counts = s.Runs, s.Compactions, s.Counts
		}
	}
	if v.Project == "" {
		v.Project = attribution.Project(sess.TranscriptPath, sess.CWD)
	}
	if v.ChildSessionIDs == nil {
		v.ChildSessionIDs = []string{}
	}
	if v.AliasSessionIDs == nil {
		v.AliasSessionIDs = []string{}
	}
	if v.Runs == nil {
		v.Runs = []attribution.Run{}
	}
	if v.Compactions == nil {
		v.Compactions = []attribution.Compaction{}
	}
	return v
}

// sessionViews adds the derived state to a page of sessions, without
// waiting for pending rebuilds.
func (s *Server) sessionViews(ctx context.Context, sessions []store.Session) ([]SessionView, error) {
	ids := make([]string, len(sessions))
	for i, sess := range sessions {
		ids[i] = sess.ID
	}
	ds, err := s.store.DerivedSummaries(ctx, ids)
	if err != nil {
		return nil, err
	}
	var targets []string
	for _, d := range ds {
		if _, ok := ds[d.AliasOf]; d.AliasOf != "" && !ok {
			targets = append(targets, d.AliasOf)
		}
	}
	if len(targets) > 0 {
		more, err := s.store.DerivedSummaries(ctx, targets)
		if err != nil {
			return nil, err
		}
		for id, d := range more {
			ds[id] = d
		}
	}
	out := make([]SessionView, len(sessions))
	for i, sess := range sessions {
		d := ds[sess.ID]
		out[i] = view(sess, d, ds[d.AliasOf])
	}
	return out, nil
}

// derivedFor returns a session's derived state, first waiting (bounded)
// for a pending rebuild of it. A session not derived yet has a zero state.
func (s *Server) derivedFor(ctx context.Context, id string) (store.Derived, error) {
	d, err := s.store.Derived(ctx, id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return d, err
	}
	if s.deriver.wait(ctx, id, d.GroupKey) {
		// A rebuild was pending; read what it left.
		d, err = s.store.Derived(ctx, id)
	}
	if errors.Is(err, store.ErrNotFound) {
		return store.Derived{SessionID: id}, nil
	}
	return d, err
}

// resolved is what a session id in a path stands for.
type resolved struct {
	sess store.Session
	// own is the session's derived state; data is the state to show: its
	// own, or for a throwaway id folded into a session, that session's.
	own, data store.Derived
	// agent is set for a virtual session: the subagent, in sess (its
	// parent session).
	agent *attribution.Agent
}

// resolve finds the session a path names, waiting (bounded) for a pending
// rebuild: a stored session id, a throwaway id folded into a session, or a
// virtual session sub--<agent_id>. It returns store.ErrNotFound for none.
func (s *Server) resolve(ctx context.Context, id string) (resolved, error) {
	sess, err := s.store.Session(ctx, id)
	if err == nil {
		d, err := s.derivedFor(ctx, id)
		if err != nil {
			return resolved{}, err
		}
		r := resolved{sess: sess, own: d, data: d}
		if d.AliasOf != "" {
			t, err := s.derivedFor(ctx, d.AliasOf)
			if err != nil {
				return resolved{}, err
			}
			r.data = t
		}
		return r, nil
	}
	agentID, virtual := strings.CutPrefix(id, VirtualPrefix)
	if !errors.Is(err, store.ErrNotFound) || !virtual || agentID == "" {
		return resolved{}, err
	}
	parent, err := s.store.AgentSession(ctx, agentID)
	if errors.Is(err, store.ErrNotFound) && s.deriver.wait(ctx, "", "") {
		// Its session may have been waiting for its first derivation.
		parent, err = s.store.AgentSession(ctx, agentID)
	}
	if err != nil {
		return resolved{}, err
	}
	if sess, err = s.store.Session(ctx, parent); err != nil {
		return resolved{}, err
	}
	d, err := s.derivedFor(ctx, parent)
	if err != nil {
		return resolved{}, err
	}
	var agents []*attribution.Agent
	if len(d.Agents) > 0 {
		if err := json.Unmarshal(d.Agents, &agents); err != nil {
			return resolved{}, fmt.Errorf("cannot decode the agents of session %q: %w", parent, err)
		}
	}
	for _, a := range agents {
		if a != nil && a.AgentID == agentID {
			return resolved{sess: sess, own: d, data: d, agent: a}, nil
		}
	}
	// Derived again since the lookup, without the agent.
	return resolved{}, fmt.Errorf("agent %q: %w", agentID, store.ErrNotFound)
}

// virtualView is the view of a subagent as a session of its own.
func virtualView(r resolved) SessionView {
	a := r.agent
	parent := view(r.sess, r.own, store.Derived{})
	v := SessionView{
		Session: r.sess, Project: parent.Project, ParentSessionID: r.sess.ID, Lineage: "subagent",
		ChildSessionIDs: []string{}, AliasSessionIDs: []string{}, Runs: []attribution.Run{},
		Compactions: []attribution.Compaction{}, DerivedSeq: r.own.Seq, Agent: a,
	}
	v.ID = VirtualPrefix + a.AgentID
	v.AgentID = &a.AgentID
	v.Title = a.Description
	if v.Title == "" && a.AgentType != nil {
		v.Title = *a.AgentType
	}
	v.FirstEventAt, v.EndedAt, v.EndReason, v.EventCount = a.StartedAt, a.StoppedAt, "", int64(a.Events)
	if a.StoppedAt != nil {
		v.LastEventAt = *a.StoppedAt
	}
	v.Status = StatusRunning
	if a.StoppedAt != nil {
		v.Status = StatusEnded
	}
	tree := subtree(r.own.Agents, a.AgentID)
	v.Counts = attribution.Counts{Events: a.Events, Agents: len(tree), Subagents: len(tree) - 1}
	for _, c := range decodeCalls(r.own.ToolCalls) {
		if c.AgentID != a.AgentID {
			continue
		}
		v.Counts.ToolCalls++
		switch c.Status {
		case attribution.StatusError, attribution.StatusInterrupted:
			v.Counts.Failures++
		case attribution.StatusDenied:
			v.Counts.Denials++
		case attribution.StatusRejected:
			v.Counts.Rejected++
		}
		if c.StartedAt.After(v.LastEventAt) {
			v.LastEventAt = c.StartedAt
		}
	}
	return v
}

func (s *Server) handleSessionView(w http.ResponseWriter, r *http.Request) {
	res, err := s.resolve(r.Context(), r.PathValue("id"))
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	if res.agent != nil {
		writeJSON(w, http.StatusOK, virtualView(res))
		return
	}
	writeJSON(w, http.StatusOK, view(res.sess, res.own, res.data))
}

// agentEntry is what the API reads of an agent to select it.
type agentEntry struct {
	raw           json.RawMessage
	AgentID       string  `json:"agent_id"`
	ParentAgentID *string `json:"parent_agent_id"`
}

// subtree returns the agents of the JSON array list that are root or
// descend from it, in list order.
func subtree(list json.RawMessage, root string) []agentEntry {
	var raws []json.RawMessage
	_ = json.Unmarshal(list, &raws)
	all := make([]agentEntry, 0, len(raws))
	for _, raw := range raws {
		var a agentEntry
		if json.Unmarshal(raw, &a) == nil {
			a.raw = raw
			all = append(all, a)
		}
	}
	in := map[string]bool{root: true}
	// Parents start before their children, so one pass in list order
	// would do; passes until nothing changes also cover a broken order.
	for changed := true; changed; {
		changed = false
		for _, a := range all {
			if !in[a.AgentID] && a.ParentAgentID != nil && in[*a.ParentAgentID] && a.AgentID != "" {
				in[a.AgentID], changed = true, true
			}
		}
	}
	var out []agentEntry
	for _, a := range all {
		if in[a.AgentID] {
			out = append(out, a)
		}
	}
	return out
}

func (s *Server) handleAgents(w http.ResponseWriter, r *http.Request) {
	res, err := s.resolve(r.Context(), r.PathValue("id"))
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	body := AgentsResponse{Agents: []json.RawMessage{}, DerivedSeq: res.own.Seq}
	if res.agent != nil {
		for _, a := range subtree(res.data.Agents, res.agent.AgentID) {
			body.Agents = append(body.Agents, a.raw)
		}
	} else if len(res.data.Agents) > 0 {
		if err := json.Unmarshal(res.data.Agents, &body.Agents); err != nil {
			s.storeError(w, r, fmt.Errorf("cannot decode the agents of session %q: %w", res.sess.ID, err))
			return
		}
	}
	writeJSON(w, http.StatusOK, body)
}

// callEntry is what the API reads of a tool call to select and page it.
type callEntry struct {
	raw       json.RawMessage
	ToolUseID string    `json:"tool_use_id"`
	AgentID   string    `json:"agent_id"`
	ToolName  string    `json:"tool_name"`
	Status    string    `json:"status"`
	StartedAt time.Time `json:"started_at"`
}

func decodeCalls(list json.RawMessage) []callEntry {
	var raws []json.RawMessage
	_ = json.Unmarshal(list, &raws)
	out := make([]callEntry, 0, len(raws))
	for _, raw := range raws {
		var c callEntry
		if json.Unmarshal(raw, &c) == nil {
			c.raw = raw
			out = append(out, c)
		}
	}
	return out
}

// Tool call cursors continue after a call's (started_at, tool_use_id),
// the order of the listing, so a page boundary holds when the calls are
// derived again between two pages.
func callCursor(c callEntry) string {
	return base64.RawURLEncoding.EncodeToString([]byte("c" + strconv.FormatInt(c.StartedAt.UnixNano(), 10) + ":" + c.ToolUseID))
}

func parseCallCursor(cur string) (time.Time, string, bool, error) {
	if cur == "" {
		return time.Time{}, "", false, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cur)
	if err != nil || len(b) < 2 || b[0] != 'c' {
		return time.Time{}, "", false, store.ErrInvalidCursor
	}
	ts, id, ok := strings.Cut(string(b[1:]), ":")
	ns, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil {
		return time.Time{}, "", false, store.ErrInvalidCursor
	}
	return time.Unix(0, ns), id, true, nil
}

func (s *Server) handleToolCalls(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := parseLimit(q)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if limit == 0 || limit > store.MaxLimit {
		limit = store.MaxLimit
	}
	afterAt, afterID, paged, err := parseCallCursor(q.Get("cursor"))
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	res, err := s.resolve(r.Context(), r.PathValue("id"))
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	keep := func(c callEntry) bool {
		if res.agent != nil && c.AgentID != res.agent.AgentID {
			return false
		}
		if q.Has("agent_id") && c.AgentID != q.Get("agent_id") {
			return false
		}
		if v := q.Get("status"); v != "" && c.Status != v {
			return false
		}
		if v := q.Get("tool"); v != "" && c.ToolName != v {
			return false
		}
		if paged {
			if c.StartedAt.Before(afterAt) || c.StartedAt.Equal(afterAt) && c.ToolUseID <= afterID {
				return false
			}
		}
		return true
	}
	body := ToolCallsResponse{ToolCalls: []json.RawMessage{}, DerivedSeq: res.own.Seq}
	var last callEntry
	for _, c := range decodeCalls(res.data.ToolCalls) {
		if !keep(c) {
			continue
		}
		if len(body.ToolCalls) == limit {
			// More follow: continue after the last call returned.
			body.NextCursor = callCursor(last)
			break
		}
		body.ToolCalls = append(body.ToolCalls, c.raw)
		last = c
	}
	writeJSON(w, http.StatusOK, body)
}

// virtualEvents resolves the path of GET /v1/sessions/{id}/events: a
// virtual session lists its parent's events of that agent. It returns the
// filter's session and agent, whether the id was virtual, and
// store.ErrNotFound when neither a session nor a subagent has the id.
func (s *Server) virtualEvents(ctx context.Context, id string) (sessionID string, agentID *string, err error) {
	agent, ok := strings.CutPrefix(id, VirtualPrefix)
	if !ok || agent == "" {
		return id, nil, nil
	}
	if _, err := s.store.Session(ctx, id); err == nil {
		return id, nil, nil // a real session with such an id
	}
	res, err := s.resolve(ctx, id)
	if err != nil {
		return "", nil, err
	}
	return res.sess.ID, &res.agent.AgentID, nil
}
