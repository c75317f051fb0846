package collector

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
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
// that made calls or raised a signal, its signals (attribution.SignalsAt:
// those of the events and, at the collector's clock, a stall) and its run
// of failures. Truncated is set when the session has more calls than were
// read (the first 50,000).
type SignalsResponse struct {
	Agents     []attribution.AgentSignals `json:"agents"`
	Thresholds SignalThresholds           `json:"thresholds"`
	Truncated  bool                       `json:"truncated"`
	DerivedSeq int64                      `json:"derived_seq"`
}

// SignalThresholds are the thresholds a signals answer used, named and
// written as the query parameters that set them (signalParams): counts,
// a factor, and durations as Go durations ("5m0s").
type SignalThresholds struct {
	FailedRepeats   int     `json:"failed_repeats"`
	ReadRepeats     int     `json:"read_repeats"`
	ThrashSwitches  int     `json:"thrash_switches"`
	OutlierFactor   float64 `json:"outlier_factor"`
	OutlierSiblings int     `json:"outlier_siblings"`
	OutlierCalls    int     `json:"outlier_calls"`
	OutlierDuration string  `json:"outlier_duration"`
	StalledAfter    string  `json:"stalled_after"`
}

// SignalThresholdsOf is th as the signals API writes it.
func SignalThresholdsOf(th attribution.Thresholds) SignalThresholds {
	return SignalThresholds{
		FailedRepeats: th.FailedRepeats, ReadRepeats: th.ReadRepeats, ThrashSwitches: th.ThrashSwitches,
		OutlierFactor: th.OutlierFactor, OutlierSiblings: th.OutlierSiblings, OutlierCalls: th.OutlierCalls,
		OutlierDuration: th.OutlierDuration.String(), StalledAfter: th.StalledAfter.String(),
	}
}

// handleSignals is GET /v1/sessions/{id}/signals: the signs that an agent
// of the session is going wrong, read by attribution from the session's
// agents and calls as the model stored them and, for a stall, the
// collector's clock now (attribution.SignalsAt). The thresholds default to
// the server's (Config.Signals); the query can set each (signalParams).
// A virtual session (a subagent) shows that agent's signals, read with
// its whole session.
func (s *Server) handleSignals(w http.ResponseWriter, r *http.Request) {
	th, err := signalParams(r.URL.Query(), s.cfg.Signals)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	res, err := s.resolve(r.Context(), r.PathValue("id"))
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	m := res.data
	m.SessionID = res.modelSessionID()
	body := SignalsResponse{Thresholds: SignalThresholdsOf(th), DerivedSeq: res.own.Seq}
	// A virtual session's agents were read to resolve it: not again.
	if body.Agents, body.Truncated, err = s.readSignals(r.Context(), m, res.agents, th); err != nil {
		s.storeError(w, r, err)
		return
	}
	if res.agent != nil {
		body.Agents = slices.DeleteFunc(body.Agents, func(a attribution.AgentSignals) bool { return a.AgentID != res.agent.AgentID })
	}
	writeJSON(w, http.StatusOK, body)
}

// signalQuery are the parameters signalParams reads, which GET
// /v1/sessions/{id}/signals takes.
var signalQuery = []string{"failed_repeats", "read_repeats", "thrash_switches", "outlier_siblings", "outlier_calls",
	"outlier_factor", "outlier_duration", "stalled_after"}

// signalParams reads the thresholds a query sets over th: counts
// (failed_repeats, read_repeats, thrash_switches, outlier_siblings,
// outlier_calls) from 1 to 1000, outlier_factor from 1 to 1000, and
// durations (outlier_duration, stalled_after) as Go durations from 1s to
// 30 days.
func signalParams(q url.Values, th attribution.Thresholds) (attribution.Thresholds, error) {
	for _, p := range []struct {
		name string
		into *int
	}{{"failed_repeats", &th.FailedRepeats}, {"read_repeats", &th.ReadRepeats}, {"thrash_switches", &th.ThrashSwitches},
		{"outlier_siblings", &th.OutlierSiblings}, {"outlier_calls", &th.OutlierCalls}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1000 {
				return th, fmt.Errorf("%s must be a count from 1 to 1000, got %q", p.name, v)
			}
			*p.into = n
		}
	}
	if v := q.Get("outlier_factor"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 1 && f <= 1000) {
			return th, fmt.Errorf("outlier_factor must be a number from 1 to 1000, got %q", v)
		}
		th.OutlierFactor = f
	}
	for _, p := range []struct {
		name string
		into *time.Duration
	}{{"outlier_duration", &th.OutlierDuration}, {"stalled_after", &th.StalledAfter}} {
		if v := q.Get(p.name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < time.Second || d > 30*24*time.Hour {
				return th, fmt.Errorf("%s must be a duration from 1s to 720h, got %q", p.name, v)
			}
			*p.into = d
		}
	}
	return th, nil
}

// readSignals reads the signals of the session m is the model of, read by
// attribution from its agents (those given when the caller read them
// already, else the stored ones) and its first maxSignalCalls calls, at the
// server's now.
func (s *Server) readSignals(ctx context.Context, m store.SessionModel, agents []*attribution.Agent, th attribution.Thresholds) (signals []attribution.AgentSignals, truncated bool, err error) {
	sess := decodeSummary(m.Summary)
	if sess == nil {
		sess = &attribution.Session{SessionID: m.SessionID}
	}
	if agents == nil {
		if agents, err = s.modeler.stored.agents(ctx, m.SessionID); err != nil {
			return nil, false, err
		}
	}
	calls, truncated, err := s.modeler.stored.calls(ctx, m.SessionID, maxSignalCalls)
	if err != nil {
		return nil, false, err
	}
	return attribution.SignalsAt(sess, agents, calls, s.cfg.Now(), th), truncated, nil
}

// PolicySignals is the policy.SignalSource of this server: the signals of
// a session's agents with the server's thresholds, once what hooks handed
// over through the spool is committed and the session's committed events
// are applied to the model (waiting at most policySignalWait). A session the store does not know yet has none. The
// event being decided is not in the model yet, so a stall it reads is the
// one this event ends: the session had waited that long before it.
func (s *Server) PolicySignals(ctx context.Context, sessionID string) ([]attribution.AgentSignals, error) {
	if sessionID == "" {
		return nil, nil
	}
	wctx, cancel := context.WithTimeout(ctx, policySignalWait)
	defer cancel()
	// The session's latest hooks may still be in the spool: stored first,
	// they are applied to the model below.
	s.flushSpool(wctx)
	m, err := s.modelFor(wctx, sessionID)
	if err != nil && ctx.Err() == nil && wctx.Err() == nil {
		return nil, err
	}
	if m.AliasOf != "" {
		if m, err = s.modelFor(wctx, m.AliasOf); err != nil && ctx.Err() == nil && wctx.Err() == nil {
			return nil, err
		}
	}
	if m.SessionID == "" {
		m.SessionID = sessionID
	}
	agents, _, err := s.readSignals(ctx, m, nil, s.cfg.Signals)
	return agents, err
}
