package collector

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/store"
)

// maxSignalCalls bounds the calls the signals of a session are read from.
const maxSignalCalls = 50000

// policySignalWait bounds how long a policy's question waits for events of
// its session not applied to the model yet: the agent waits meanwhile.
const policySignalWait = 500 * time.Millisecond

// SignalsResponse is the body of GET /v1/sessions/{id}/signals: per agent
// that made calls, its signals (attribution.Signals) and its run of
// failures. Truncated is set when the session has more calls than were
// read (the first 50,000).
type SignalsResponse struct {
	Agents     []attribution.AgentSignals `json:"agents"`
	Thresholds attribution.Thresholds     `json:"thresholds"`
	Truncated  bool                       `json:"truncated"`
	DerivedSeq int64                      `json:"derived_seq"`
}

// handleSignals is GET /v1/sessions/{id}/signals?failed_repeats=&read_repeats=&thrash_switches=:
// the signs that an agent of the session is going wrong, read by
// attribution from the session's calls as the model stored them. The
// thresholds default to the server's (Config.Signals).
func (s *Server) handleSignals(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	th := s.cfg.Signals
	for _, p := range []struct {
		name string
		into *int
	}{{"failed_repeats", &th.FailedRepeats}, {"read_repeats", &th.ReadRepeats}, {"thrash_switches", &th.ThrashSwitches}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1000 {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("%s must be a count from 1 to 1000, got %q", p.name, v))
				return
			}
			*p.into = n
		}
	}
	res, err := s.resolve(r.Context(), r.PathValue("id"))
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	f := store.ToolCallFilter{SessionID: res.data.SessionID, Limit: store.MaxLimit}
	if f.SessionID == "" {
		f.SessionID = res.sess.ID
	}
	if res.agent != nil {
		f.AgentIDs = []string{res.agent.AgentID}
	}
	body := SignalsResponse{Thresholds: th, DerivedSeq: res.own.Seq}
	if body.Agents, body.Truncated, err = s.readSignals(r.Context(), f, th); err != nil {
		s.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// readSignals reads the calls f selects (at most about maxSignalCalls)
// and the signals attribution reads from them.
func (s *Server) readSignals(ctx context.Context, f store.ToolCallFilter, th attribution.Thresholds) (agents []attribution.AgentSignals, truncated bool, err error) {
	var calls []*attribution.ToolCall
	for {
		page, err := s.store.ToolCalls(ctx, f)
		if err != nil {
			return nil, false, err
		}
		for _, row := range page.ToolCalls {
			c := new(attribution.ToolCall)
			if json.Unmarshal(row.Doc, c) == nil {
				calls = append(calls, c)
			}
		}
		if page.Next == "" {
			break
		}
		if len(calls) >= maxSignalCalls {
			truncated = true
			break
		}
		f.Cursor = page.Next
	}
	return attribution.Signals(calls, th), truncated, nil
}

// PolicySignals is the policy.SignalSource of this server: the signals of
// a session's agents with the server's thresholds, once the session's
// committed events are applied to the model (waiting at most
// policySignalWait). A session the store does not know yet has none.
func (s *Server) PolicySignals(ctx context.Context, sessionID string) ([]attribution.AgentSignals, error) {
	if sessionID == "" {
		return nil, nil
	}
	wctx, cancel := context.WithTimeout(ctx, policySignalWait)
	defer cancel()
	m, err := s.modelFor(wctx, sessionID)
	if err != nil && ctx.Err() == nil && wctx.Err() == nil {
		return nil, err
	}
	if m.AliasOf != "" {
		sessionID = m.AliasOf
	}
	agents, _, err := s.readSignals(ctx, store.ToolCallFilter{SessionID: sessionID, Limit: store.MaxLimit}, s.cfg.Signals)
	return agents, err
}
