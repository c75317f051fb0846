package collector

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/classify"
	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/shell"
	"github.com/hookwatch/hookwatch/store"
)

// SessionView is a session as GET /v1/sessions and GET /v1/sessions/{id}
// show it: the store's summary of its events, and the session model
// (package attribution) computed from them. The model's fields are zero
// until the session's events are first applied; DerivedSeq says which
// events they reflect. The session list writes it by hand
// (appendListed), byte for byte as encoding/json does.
type SessionView struct {
	store.Session
	// Title is the first prompt of the main agent (else the client's
	// session title).
	Title string `json:"title"`
	// Model and PermissionMode are the latest the session reported;
	// Source is the start source of its latest run (startup, resume,
	// clear, fork).
	Model          string `json:"model"`
	PermissionMode string `json:"permission_mode"`
	Source         string `json:"source"`
	// EndedAt and EndReason are set when the session's latest run ended
	// with SessionEnd.
	EndedAt   *time.Time `json:"ended_at"`
	EndReason string     `json:"end_reason"`
	// Project is the client's project directory name (attribution.Project);
	// ProjectName its name for people (claudecode.ProjectName).
	Project     string `json:"project"`
	ProjectName string `json:"project_name"`
	// Status is attribution.SessionRunning, SessionEnded, SessionFailed or
	// SessionBackground (waiting on background subagents).
	Status string `json:"status"`
	// Effort is the main agent's latest effort level; Resume the figures
	// the latest resume or fork reported (attribution.Session.Resume).
	Effort string                   `json:"effort,omitempty"`
	Resume *attribution.ResumeStats `json:"resume,omitempty"`
	// ParentSessionID is the session this one continues and Lineage how:
	// attribution.LineageFork, LineageClear, LineageCompact,
	// LineageSubagent for a virtual session, "" for a root. A resume or a
	// continue (-c) keeps the session id: it shows as a run, not as
	// lineage.
	ParentSessionID string   `json:"parent_session_id"`
	Lineage         string   `json:"lineage"`
	ChildSessionIDs []string `json:"child_session_ids"`
	// AliasSessionIDs are the throwaway ids of continues folded into this
	// session; AliasOf, on such a throwaway id, names the session.
	AliasSessionIDs []string `json:"alias_session_ids"`
	AliasOf         string   `json:"alias_of,omitempty"`
	Phantom         bool     `json:"phantom,omitempty"`
	// Probe marks a session of hookwatch's own check (event.IsProbe:
	// doctor's round trip), which the session list leaves out.
	Probe       bool                     `json:"probe,omitempty"`
	Runs        []attribution.Run        `json:"runs"`
	Compactions []attribution.Compaction `json:"compactions"`
	Counts      attribution.Counts       `json:"counts"`
	// Usage is the tokens and cost of all the session's agents, and Turns
	// per prompt (attribution.Session.Usage, Turns), from imported
	// transcripts; absent before any.
	Usage *attribution.Usage      `json:"usage,omitempty"`
	Turns []attribution.TurnUsage `json:"turns,omitempty"`
	// Shape is how the session split its work among agents
	// (attribution.Shape); absent from a model stored before shapes.
	Shape *attribution.Shape `json:"shape,omitempty"`
	// Tools are its calls per tool (attribution.Session.Tools); absent
	// from a virtual session.
	Tools []attribution.ToolCounts `json:"tools,omitempty"`
	// DerivedSeq is the last_seq of the session the model was computed
	// at: it is current when it equals last_seq.
	DerivedSeq int64 `json:"derived_seq"`
	// ModelSeq is the model position of this view: a stream of the session
	// resumed with Last-Event-ID "<last_seq>:<model_seq>" sends exactly
	// the changes after it.
	ModelSeq int64 `json:"model_seq"`
	// AgentID and Agent are set on a virtual session (sub--<agent_id>).
	AgentID *string            `json:"agent_id,omitempty"`
	Agent   *attribution.Agent `json:"agent,omitempty"`
}

// AgentsResponse is the body of GET /v1/sessions/{id}/agents: the main
// agent (agent_id "") first, then the subagents by start. For a virtual
// session, the subagent and those it spawned, at any depth.
type AgentsResponse struct {
	Agents []json.RawMessage `json:"agents"`
	// NextCursor continues the listing; "" on the last page.
	NextCursor string `json:"next_cursor"`
	DerivedSeq int64  `json:"derived_seq"`
	ModelSeq   int64  `json:"model_seq"` // as SessionView.ModelSeq
}

// ToolCallsResponse is the body of GET /v1/sessions/{id}/tool-calls: the
// calls by start, then tool_use_id.
type ToolCallsResponse struct {
	ToolCalls  []json.RawMessage `json:"tool_calls"`
	NextCursor string            `json:"next_cursor"`
	DerivedSeq int64             `json:"derived_seq"`
	ModelSeq   int64             `json:"model_seq"` // as SessionView.ModelSeq
}

// decodeSummary decodes a stored session summary; nil for none.
func decodeSummary(raw json.RawMessage) *attribution.Session {
	if len(raw) == 0 {
		return nil
	}
	var s attribution.Session
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return &s
}

// listedProject is the project a session is listed under (SessionView,
// the list's project filter): the one its model names (an alias's, that of
// the session it was folded into), else the one the stored session's
// transcript path and directory give, for a session whose main agent gave
// neither (a capture of its subagents' events alone).
func listedProject(modelProject string, sess store.Session) string {
	return cmp.Or(modelProject, attribution.Project(sess.TranscriptPath, sess.CWD))
}

// view builds a SessionView from a stored session and its model (zero when
// none); target is the model of the session an alias was folded into, when
// sess is one.
func view(sess store.Session, sm, target store.SessionModel) SessionView {
	v := SessionView{Session: sess, Status: attribution.SessionRunning, DerivedSeq: sm.Seq, ModelSeq: max(sm.UpdatedSeq, target.UpdatedSeq),
		Probe: event.IsProbe(sess.ID)}
	v.AliasOf = sm.AliasOf
	sum := sm.Summary
	if sm.AliasOf != "" {
		sum = target.Summary
	}
	if s := decodeSummary(sum); s != nil {
		if s.Status != "" {
			v.Status = s.Status
		}
		v.Project = s.Project
		v.Model, v.PermissionMode, v.EndedAt, v.EndReason = s.Model, s.PermissionMode, s.EndedAt, s.EndReason
		v.Effort, v.Resume = s.Effort, s.Resume
		if n := len(s.Runs); n > 0 {
			v.Source = s.Runs[n-1].Source
		}
		if sm.AliasOf == "" {
			v.Title = s.Title
			v.ParentSessionID, v.Lineage = s.ParentSessionID, s.Lineage
			v.ChildSessionIDs, v.AliasSessionIDs, v.Phantom = s.ChildSessionIDs, s.AliasSessionIDs, s.Phantom
			v.Runs, v.Compactions, v.Counts = s.Runs, s.Compactions, s.Counts
			v.Usage, v.Turns, v.Shape, v.Tools = s.Usage, s.Turns, s.Shape, s.Tools
		}
	}
	v.Project = listedProject(v.Project, sess)
	v.ProjectName = claudecode.ProjectName(v.Project, sess.CWD)
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

// sessionAsOf returns sess read again when its model m reflects events
// past it: a round of the model stored between the two reads. So an answer
// never shows a derived_seq past its last_seq (a session's last_seq only
// grows).
func (s *Server) sessionAsOf(ctx context.Context, sess store.Session, m store.SessionModel) (store.Session, error) {
	if m.Seq <= sess.LastSeq {
		return sess, nil
	}
	return s.store.Session(ctx, sess.ID)
}

// modelFor returns a session's model, first waiting (bounded) for events of
// it not applied yet. A session not modelled yet has a zero model.
func (s *Server) modelFor(ctx context.Context, id string) (store.SessionModel, error) {
	m, err := s.storedModel(ctx, id)
	if err != nil {
		return m, err
	}
	if s.modeler.wait(ctx, id, m.GroupKey) {
		return s.storedModel(ctx, id)
	}
	return m, nil
}

// storedModel is modelFor without waiting: the model as stored now.
func (s *Server) storedModel(ctx context.Context, id string) (store.SessionModel, error) {
	ms, err := s.store.SessionModels(ctx, []string{id})
	if err != nil {
		return store.SessionModel{}, err
	}
	if m, ok := ms[id]; ok {
		return m, nil
	}
	return store.SessionModel{SessionID: id}, nil
}

// resolved is what a session id in a path stands for.
type resolved struct {
	sess store.Session
	// own is the session's model; data is the model to show: its own, or
	// for a throwaway id folded into a session, that session's.
	own, data store.SessionModel
	// agent is set for a virtual session: the subagent, in sess (its
	// parent session); agents are then all of sess's agents.
	agent  *attribution.Agent
	agents []*attribution.Agent
}

// modelSessionID is the session whose model rows r shows: data's, or the
// path's own session while no model of it is stored yet.
func (r resolved) modelSessionID() string {
	if r.data.SessionID != "" {
		return r.data.SessionID
	}
	return r.sess.ID
}

// resolve finds the session a path names, waiting (bounded) for what hooks
// handed over through the spool to be stored and for events not applied
// yet: a stored session id, a throwaway id folded into a session,
// or a virtual session sub--<agent_id>. It returns store.ErrNotFound for
// none, and ErrForbidden for a session the request's principal may not
// read (auth.go): every endpoint of a session goes through it.
func (s *Server) resolve(ctx context.Context, id string) (resolved, error) {
	return s.resolveAs(ctx, id, true)
}

// resolveStored is resolve without waiting: the models as stored now.
func (s *Server) resolveStored(ctx context.Context, id string) (resolved, error) {
	return s.resolveAs(ctx, id, false)
}

// resolveAs is resolve, waiting or not.
func (s *Server) resolveAs(ctx context.Context, id string, wait bool) (resolved, error) {
	r, err := s.resolveAny(ctx, id, wait)
	if p, ok := principalOf(ctx); err == nil && ok && !p.sees(r.sess.User) {
		return resolved{}, ErrForbidden
	}
	return r, err
}

// resolveAny is resolveAs for every principal.
func (s *Server) resolveAny(ctx context.Context, id string, wait bool) (resolved, error) {
	model := s.storedModel
	if wait {
		model = s.modelFor
		// An http hook answered a moment ago may be in the spool, not yet
		// in the store: a read of its session sees it all the same.
		s.flushSpool(ctx)
	}
	sess, err := s.store.Session(ctx, id)
	if err == nil {
		m, err := model(ctx, id)
		if err != nil {
			return resolved{}, err
		}
		// Waiting for the model, the session may have had more events.
		if sess, err = s.sessionAsOf(ctx, sess, m); err != nil {
			return resolved{}, err
		}
		r := resolved{sess: sess, own: m, data: m}
		if m.AliasOf != "" {
			t, err := model(ctx, m.AliasOf)
			if err != nil {
				return resolved{}, err
			}
			r.data = t
		}
		return r, nil
	}
	refs, virtual := attribution.VirtualRefs(id)
	if !errors.Is(err, store.ErrNotFound) || !virtual {
		return resolved{}, err
	}
	for _, ref := range refs {
		parent := ref.SessionID
		if parent == "" {
			// sub--<agent_id>: the session that has the agent.
			parent, err = s.store.SubagentSession(ctx, ref.AgentID)
			if errors.Is(err, store.ErrNotFound) && wait && s.modeler.wait(ctx, "", "") {
				// Its session may have been waiting for its first update.
				parent, err = s.store.SubagentSession(ctx, ref.AgentID)
			}
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return resolved{}, err
			}
		}
		// A session that is not there is not found, as one without the
		// agent: resolveAgent reads the session first.
		r, err := s.resolveAgent(ctx, parent, ref.AgentID, model)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		return r, err
	}
	return resolved{}, fmt.Errorf("subagent %q: %w", id, store.ErrNotFound)
}

// resolveAgent is resolveAny of the subagent agentID of session parent,
// through model (stored or waited for); store.ErrNotFound when there is
// no such session, or it has no such agent.
func (s *Server) resolveAgent(ctx context.Context, parent, agentID string, model func(context.Context, string) (store.SessionModel, error)) (resolved, error) {
	sess, err := s.store.Session(ctx, parent)
	if err != nil {
		return resolved{}, err
	}
	m, err := model(ctx, parent)
	if err != nil {
		return resolved{}, err
	}
	agents, err := s.modeler.stored.agents(ctx, parent)
	if err != nil {
		return resolved{}, err
	}
	for _, a := range agents {
		if a.AgentID == agentID {
			return resolved{sess: sess, own: m, data: m, agent: a, agents: agents}, nil
		}
	}
	// Modelled again since the lookup, without the agent, or never had it.
	return resolved{}, fmt.Errorf("agent %q: %w", agentID, store.ErrNotFound)
}

// virtualView is the view of a subagent as a session of its own.
func virtualView(r resolved) SessionView {
	parent := decodeSummary(r.own.Summary)
	if parent == nil {
		parent = &attribution.Session{SessionID: r.sess.ID}
	}
	vs := attribution.VirtualSession(parent, r.agents, r.agent)
	v := SessionView{
		Session: r.sess, Title: vs.Title, Project: vs.Project, Status: vs.Status,
		ParentSessionID: vs.ParentSessionID, Lineage: vs.Lineage,
		ChildSessionIDs: []string{}, AliasSessionIDs: []string{}, Runs: []attribution.Run{},
		Compactions: []attribution.Compaction{}, Counts: vs.Counts, DerivedSeq: r.own.Seq, ModelSeq: r.own.UpdatedSeq, Agent: r.agent,
	}
	v.ID, v.TranscriptPath = vs.SessionID, vs.TranscriptPath
	v.AgentID = &r.agent.AgentID
	v.FirstEventAt, v.LastEventAt, v.EndedAt, v.EventCount = vs.StartedAt, vs.LastEventAt, vs.EndedAt, int64(vs.Counts.Events)
	v.Model = vs.Model
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

func (s *Server) handleAgents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := modelLimit(q)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	res, err := s.resolve(r.Context(), r.PathValue("id"))
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	f := store.AgentFilter{SessionID: res.modelSessionID(), Cursor: q.Get("cursor"), Limit: limit}
	if res.agent != nil {
		f.AgentIDs = []string{}
		for _, a := range attribution.Subtree(res.agents, res.agent.AgentID) {
			f.AgentIDs = append(f.AgentIDs, a.AgentID)
		}
	}
	page, err := s.store.Agents(r.Context(), f)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, AgentsResponse{Agents: docsOf(page.Agents, func(a store.AgentRow) json.RawMessage { return a.Doc }),
		NextCursor: page.Next, DerivedSeq: res.own.Seq, ModelSeq: res.data.UpdatedSeq})
}

// handleToolCalls is GET /v1/sessions/{id}/tool-calls: a page of the calls
// by start, filtered by agent_id, tool, status, subtype, effect and since (RFC 3339: calls
// started at or after it) in the database. A virtual session lists its
// subagent's own calls. A status, effect or subtype outside
// attribution.Statuses, shell.Effects or classify.Subtypes is refused (400).
func (s *Server) handleToolCalls(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := modelLimit(q)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	f := store.ToolCallFilter{Tool: q.Get("tool"), Status: q.Get("status"), Subtype: q.Get("subtype"), Effect: q.Get("effect"),
		Cursor: q.Get("cursor"), Limit: limit}
	// A status or effect no call can have is a mistake (status=failed),
	// not a filter that matches nothing.
	if err := oneOf("status", f.Status, attribution.Statuses()); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := oneOf("effect", shell.Effect(f.Effect), shell.Effects()); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := oneOf("subtype", f.Subtype, classify.Subtypes()); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if v := q.Get("since"); v != "" {
		if f.Since, err = time.Parse(time.RFC3339Nano, v); err != nil {
			msg := fmt.Sprintf("since must be an RFC 3339 time such as 2026-05-01T12:00:00Z, got %q", v)
			if strings.Contains(v, " ") {
				// A query reads an unescaped + as a space: that of an
				// offset (+02:00) is the likeliest.
				msg += ": write a + in a query as %2B"
			}
			writeError(w, http.StatusBadRequest, msg)
			return
		}
	}
	res, err := s.resolve(r.Context(), r.PathValue("id"))
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	f.SessionID = res.modelSessionID()
	switch {
	case res.agent != nil && q.Has("agent_id") && q.Get("agent_id") != res.agent.AgentID:
		f.AgentIDs = []string{}
	case res.agent != nil:
		f.AgentIDs = []string{res.agent.AgentID}
	case q.Has("agent_id"):
		f.AgentIDs = []string{q.Get("agent_id")}
	}
	page, err := s.store.ToolCalls(r.Context(), f)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ToolCallsResponse{ToolCalls: docsOf(page.ToolCalls, func(c store.ToolCallRow) json.RawMessage { return c.Doc }),
		NextCursor: page.Next, DerivedSeq: res.own.Seq, ModelSeq: res.data.UpdatedSeq})
}

// oneOf checks the value of the filter name: "" (no filter) or one of
// valid.
func oneOf[T ~string](name string, v T, valid []T) error {
	if v == "" || slices.Contains(valid, v) {
		return nil
	}
	names := make([]string, len(valid))
	for i, x := range valid {
		names[i] = string(x)
	}
	return fmt.Errorf("%s must be one of %s, got %q", name, strings.Join(names, ", "), v)
}

// modelLimit reads the limit of a listing of a session's model rows
// (agents, tool calls): absent is the largest page, store.MaxLimit, rather
// than the store's default, since most sessions then fit in one.
func modelLimit(q url.Values) (int, error) {
	limit, err := parseLimit(q)
	if err == nil && limit == 0 {
		limit = store.MaxLimit
	}
	return limit, err
}

// docsOf returns the stored documents of a page of model rows, [] (not
// null) for none.
func docsOf[R any](rows []R, doc func(R) json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(rows))
	for _, r := range rows {
		out = append(out, doc(r))
	}
	return out
}

// virtualEvents resolves the path of GET /v1/sessions/{id}/events: a
// virtual session lists its parent's events of that agent. It returns the
// filter's session and agent, and store.ErrNotFound when neither a session
// nor a subagent has the id.
func (s *Server) virtualEvents(ctx context.Context, id string) (sessionID string, agentID *string, err error) {
	if _, ok := attribution.VirtualRefs(id); !ok {
		s.flushSpool(ctx) // as resolve does
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
